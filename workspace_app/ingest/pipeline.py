"""The ingestion pipeline: parse (and OCR of pages without a text layer) -> chunk -> catalog + FTS -> embed -> vectors -> figures -> entity graph -> source guide -> ready.

Progress (stage, counts, overall share, the stage's time left at the pace measured in this run: jobs/pace.py) is
written to the document row as it goes. A caller may pass `should_stop`, called between pages and embedding batches
and while a batch is embedded, which raises `JobInterrupted` to end the run early (cancel, shutdown, lost lease); the
caller then decides the document's state.

Every write is keyed by deterministic ids (chunk `<document id>-<ordinal>`), so a run killed at any point
and started again ends with exactly the chunks and vectors of an undisturbed run. While OCR reads a scanned
document, the pages read so far are stored as provisional passages (`<document id>-ocr<page>`, ingest/provisional.py)
that keyword search finds; the chunks replace them all in one transaction. A document is marked
`ready` only after its vector count matches its chunk count.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from workspace_app.config import IngestSettings
from workspace_app.domain import GradeGrammar, NoGrades
from workspace_app.embedding.embedder import Embedder
from workspace_app.errors import FileTooLargeError, IngestionError, StorageError, WorkspaceError
from workspace_app.ingest.chunking import ChunkDraft, section_chunks
from workspace_app.ingest.glyphs import MARKER
from workspace_app.ingest.layout import ParsedDocument
from workspace_app.ingest.ocr import PageOcr
from workspace_app.ingest.provisional import ProvisionalPages
from workspace_app.ingest.readers import read_source
from workspace_app.ingest.references import chunk_kind
from workspace_app.jobs.leases import JobInterrupted
from workspace_app.jobs.pace import Pace
from workspace_app.models.documents import FIGURE_TEXT, GRAPH_LINKS, Chunk, Document, StageProgress, StageReport
from workspace_app.storage.base import ChunkRepository, DocumentRepository, VectorIndex
from workspace_app.text.abbreviations import find_abbreviations
from workspace_app.text.analyzer import index_text
from workspace_app.text.grades import Recommendation

log = logging.getLogger(__name__)

# Share of the whole job each stage ends at, for one progress number.
# The cross-language embedder (USE) is ~3-4x faster than the main one: its stage gets a smaller share. OCR (seconds a
# page, only on scanned pages) has half of reading's share; without scanned pages the bar steps over it. The answer's
# sentences are short texts, but both embedders read them.
# Figures are found page by page from drawings and images (no model): a small share after the indexing. Reading a
# PDF's text layer is quick; the layout model on the pages that may hold a table ("tables") takes most of reading.
_STAGE_END = {"parsing": 0.03, "tables": 0.1, "ocr": 0.2, "chunking": 0.25, "embedding": 0.72, "indexing": 0.76,
              "figures": 0.77, FIGURE_TEXT: 0.78, "cross-language": 0.83, "sentences": 0.93, "graph": 0.96,
              GRAPH_LINKS: 0.97, "guide": 1.0}
_PREVIOUS = {"parsing": 0.0, "tables": 0.03, "ocr": 0.1, "chunking": 0.2, "embedding": 0.25, "indexing": 0.72,
             "figures": 0.76, FIGURE_TEXT: 0.77, "cross-language": 0.78, "sentences": 0.83, "graph": 0.93,
             GRAPH_LINKS: 0.96, "guide": 0.97}
# Which count columns of the document row a stage's (done, total) fill.
_COUNTS = {"parsing": ("pages_parsed", "pages"), "embedding": ("chunks_embedded", "chunks_total")}
_WRITE_EVERY_S = 0.25
# A stage whose count is reported again and again unmoved for this long is waiting (for the embedding model another
# job holds; nothing else reports without moving): its time left is unknown, and the wait is not measured as pace.
_STILL_S = 2.0
_INDEX_ATTEMPTS = 3


@dataclass(frozen=True)
class Progress:
    """Where a job is: stage, items done of total in that stage, overall 0..1 (for one bar), the stage's seconds
    left at the pace measured in this run (None while estimating or waiting), and whether it waits for the model."""

    stage: str
    done: int
    total: int
    overall: float
    eta_s: float | None = None
    waiting: bool = False


ProgressCallback = Callable[[Progress], None]
StopCheck = Callable[[], None]


class _Tracker:
    """Turns stage counts into overall progress and each stage's time left, and stores them on the document row."""

    def __init__(
        self, states: DocumentStates, document_id: str, listener: ProgressCallback | None,
        should_stop: StopCheck | None = None, pace: Callable[[], Pace] = Pace,
    ) -> None:
        self._states = states
        self._document_id = document_id
        self._listener = listener
        self._should_stop = should_stop
        self._new_pace = pace
        self._pace = pace()
        self._last_write = 0.0
        self._last_stage = ""
        self._known = False  # whether the last write had a time left
        self._moved: tuple[str, int, float] = ("", -1, time.monotonic())  # stage, done and when it last changed
        self._total = 0  # the stage's last total

    def __call__(self, stage: str, done: int, total: int, work: float | None = None) -> None:
        """Counts `done` of `total` in `stage`; `work` (0..1), where given, is the share of the stage's work done, for
        a stage whose items cost unlike amounts (parsing's pages): its time left is measured on that share."""
        if self._should_stop:
            self._should_stop()
        # A registered stage without its own share runs in the graph's (the last) share.
        start, end = _PREVIOUS.get(stage, _PREVIOUS["graph"]), _STAGE_END.get(stage, 1.0)
        overall = start + (end - start) * (done / total if total else 1.0)
        progress = Progress(stage, done, total, round(overall, 4), *self._time_left(stage, done, total, work))
        # A new stage is written at once: a stage that waits (for the model, held by another job) shows as itself;
        # so is a time left that appears or goes (the page says "estimating" or "waiting" no longer than it must).
        now = time.monotonic()
        known = progress.eta_s is not None
        if now - self._last_write > _WRITE_EVERY_S or done == total or stage != self._last_stage or known != self._known:
            counts = dict(zip(_COUNTS[stage], (done, total), strict=True)) if stage in _COUNTS else {}
            counts.update(stage_done=done, stage_total=total, stage_waiting=int(progress.waiting))
            self._states.progress(self._document_id, StageProgress(stage, progress.overall, progress.eta_s, counts))
            self._last_write, self._last_stage, self._known = now, stage, known
        if self._listener:
            self._listener(progress)

    def _time_left(self, stage: str, done: int, total: int, work: float | None) -> tuple[float | None, bool]:
        """(seconds left in the stage, waiting): a count reported again and again without moving is a stage waiting
        for the model; its wait is not measured as pace (measuring starts again when it moves). The pace is of the
        items, or of the share of the work where the stage gives one. A stage that names its total at 0 done, after
        the pipeline's placeholder of one step (the graph, once its matchers are built), starts counting there: its
        setup is not measured as the pace of its items."""
        now = time.monotonic()
        measured, whole = (done, float(total)) if work is None else (work, 1.0)
        if self._moved[0] != stage:
            self._pace = self._new_pace()
        elif done == 0 and total != self._total:
            self._pace.restart(measured, now)
            self._moved = (stage, done, now)
        self._total = total
        if self._moved[:2] != (stage, done):
            self._moved = (stage, done, now)
        if now - self._moved[2] >= _STILL_S and done < total:
            self._pace.restart(measured, now)
            return None, True
        eta = self._pace.observe(measured, whole, now)
        if eta is None:
            return None, False
        return (max(round(eta, 1), 0.1) if done < total else 0.0), False  # work left is never "0 s" left


class DocumentStates(Protocol):
    """The state transitions the pipeline makes (implemented by `documents.lifecycle.DocumentStates`)."""

    def start(self, document_id: str) -> None: ...
    def progress(self, document_id: str, step: StageProgress) -> None: ...
    def parsed(self, document_id: str, pages: int, pages_without_text: Sequence[int]) -> None: ...
    def ready(self, document_id: str, pages: int, chunks: int) -> None: ...


class IndexStage(Protocol):
    """A stage that indexes a document's stored chunks after its vectors (the figures, the entity graph, ...).

    `run` reports (done, total) through `report`; the pipeline gives each stage its share of the progress."""

    name: str

    def run(self, document: Document, chunks: list[Chunk], report: StageReport) -> None: ...


def ingest_document(
    document: Document,
    path: Path,
    *,
    embedder: Embedder,
    documents: DocumentRepository,
    states: DocumentStates,
    chunks: ChunkRepository,
    vectors: VectorIndex,
    settings: IngestSettings,
    on_progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    stages: Sequence[IndexStage] = (),
    grades: GradeGrammar,
    pace: Callable[[], Pace] = Pace,
) -> Document:
    """Run the whole pipeline for one stored document; the row ends `ready` or `failed` with a message
    (or as it was when `should_stop` raised `JobInterrupted`). The `stages` (the entity graph) run last; `grades`
    (the domain pack's grammar) reads each chunk's class and level, and says whether grade cells join their rows;
    `pace` makes the measure of each stage's time left (jobs/pace.py)."""
    states.start(document.id)
    track = _Tracker(states, document.id, on_progress, should_stop, pace)
    try:
        # The model is loaded before any stage counts (a first job would wait seconds for it in chunking), so its
        # load is not measured as the pace of the stage it falls in. A worker has loaded it already.
        embedder.load()
        # Pages OCR has read are keyword-searchable at once, as provisional passages the chunks replace below.
        provisional = ProvisionalPages(document, chunks)
        ocr = PageOcr.from_settings(settings, lambda d, t: track("ocr", d, t), provisional.add)
        parsed = read_source(
            path, document.name, document.media_type, track,
            grade_cells=grades.table_cells, ocr=ocr,
        )
        if parsed.page_count > settings.max_pages:
            raise FileTooLargeError(
                f"{document.name} has {parsed.page_count} pages; the limit is {settings.max_pages}. "
                "Split it into parts or raise WORKSPACE_INGEST__MAX_PAGES."
            )
        states.parsed(document.id, parsed.page_count, parsed.pages_without_text)
        _log_unreadable_glyphs(document, parsed)
        if parsed.pages_ocr:
            log.info("%s: pages %s read by OCR", document.name, ", ".join(map(str, parsed.pages_ocr)))
        track("chunking", 0, 1)
        records = build_chunks(document, parsed, embedder, settings, lambda d, t: track("chunking", d, t), grades)
        chunks.replace_chunks(document.id, document.workspace_id, records, keyword_texts(records))
        # Each stage's count covers its work: the embedding cache is read within "embedding", and the abbreviations
        # (as long as the chunking itself) are found within "indexing", not after the last count of a stage.
        track("embedding", 0, len(records))
        embedded = embedder.embed_passages(
            [embedding_text(c) for c in records], lambda d, t: track("embedding", d, t), should_stop
        )
        track("indexing", 0, len(records))
        index_vectors(document, records, embedded.tolist(), vectors)
        chunks.replace_abbreviations(document.id, document.workspace_id, _abbreviations(records))
        track("indexing", len(records), len(records))
        for stage in stages:
            track(stage.name, 0, 1)
            report = _StageReporter(track, stage.name)
            stage.run(document, records, report)
            track(report.last, 1, 1)  # ends where it last counted: the one progress number never goes back
    except (JobInterrupted, WorkspaceError):
        raise  # a failure is recorded by the job, which knows whether it is the last try (not shown, then re-queued)
    except Exception as exc:
        log.exception("ingestion of %s failed", document.name)
        message = f"{document.name} could not be ingested ({type(exc).__name__}). Retry; if it fails again, report it."
        raise IngestionError(message) from exc
    states.ready(document.id, parsed.page_count, len(records))
    found = documents.find_document(document.workspace_id, document.id)
    assert found is not None
    return found


class _StageReporter:
    """An index stage's `StageReport`: its counts, under its name or a step's it counts apart; `last` is the name it
    last counted under."""

    def __init__(self, track: Callable[[str, int, int], None], name: str) -> None:
        self._track = track
        self._name = name
        self.last = name

    def __call__(self, done: int, total: int, stage: str | None = None) -> None:
        self.last = stage or self._name
        self._track(self.last, done, total)


def keyword_texts(records: Sequence[Chunk]) -> list[tuple[str, str]]:
    """The keyword index's terms of each chunk: its innermost section title's, then its text's (storage stores them)."""
    return [(index_text(c.section.split(" > ")[-1]), index_text(c.text)) for c in records]


def embedding_text(chunk: Chunk) -> str:
    """What the embedder sees: the innermost section title as context, then the chunk text.

    A document-title header was measured too (bench/README.md): it made chunks of one document alike and
    lowered dense page-hit@1 on the dev questions, so only the section title is kept.
    """
    section = chunk.section.split(" > ")[-1] if chunk.section else ""
    return f"{section}\n{chunk.text}" if section else chunk.text


def build_chunks(
    document: Document, parsed: ParsedDocument, embedder: Embedder, settings: IngestSettings,
    report: Callable[[int, int], None] | None = None, grades: GradeGrammar | None = None,
) -> list[Chunk]:
    """The chunks of a parsed document as they are stored: text, section, pages, boxes, class and level, kind."""
    # Room is left for the section title the embedder sees too.
    size = min(settings.chunk_tokens, embedder.max_tokens - 24)
    grammar = grades or NoGrades()
    records: list[Chunk] = []
    # Each section's chunks are made whole (grading, kind) before its count: the count covers the stage's work.
    for done, total, drafts in section_chunks(parsed.paragraphs, embedder.count_tokens, size, settings.chunk_overlap_tokens):
        records += [_chunk(document, len(records) + index, draft, grammar) for index, draft in enumerate(drafts)]
        if report:
            report(done, total)
    if not records:
        raise IngestionError(f"{document.name} contains no text that can be searched.")
    return records


def _log_unreadable_glyphs(document: Document, parsed: ParsedDocument) -> None:
    """Say where the text holds glyphs no table could read (they are in the chunks as the marker)."""
    if parsed.flagged_pages:
        count = sum(parsed.glyphs[page].flagged for page in parsed.flagged_pages)
        log.warning("%s: %d glyphs could not be read, shown as %s on pages %s", document.name, count, MARKER,
                    ", ".join(map(str, parsed.flagged_pages)))


def _abbreviations(records: list[Chunk]) -> dict[str, str]:
    found: dict[str, str] = {}
    for chunk in records:
        if chunk.kind == "body":
            for short, long_form in find_abbreviations(chunk.text).items():
                found.setdefault(short, long_form)
    return found


def _chunk(document: Document, ordinal: int, draft: ChunkDraft, grades: GradeGrammar) -> Chunk:
    found = Recommendation(*draft.recommendation) if draft.recommendation else grades.find_recommendation(draft.text)
    return Chunk(
        id=f"{document.id}-{ordinal:05d}", document_id=document.id, ordinal=ordinal, text=draft.text,
        section=draft.section, page_start=draft.page_start, page_end=draft.page_end,
        token_count=draft.token_count, rects=tuple(draft.rects),
        recommendation_class=found.recommendation_class, evidence_level=found.evidence_level,
        kind=chunk_kind(draft.text),
    )


def index_vectors(document: Document, records: list[Chunk], embedded: list[list[float]], vectors: VectorIndex) -> None:
    """Replace the document's vectors and check the count. A worker killed while it wrote vectors can leave a
    request that the Chroma server applies late, in the middle of the next run's writes; the next attempt,
    a moment later, puts the set right."""
    metadatas: list[dict[str, str | int]] = [
        {"document_id": document.id, "page_start": c.page_start, "ordinal": c.ordinal} for c in records
    ]
    stored = 0
    for attempt in range(1, _INDEX_ATTEMPTS + 1):
        vectors.delete_document(document.workspace_id, document.id)
        vectors.upsert(document.workspace_id, [c.id for c in records], embedded, metadatas)
        stored = vectors.count(document.workspace_id, document.id)
        if stored == len(records):
            return
        log.warning("%s: %d of %d vectors stored (attempt %d)", document.name, stored, len(records), attempt)
        time.sleep(attempt)
    raise StorageError(f"{document.name}: {stored} of {len(records)} vectors were stored. Retry the document.")
