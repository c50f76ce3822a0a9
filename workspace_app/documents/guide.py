"""Source guides: what one document is about, computed offline from its stored chunks and graph mentions.

    chunks (body passages) -> chunk centrality (LexRank over their vectors, documents/summary.py)
                           -> summary: the most central whole sentences of the most central passages, unlike
                              each other (MMR), in reading order
                           -> recommendations: graded statements (each sentence's own class / level, as a citation
                              of it reads them: `text.grades.grading_in`), strongest first
    graph mentions         -> main entities (most mentioned), and key topics (the entities the central passages
                              speak of, as the document writes them: what suggested questions ask about)
    an LLM (if configured) -> a written summary of the above, stored with the guide (so made once)

The ingestion pipeline runs `GuideStage` after the graph stage; documents ingested before guides existed (or by
an older `GUIDE_VERSION`) get theirs on first read (`GuideService.guides`). Storage is the catalog's
`GuideRepository`; everything shown is the document's own text (the UI escapes it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from workspace_app.documents.summary import Embed, chunk_centrality, extractive_summary, key_topics
from workspace_app.llm import LlmClient
from workspace_app.models.documents import Chunk, Document
from workspace_app.models.graph import Entity
from workspace_app.models.guides import GuideEntity, GuideRecommendation, SourceGuide
from workspace_app.retrieval.scope import ScopeCatalog, find_workspace
from workspace_app.storage.base import ChunkRepository, DocumentRepository, GuideRepository
from workspace_app.text.grades import ROW_CELLS, Recommendation, grading_in, states_grading
from workspace_app.text.language import detect_language
from workspace_app.text.quotable import is_table_title
from workspace_app.text.sentences import is_caption, split_sentences
from workspace_app.text.source_markers import without_source_markers
from workspace_app.text.terms import content_terms

log = logging.getLogger(__name__)

GUIDE_VERSION = "guide-v7"
MAX_RECOMMENDATIONS = 5
MAX_ENTITIES = 8
TOPIC_CANDIDATES = 30  # the most mentioned entities that compete to be key topics
_CLASS_ORDER = {"I": 0, "Strong": 0, "III": 1, "III: Harm": 1, "III: No Benefit": 1, "IIa": 2, "Conditional": 2,
                "IIb": 3, "GPS": 4}
_LEVEL_ORDER = {"A": 0, "B": 1, "B-R": 1, "B-NR": 2, "C": 3, "C-LD": 3, "C-EO": 4, "D": 4}
_ADVICE = re.compile(
    r"\b(recommended|should|reasonable|indicated|may be considered|is not|are not|beneficial|harmful|useful|advise)\b|"
    r"推荐|建议|应|不宜|可考虑",
    re.IGNORECASE,
)
# A heading the chunker kept with its paragraph is split off with the paragraph's first sentence
# ('2.2.2. 综合评估 在纠正与稳定血流动力学状态的同时，…'); a summary must not quote its number.
_SECTION_NUMBER = r"\d{1,2}(?:\.\d{1,2})+\.?(?![\d.])"  # 2.2, 2.2.2, 2.2.2.
_LEADING_HEADING = re.compile(rf"^(?:{_SECTION_NUMBER}|\d{{1,2}}\.(?=\s))\s*")
# The heading's own title, when a space ends it (Chinese prose has none): '综合评估 '.
_HEADING_TITLE = re.compile(r"^[\u3400-\u9fff][^\s，。；：、,.;:]{0,23}\s+(?=\S)")
_INNER_HEADING = re.compile(r"(?<![\d.])\d{1,2}\.\d{1,2}\.\d{1,2}\.?(?![\d.])")
# A table's header read into its first row ("COR LOE RECOMMENDATIONS 1. …", "建议 推荐级别 证据水平建议…"), and the
# class and level cells that end a row ("… (S4.3-1). I A", "…以减轻症状和体征 强 A").
_TABLE_HEADER = re.compile(r"^.*?(?:\bCOR\s+LOE\s+RECOMMENDATIONS?|推荐(?:级别|强度)\s*证据(?:水平|级别|质量))\s*")
_ROW_END_CELLS = re.compile(rf"\s*(?:{ROW_CELLS})\s*$")
# A Chinese consensus's statement label with what the page set before it ("1 mmHg=0.133 kPa陈述8：推荐…"); a caption
# (a table of the grades themselves, or a caption run into a row); the sections that define the grades.
_STATEMENT_LABEL = re.compile(r"^.{0,30}?陈述\s*\d{1,2}\s*[：:]\s*")
# The sections that define the grades, and the back matter: neither gives advice nor says what a document is about.
# (Not "reference": ACC/AHA table titles run on into "Referenced studies that support the recommendations…".)
_BACK_MATTER = re.compile(
    r"method|abbreviation|(?:^|> )references\b|acknowledg|disclosure|appendix|conflicts? of interest|"
    r"relationships? with industry|peer review|writing (?:group|committee)|参考文献|利益冲突|附录|缩略语",
    re.IGNORECASE,
)
_MIN_STATEMENT = {False: 25, True: 12}  # characters of an English or a Chinese statement
_MAX_STATEMENT = 600  # a table row's statement may run to 450 characters (ommen-2024-hcm p.13)
_LEAD_MARK = re.compile(r"^(?:[•·▪●○■□–—*-]|\d{1,2}[.)]|\(\d{1,2}\)|[①-⑩]|陈述\s*\d{1,2}\s*[：:])\s*")
SUMMARY_PROMPT = (
    "You write a short overview of one clinical source for a clinician who has not read it. Use only the text "
    "given. In 2 or 3 sentences say what the source covers and what its main recommendations are. No preamble. "
    "Write in the language of the text."
)


class EntitySource(Protocol):
    """The graph's view of one document: the entities it mentions most, with their mentions per chunk."""

    def document_entity_chunks(
        self, workspace_id: str, document_id: str, limit: int
    ) -> list[tuple[Entity, dict[str, int]]]: ...


class GuideCatalog(ScopeCatalog, DocumentRepository, ChunkRepository, GuideRepository, Protocol):
    """What guides read and write in the catalog."""


def build_guide(
    document: Document, chunks: Sequence[Chunk], entities: Sequence[tuple[Entity, Mapping[str, int]]], embed: Embed
) -> SourceGuide:
    """The offline guide of one document from its chunks (in reading order), its most mentioned entities (with
    their mentions per chunk) and the embedder that holds its chunks' vectors."""
    body = [c for c in chunks if c.kind == "body" and not _BACK_MATTER.search(c.section)]
    prose = [c for c in body if not is_table_title(c.section.split(" > ")[-1])]
    centrality = chunk_centrality(prose, embed)
    return SourceGuide(
        document_id=document.id, summary=extractive_summary(prose, centrality, embed, without_section_heading),
        recommendations=key_recommendations(body),
        entities=tuple(GuideEntity(e.name, e.type, sum(counts.values())) for e, counts in entities[:MAX_ENTITIES]),
        topics=key_topics(prose, centrality, entities),
    )


def without_section_heading(sentence: str) -> str:
    """The sentence without a section number and title fused to its start ('2.2.2. 综合评估 在纠正…' -> '在纠正…');
    empty when a number is left that cannot be cut off cleanly (an English title has no end mark, '1.2.3' inside)."""
    lead = _LEADING_HEADING.match(sentence)
    if lead:
        title = _HEADING_TITLE.match(sentence[lead.end():])
        if title is None:
            return ""
        sentence = sentence[lead.end() + title.end():]
    return "" if _INNER_HEADING.search(sentence) else sentence


def key_recommendations(chunks: Sequence[Chunk], limit: int = MAX_RECOMMENDATIONS) -> tuple[GuideRecommendation, ...]:
    """Graded statements, strongest class and level first, one per section, each its own sentence and grading."""
    found: list[tuple[tuple[int, int, bool, int], GuideRecommendation]] = []
    for chunk in chunks:
        if not (chunk.recommendation_class or chunk.evidence_level) or _BACK_MATTER.search(chunk.section):
            continue  # no grading anywhere in its text, or the methods that define the grades
        for statement, grade in graded_statements(chunk.text):
            klass, level = grade.recommendation_class, grade.evidence_level
            # Of a statement's sentences, the one that words the advice ("… is recommended", "推荐…") comes first.
            rank = (_CLASS_ORDER.get(klass or "", 5), _LEVEL_ORDER.get(level or "", 5), not _ADVICE.search(statement),
                    chunk.ordinal)
            found.append((rank, GuideRecommendation(statement, klass, level, chunk.page_start, chunk.section, chunk.id)))
    ranked = [recommendation for _, recommendation in sorted(found, key=lambda pair: pair[0])]
    chosen: list[GuideRecommendation] = []
    terms: list[dict[str, str]] = []
    # One per section first; a document of few sections (a consensus's statements all in one) is filled up after.
    # No statement twice (a summary table's row and the statement it sums up).
    for one_per_section in (True, False):
        for recommendation in ranked:
            own = content_terms(recommendation.text)
            if len(chosen) == limit or any(_overlap(own, other) > 0.6 for other in terms) or (
                one_per_section and any(recommendation.section == other.section for other in chosen)
            ):
                continue
            chosen.append(recommendation)
            terms.append(own)
    return tuple(chosen)


def graded_statements(text: str) -> list[tuple[str, Recommendation]]:
    """The sentences of a passage that give advice with a grading of their own (in the sentence, or in the cells or
    grading line that close its recommendation), as a guide shows them: without the cells, a table header run into
    them, list marks and reference markers. Grading lines ("推荐强度：强 证据质量：A") are not statements."""
    runs: list[list[tuple[str, Recommendation]]] = []  # adjacent sentences of one grading: one recommendation
    previous: Recommendation | None = None
    for span in split_sentences(text):
        grade = grading_in(text, span.start, span.text)
        if not (grade.recommendation_class or grade.evidence_level) or states_grading(span.text):
            previous = None
            continue
        sentence = _ROW_END_CELLS.sub("", _STATEMENT_LABEL.sub("", _TABLE_HEADER.sub("", span.text)))
        statement = recommendation_sentence(sentence) if not is_caption(sentence) else ""
        if not statement:
            continue
        if grade != previous:
            runs.append([])
        runs[-1].append((statement, grade))
        previous = grade
    # Of a recommendation's sentences, the one that words the advice ("… is recommended", "推荐…").
    return [next((item for item in run if _ADVICE.search(item[0])), run[0]) for run in runs]


def recommendation_sentence(text: str) -> str:
    """The sentence of a graded passage that gives the advice (the first that does, else the first long one)."""
    sentences = [without_source_markers(_LEAD_MARK.sub("", s.text).strip()) for s in split_sentences(text)]
    sentences = [s for s in sentences if _MIN_STATEMENT[_is_cjk_text(s)] <= len(s) <= _MAX_STATEMENT]
    return next((s for s in sentences if _ADVICE.search(s)), sentences[0] if sentences else "")


class GuideService:
    """Guides of a workspace's documents: built at ingestion (`build`), or on first read for older documents."""

    def __init__(self, catalog: GuideCatalog, entities: EntitySource, embed: Embed, llm: LlmClient | None = None,
                 llm_model: str = "") -> None:
        self._catalog = catalog
        self._entities = entities
        self._embed = embed  # the workspace's embedder: its cache holds the chunks' vectors
        self._llm = llm
        self.version = GUIDE_VERSION + (f"|llm:{llm_model}" if llm is not None else "")

    def build(self, document: Document, chunks: Sequence[Chunk] | None = None) -> SourceGuide:
        """Compute a document's guide from its chunks (read from the catalog when not given) and store it."""
        if chunks is None:
            chunks = self._document_chunks(document.id)
        entities = self._entities.document_entity_chunks(document.workspace_id, document.id, TOPIC_CANDIDATES)
        guide = build_guide(document, chunks, entities, self._embed)
        if self._llm is not None:
            guide = _with_llm_summary(guide, document, self._llm)
        self._catalog.save_guide(document.workspace_id, guide, self.version)
        return guide

    def guides(self, workspace: str, document_ids: Sequence[str] | None = None) -> dict[str, SourceGuide]:
        """Guides of the workspace's ready documents (or of those named), computing the missing or outdated ones."""
        ws = find_workspace(self._catalog, workspace)
        ready = [d for d in self._catalog.list_documents(ws.id) if d.status == "ready"]
        if document_ids is not None:
            wanted = set(document_ids)
            ready = [d for d in ready if d.id in wanted]
        stored = self._catalog.get_guides([d.id for d in ready], self.version)
        for document in ready:
            if document.id not in stored:
                stored[document.id] = self.build(document)
        return {d.id: stored[d.id] for d in ready}

    def _document_chunks(self, document_id: str) -> list[Chunk]:
        found = self._catalog.get_chunks(self._catalog.document_chunk_ids(document_id))
        return sorted(found.values(), key=lambda c: c.ordinal)


class GuideStage:
    """Computes the document's guide at ingestion, after its graph (an `IndexStage` of the pipeline)."""

    name = "guide"

    def __init__(self, guides: GuideService) -> None:
        self._guides = guides

    def run(self, document: Document, chunks: list[Chunk], report: Callable[[int, int], None]) -> None:
        """Build and store the guide of the document being ingested."""
        report(0, 1)
        self._guides.build(document, chunks)
        report(1, 1)


def _with_llm_summary(guide: SourceGuide, document: Document, llm: LlmClient) -> SourceGuide:
    """The guide with a summary written by the model from the extractive guide (unchanged when the model fails)."""
    lines = [f"Source: {document.name}", f"Summary: {guide.summary}"]
    lines += [f"Recommendation: {r.text}" for r in guide.recommendations]
    lines += [f"Key topics: {'; '.join(guide.topics)}"] if guide.topics else []
    try:
        written = llm.complete([
            {"role": "system", "content": SUMMARY_PROMPT}, {"role": "user", "content": "\n".join(lines)[:6000]},
        ]).strip()
    except Exception:  # the offline summary stays; the model's absence must not fail an ingestion
        log.warning("the language model could not summarise %s; keeping the extractive summary", document.name,
                    exc_info=True)
        return guide
    return replace(guide, llm_summary=written or None)


def _overlap(a: dict[str, str], b: dict[str, str]) -> float:
    return len(a.keys() & b.keys()) / max(min(len(a), len(b)), 1)


def _is_cjk_text(text: str) -> bool:
    return detect_language(text) == "zh"
