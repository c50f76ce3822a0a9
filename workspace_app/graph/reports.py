"""Extractive community reports and document summaries, every sentence quoted from a real chunk.

A report names its key entities (most connected inside the community first), its strongest relations,
and 2-4 sentences that name several key entities at once, each taken from a chunk that is evidence for
those relations. A document summary holds the document's key entities (frequent in it, rarer elsewhere) and
the sentences naming most of them.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from workspace_app.models.graph import ChunkInfo, CommunityReport, DocumentSummary, Relation, ReportSentence
from workspace_app.text.cjk import has_cjk
from workspace_app.text.sentences import is_caption, split_sentences

KEY_ENTITIES = 8
KEY_RELATIONS = 8
MAX_SENTENCES = 4
_MIN_SENTENCE, _MAX_SENTENCE = 40, 400
_GLOSSARY = re.compile(r"\bindicates\b|search (words|terms)|\bkeywords?\b", re.IGNORECASE)
_TERMINAL = frozenset(".。!！?？;；")
ChunkLoader = Callable[[Sequence[str]], Mapping[str, ChunkInfo]]


@dataclass(frozen=True)
class EntityView:
    """What reports need to know of an entity: name, type, mentions and surface forms."""

    name: str
    type: str
    mentions: int
    surfaces: tuple[str, ...]


def community_report(
    community_id: int, members: Sequence[str], graph: nx.Graph, entities: Mapping[str, EntityView],
    relations: Mapping[tuple[str, str], Relation], load_chunks: ChunkLoader, parent: int | None = None,
) -> CommunityReport:
    """The extractive level-0 report of one community."""
    inside = graph.subgraph(members).copy()  # networkx views filter every lookup: copy once
    ranked = sorted(members, key=lambda e: (-inside.degree(e, weight="weight"), -entities[e].mentions, e))
    key = ranked[:KEY_ENTITIES]
    strongest = sorted(inside.edges(data="weight"), key=lambda edge: (-edge[2], edge[0], edge[1]))[:KEY_RELATIONS]
    chosen = [relations[_pair(a, b)] for a, b, _ in strongest if _pair(a, b) in relations]
    evidence = list(dict.fromkeys(c for r in chosen for c in r.chunk_ids[:3]))[:24]
    sentences = pick_sentences(evidence, [entities[e] for e in key], load_chunks)
    title = ", ".join(entities[e].name for e in key[:3])
    chunk_ids = tuple(dict.fromkeys([*(s.chunk_id for s in sentences), *evidence]))[:20]
    return CommunityReport(
        id=community_id, level=0, parent=parent, title=title, entity_ids=tuple(key), relations=tuple(chosen),
        sentences=tuple(sentences), summary=report_text(title, key, chosen, sentences, entities),
        chunk_ids=chunk_ids, size=len(members), rank=round(sum(w for _, _, w in inside.edges(data="weight")), 3),
    )


def parent_report(community_id: int, children: Sequence[CommunityReport], entities: Mapping[str, EntityView]) -> CommunityReport:
    """A level-1 report grouping level-0 communities: their key entities, relations and best sentences."""
    ordered = sorted(children, key=lambda r: -r.rank)
    key = sorted({e for r in ordered for e in r.entity_ids}, key=lambda e: (-entities[e].mentions, e))[:KEY_ENTITIES]
    chosen = sorted((rel for r in ordered for rel in r.relations), key=lambda rel: -rel.weight)[:KEY_RELATIONS]
    sentences = [r.sentences[0] for r in ordered if r.sentences][:MAX_SENTENCES]
    title = ", ".join(entities[e].name for e in key[:3])
    return CommunityReport(
        id=community_id, level=1, parent=None, title=title, entity_ids=tuple(key), relations=tuple(chosen),
        sentences=tuple(sentences), summary=report_text(title, key, chosen, sentences, entities),
        chunk_ids=tuple(dict.fromkeys(c for r in ordered for c in r.chunk_ids))[:20],
        size=sum(r.size for r in ordered), rank=round(sum(r.rank for r in ordered), 3),
    )


def pick_sentences(chunk_ids: Sequence[str], key: Sequence[EntityView], load_chunks: ChunkLoader) -> list[ReportSentence]:
    """Up to four sentences naming the most key entities, at most one per chunk, best first."""
    chunks = load_chunks(chunk_ids)
    scored = []
    for order, chunk_id in enumerate(chunk_ids):
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        best = _best_sentence(chunk.text, key)
        if best is not None:
            scored.append((-best[0], order, ReportSentence(best[1], chunk_id)))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [sentence for _, _, sentence in scored[:MAX_SENTENCES]]


def _best_sentence(text: str, key: Sequence[EntityView]) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for span in split_sentences(text):
        quoted = text[span.start : span.end]  # as written in the chunk, so the chunk text contains it
        longest = _MAX_SENTENCE // 2 if has_cjk(quoted) else _MAX_SENTENCE
        if not _MIN_SENTENCE // (2 if has_cjk(quoted) else 1) <= len(quoted) <= longest:
            continue
        if is_caption(quoted) or _is_list(quoted):
            continue
        # Entities named, then a whole sentence (ends with punctuation) over a table row run together.
        score = 2 * sum(1 for entity in key if _names(span.text, entity)) + (quoted[-1] in _TERMINAL)
        if score >= 2 and (best is None or score > best[0]):
            best = (score, quoted)
    return best


def _is_list(sentence: str) -> bool:
    """Keyword lists, abbreviation glossaries and table rows run together are not sentences to quote."""
    digits = sum(ch.isdigit() for ch in sentence)
    if has_cjk(sentence):
        glossary = sentence.count("为") >= 3 or "证据级别" in sentence
        return sentence.rstrip()[-1] not in "。！？；" or glossary or digits * 8 > len(sentence)
    words = len(sentence.split())
    separators = sentence.count(",") + sentence.count(";")
    fragment = not (sentence[0].isupper() or sentence[0].isdigit())
    return fragment or separators * 4 > words or digits * 8 > len(sentence) or _GLOSSARY.search(sentence) is not None


def _names(sentence: str, entity: EntityView) -> bool:
    lowered = sentence.lower()
    return any(form.lower() in lowered for form in entity.surfaces if len(form) >= 2)


def report_text(
    title: str, key: Sequence[str], relations: Sequence[Relation], sentences: Sequence[ReportSentence],
    entities: Mapping[str, EntityView],
) -> str:
    """Readable extractive text of a report."""
    names = "; ".join(f"{entities[e].name} ({entities[e].type})" for e in key)
    links = "; ".join(f"{entities[r.source].name} – {entities[r.target].name}" for r in relations[:5] if r.source in entities and r.target in entities)
    lines = [f"{title}.", f"Key entities: {names}."]
    if links:
        lines.append(f"Strongest relations: {links}.")
    lines.extend(s.text for s in sentences)
    return "\n".join(lines)


def document_summaries(
    chunk_mentions: Mapping[str, Mapping[str, Mapping[str, int]]], entities: Mapping[str, EntityView],
    load_chunks: ChunkLoader,
) -> list[DocumentSummary]:
    """A summary per document: key entities by tf-idf over documents and the sentences naming most of them.

    `chunk_mentions`: document id -> chunk id -> entity id -> mentions.
    """
    counts: dict[str, dict[str, int]] = {}
    for document_id, chunks in chunk_mentions.items():
        totals: dict[str, int] = defaultdict(int)
        for per_chunk in chunks.values():
            for entity_id, count in per_chunk.items():
                totals[entity_id] += count
        counts[document_id] = totals
    documents_with: dict[str, int] = defaultdict(int)
    for totals in counts.values():
        for entity_id in totals:
            documents_with[entity_id] += 1
    summaries = []
    for document_id, totals in sorted(counts.items()):
        idf = {e: math.log(1 + len(counts) / documents_with[e]) for e in totals}
        key = sorted(totals, key=lambda e: (-totals[e] * idf[e], e))[:10]
        hits = {c: sum(1 for e in key if e in per_chunk) for c, per_chunk in chunk_mentions[document_id].items()}
        best_chunks = sorted(hits, key=lambda c: (-hits[c], c))[:8]
        sentences = pick_sentences(best_chunks, [entities[e] for e in key], load_chunks)[:3]
        text = " ".join(" ".join(s.text.split()) for s in sentences)
        summaries.append(DocumentSummary(document_id, text, tuple(key), tuple(s.chunk_id for s in sentences)))
    return summaries


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)
