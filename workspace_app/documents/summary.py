"""A document's extractive summary and key topics by centrality over embeddings (LexRank), in any language.

    body chunks (no back matter) -> chunk centrality: LexRank over the cosine graph of the chunks' vectors (the
        ones the index holds: the embedder reads them back from its cache)
    the most central chunks -> candidate sentences: whole sentences that may be quoted (`text.quotable`: no
        fragment, reference entry, caption, legend or running head), ending in a full stop, opening on no
        connective, label or title run into them, not a grading line; shown without reference markers or a
        fused section number
    candidates -> LexRank over their own cosine graph -> MMR picks central sentences unlike the ones already
        picked; shown in reading order
    the graph's entities of the document -> key topics: ranked by the centrality of the chunks that mention
        them, each named as the document writes it (an English name or a Chinese alias)

Front matter (author lists, affiliations, copyright and licence lines, working-group lines) and disclaimers are
left out by the centrality itself: they share little with the rest of the document, so they sit at the edge of
its similarity graph, and the sentence checks drop the ones shaped like reference entries or headers.

SEE: Erkan & Radev 2004, "LexRank: Graph-based Lexical Centrality as Salience in Text Summarization"
(https://arxiv.org/abs/1109.2128); Carbonell & Goldstein 1998, "The Use of MMR, Diversity-Based Reranking"
(https://doi.org/10.1145/290941.291025).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from workspace_app.ingest.pipeline import embedding_text
from workspace_app.models.documents import Chunk
from workspace_app.models.graph import Entity
from workspace_app.text.cjk import has_cjk
from workspace_app.text.grades import states_grading
from workspace_app.text.language import detect_language
from workspace_app.text.quotable import quotable
from workspace_app.text.sentences import ends_in_grade_cells, split_sentences
from workspace_app.text.source_markers import without_source_markers

# Unit vectors of texts (the workspace's embedder: its cache holds the chunks' vectors already).
Embed = Callable[[Sequence[str]], np.ndarray]

SUMMARY_SENTENCES = 3
SUMMARY_MAX_CHARS = 700
CENTRAL_CHUNKS = 40  # the chunks whose sentences compete for the summary (sentences are embedded: keep it small)
DAMPING = 0.85
MMR_LAMBDA = 0.7  # centrality against redundancy (Carbonell & Goldstein's lambda)
REPEAT = 0.9  # cosine at which a sentence repeats one chosen before
MAX_TOPICS = 6
_LENGTH = {False: (50, 400), True: (18, 200)}  # characters of an English or a Chinese summary sentence
_BULLETS = "•·▪●○■□–—* "
_CUT_BEFORE_END = tuple("~～–-/(（")  # "…疗程至1~。": the text after the mark was lost on the page
_LABEL_CHARS = 12
_FULL_STOPS = tuple(".!。！")
_CLOSERS = "\"')]”’）】"
# A title run into the sentence ("Recommendations for the Management of Patients With HCM and Ventricular
# Arrhythmias Referenced studies …"): this many capitalised words before the first lower-case one.
_TITLE_WORDS = 5
_FUNCTION_WORDS = frozenset("a an and at by for in of on or the to vs with".split())
# Openings that lean on the sentence before ("Thus, the focus …", "These disparities …", "此外，…"): out of their
# place in the text they say less than they seem to.
_LEANING = frozenset("also however therefore thus hence moreover furthermore additionally conversely similarly "
                     "likewise consequently accordingly this these those such it they its their".split())
_ZH_LEANING = ("因此", "此外", "另外", "然而", "但", "而", "同时", "这", "该", "其", "上述", "故")
_INNER_LABEL = re.compile(r"(?:[图表]|Figure|Table)\s*\d")


@dataclass(frozen=True)
class Candidate:
    """A sentence that may stand in a summary, and where it is (chunk ordinal, sentence index)."""

    text: str
    position: tuple[int, int]


def lexrank(vectors: np.ndarray, damping: float = DAMPING, iterations: int = 60) -> np.ndarray:
    """Continuous LexRank: the stationary distribution of a random walk on the cosine-similarity graph (negative
    similarities cut, no self-loops), with a uniform teleport of 1 - `damping`. Sums to 1."""
    count = len(vectors)
    if count == 0:
        return np.zeros(0)
    similarity = np.clip(vectors @ vectors.T, 0.0, None)
    np.fill_diagonal(similarity, 0.0)
    rows = similarity.sum(axis=1, keepdims=True)
    walk = np.divide(similarity, rows, out=np.full_like(similarity, 1.0 / count), where=rows > 0)
    rank = np.full(count, 1.0 / count)
    for _ in range(iterations):
        following = (1 - damping) / count + damping * (walk.T @ rank)
        if np.abs(following - rank).sum() < 1e-9:
            return following
        rank = following
    return rank


def mmr(scores: np.ndarray, vectors: np.ndarray, count: int, weight: float = MMR_LAMBDA) -> list[int]:
    """Maximal marginal relevance: up to `count` indices, each the best trade of its (max-normalised) score against
    its highest similarity to the ones chosen before; none as alike to a chosen one as REPEAT."""
    if len(scores) == 0:
        return []
    relevance = scores / max(float(scores.max()), 1e-12)
    chosen: list[int] = []
    while len(chosen) < min(count, len(scores)):
        redundancy = (vectors @ vectors[chosen].T).max(axis=1) if chosen else np.zeros(len(scores))
        value = weight * relevance - (1 - weight) * redundancy
        value[chosen] = -np.inf
        value[redundancy >= REPEAT] = -np.inf  # the same sentence again (a summary table repeating the text)
        if not np.isfinite(value).any():
            break
        chosen.append(int(value.argmax()))
    return chosen


def chunk_centrality(chunks: Sequence[Chunk], embed: Embed) -> dict[str, float]:
    """LexRank of each chunk among the document's chunks (by chunk id), from the vectors the index holds."""
    if not chunks:
        return {}
    rank = lexrank(embed([embedding_text(c) for c in chunks]))
    return {c.id: float(r) for c, r in zip(chunks, rank, strict=True)}


def summary_candidates(chunk: Chunk) -> list[Candidate]:
    """The sentences of a chunk that can stand alone in a summary, as a reader sees them (no reference markers)."""
    found = []
    for index, span in enumerate(split_sentences(chunk.text)):
        language = detect_language(span.text)
        if not quotable(chunk.text, span, language) or states_grading(span.text) or ends_in_grade_cells(span.text):
            continue  # a recommendation row is shown with its grading among the key recommendations
        text = without_source_markers(span.text).strip().lstrip(_BULLETS)
        low, high = _LENGTH[language == "zh"]
        if low <= len(text) <= high and _reads_as_prose(text):
            found.append(Candidate(text, (chunk.ordinal, index)))
    return found


def extractive_summary(chunks: Sequence[Chunk], centrality: Mapping[str, float], embed: Embed,
                       clean: Callable[[str], str] = lambda s: s) -> str:
    """The most central, mutually unlike sentences of the most central chunks, in reading order, within
    SUMMARY_MAX_CHARS. `clean` cuts what a sentence must not quote (a fused section number); empty drops it."""
    central = sorted(chunks, key=lambda c: -centrality.get(c.id, 0.0))[:CENTRAL_CHUNKS]
    candidates = [Candidate(text, c.position) for c in (x for chunk in central for x in summary_candidates(chunk))
                  if (text := clean(c.text))]
    if not candidates:
        return ""
    vectors = embed([c.text for c in candidates])
    chosen = mmr(lexrank(vectors), vectors, SUMMARY_SENTENCES)
    text = ""
    for candidate in sorted((candidates[i] for i in chosen), key=lambda c: c.position):
        chinese = detect_language(candidate.text) == "zh"
        joined = f"{text}{candidate.text}" if chinese else f"{text} {candidate.text}".strip()
        if len(joined) > SUMMARY_MAX_CHARS and text:
            break
        text = joined
    return text


def key_topics(chunks: Sequence[Chunk], centrality: Mapping[str, float],
               entities: Sequence[tuple[Entity, Mapping[str, int]]], limit: int = MAX_TOPICS) -> tuple[str, ...]:
    """The entities the central chunks speak of, each named as the document writes it, most central first;
    a topic inside another chosen one ("heart failure", "heart failure with preserved ejection fraction") once."""
    texts = {c.id: c.text for c in chunks}
    scored = []
    for entity, per_chunk in entities:
        weight = sum(centrality.get(chunk_id, 0.0) * count for chunk_id, count in per_chunk.items())
        name = _written_name(entity, [texts[i] for i in per_chunk if i in texts])
        if weight > 0 and name:
            scored.append((weight, name))
    chosen: list[str] = []
    for _, name in sorted(scored, key=lambda pair: -pair[0]):
        if not any(name.lower() in other.lower() or other.lower() in name.lower() for other in chosen):
            chosen.append(name)
        if len(chosen) == limit:
            break
    return tuple(chosen)


def _written_name(entity: Entity, texts: Sequence[str]) -> str:
    """The entity's name when the texts write it, else the alias they write most, a Chinese one first in Chinese
    text ("射血分数保留的心力衰竭", not "HFpEF"); '' when they write none."""
    flat = " ".join(texts)
    lowered = flat.lower()
    counts = {name: (flat.count(name) if has_cjk(name) else lowered.count(f" {name.lower()}"))
              for name in (entity.name, *entity.aliases) if len(name) >= 2}
    chinese = detect_language(flat) == "zh"
    if counts.get(entity.name) and not chinese:
        return entity.name
    best = max(counts, key=lambda name: (counts[name] > 0, has_cjk(name) == chinese, counts[name], len(name)), default="")
    return best if counts.get(best) else ""


def _reads_as_prose(text: str) -> bool:
    """A statement ending in a full stop: not a question, a clause ending in a semicolon or colon, a label set
    before one ("推荐说明：…", "HFmrEF：…"), a sentence cut after a range mark or before a footnote letter
    ("a缺血和出血…"), one with a figure's or table's label or a title run into it, or a row of figures."""
    end = text.rstrip().rstrip(_CLOSERS)
    label = min((i for i in (end.find(":"), end.find("：")) if i >= 0), default=len(end))
    if not end.endswith(_FULL_STOPS) or label < _LABEL_CHARS or end[:-1].endswith(_CUT_BEFORE_END):
        return False
    if text[:1].islower() or _INNER_LABEL.search(text) or _glued_reference(text) or _leans_on_before(text):
        return False
    if _titled_words(text) >= _TITLE_WORDS:
        return False
    return sum(ch.isdigit() for ch in text) / len(text) < 0.08


def _leans_on_before(text: str) -> bool:
    """A sentence that opens on a connective or a pronoun pointing back ("Thus, …", "In addition, …", "这些…")."""
    words = text.lower().replace(",", " ").split()
    return text.startswith(_ZH_LEANING) or bool(words) and (words[0] in _LEANING or words[:2] == ["in", "addition"])


def _titled_words(text: str) -> int:
    """How many capitalised words open an English text before its first lower-case word (function words aside)."""
    count = 0
    for word in text.split():
        if word.lower() in _FUNCTION_WORDS:
            continue
        if not word[:1].isupper():
            break
        count += 1
    return count


def _glued_reference(text: str) -> bool:
    """A reference number glued to a full stop ("… are needed.2,22 The SCD …"): two sentences the split kept
    together, with the number in between."""
    return any(text[i - 1].isalpha() and text[i + 1].isdigit() for i in range(1, len(text) - 1) if text[i] == ".")
