"""Plain data objects passed between the core, storage and the front ends."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class Rect:
    """A rectangle on a 1-based page, in PDF points with a top-left origin."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float

    def to_json(self) -> dict[str, float | int]:
        """Return the public JSON shape."""
        return {
            "page": self.page,
            "x0": round(self.x0, 2),
            "y0": round(self.y0, 2),
            "x1": round(self.x1, 2),
            "y1": round(self.y1, 2),
        }


@dataclass(frozen=True)
class Workspace:
    """A project holding documents (`document_count` counts them all, `failed_count` those that failed)."""

    id: str
    name: str
    created_at: str
    document_count: int = 0
    failed_count: int = 0


@dataclass(frozen=True)
class Document:
    """A source file in a workspace and its ingestion state."""

    id: str
    workspace_id: str
    name: str
    sha256: str
    size_bytes: int
    pages: int
    chunks: int
    status: str
    stage: str
    progress: float
    error: str | None
    added_at: str
    media_type: str = "application/pdf"
    pages_without_text: tuple[int, ...] = ()
    pages_parsed: int = 0
    chunks_embedded: int = 0
    chunks_total: int = 0
    eta_s: float | None = None
    included: bool = True
    cancel_requested: bool = False
    stage_done: int = 0
    stage_total: int = 0
    retryable: bool = True
    attempt: int = 0  # the try of the current or last run (from 1); > 1 after an automatic retry
    attempts: int = 0  # how many tries the queue allows a passing failure
    next_try_at: float | None = None  # when a planned retry starts (epoch seconds)
    held_by: str | None = None  # the lease owner running it: "worker@host:pid:id"
    heartbeat_at: float | None = None  # the owner's last heartbeat (epoch seconds)
    stalled: bool = False  # running, but its holder stopped sending heartbeats (set by the documents service)
    stage_waiting: bool = False  # the stage waits for the embedding model another job holds (no time left then)

    @property
    def is_active(self) -> bool:
        """True while the document waits for or goes through ingestion."""
        return self.status in ACTIVE_STATUSES

    @property
    def retrying(self) -> bool:
        """Queued again after a passing failure, waiting for its next try."""
        return self.status == "queued" and self.next_try_at is not None

    @property
    def partly_searchable(self) -> bool:
        """Running its OCR stage with pages read: those pages' provisional passages are keyword-searchable (search
        only; answers wait for the document to be ready)."""
        return self.status == "running" and self.stage == "ocr" and self.stage_done > 0

    @property
    def waiting_turn(self) -> bool:
        """Running, but its stage has waited a while for the embedding model another job holds (the pipeline then
        has no time left for it, and measures its pace again once it moves)."""
        return self.status == "running" and self.stage_waiting and self.stage_done < self.stage_total

    @property
    def estimating(self) -> bool:
        """Running a stage with counts whose pace is not measured yet: no time left to show so far."""
        return (
            self.status == "running" and not self.stage_waiting and self.eta_s is None
            and self.stage_total > 1 and self.stage_done < self.stage_total
        )

    def job_note(self, now: float) -> str | None:
        """What a waiting or stuck job is doing, for people: "retrying (2 of 9) — next try in 8 s", "stalled:
        worker@host:1234 stopped answering at 10:02:13 UTC; a worker will take it over", or None."""
        if self.stalled:
            since = (
                "" if self.heartbeat_at is None
                else f" at {datetime.fromtimestamp(self.heartbeat_at, UTC):%H:%M:%S} UTC"
            )
            holder = (self.held_by or "its process").rsplit(":", 1)[0]
            return f"stalled: {holder} stopped answering{since}; a worker will take it over"
        if self.retrying and self.next_try_at is not None:
            wait = self.next_try_at - now
            when = f"next try in {wait:.0f} s" if wait >= 1 else "next try now"
            return f"retrying ({self.attempt + 1} of {self.attempts}) — {when}"
        if self.status == "running" and self.attempt > 1:
            return f"try {self.attempt} of {self.attempts}"
        return None

    def to_json(self, now: float | None = None) -> dict[str, Any]:
        """Return the public JSON shape (with `note`, the job's state in words, as of `now`)."""
        data = asdict(self)
        data["pages_without_text"] = list(self.pages_without_text)
        data["note"] = self.job_note(time.time() if now is None else now)
        data["partly_searchable"] = self.partly_searchable
        return data


# A document's `status`; `stage` is one of STAGES while it runs, else equal to the status.
ACTIVE_STATUSES = ("queued", "running")
FINAL_STATUSES = ("ready", "failed", "cancelled")
FIGURE_TEXT = "figure text"  # the figures' pictures read by OCR, counted apart from the pages searched for figures
# The graph's rows stored and its communities, reports and summaries computed again, after its passages are counted:
# one step whose cost grows with the whole workspace's graph, not with the document's passages.
GRAPH_LINKS = "graph links"
STAGES = ("queued", "parsing", "tables", "ocr", "chunking", "embedding", "indexing", "figures", FIGURE_TEXT,
          "cross-language", "sentences", "graph", GRAPH_LINKS, "guide", "ready", "failed", "cancelled")


class StageReport(Protocol):
    """How an index stage reports: (done, total) of itself, or of a step it counts apart (`stage`: its name, one of
    the pipeline's shares, e.g. the figures' "figure text") because that step's items cost another amount."""

    def __call__(self, done: int, total: int, stage: str | None = None) -> None: ...


@dataclass(frozen=True)
class JobAttempt:
    """Which try of a job this is (from 1, of `of`), and the pause before the next one should it fail for a
    passing reason."""

    number: int = 1
    of: int = 1
    retry_in_s: float = 0.0

    @property
    def is_last(self) -> bool:
        """No automatic retry follows this try."""
        return self.number >= self.of


@dataclass(frozen=True)
class JobState:
    """An unfinished ingestion job as the queue's recovery sees it: who holds it and since when."""

    document_id: str
    workspace_id: str
    status: str
    lease_owner: str | None
    lease_age_s: float | None
    cancel_requested: bool


# The kind of a provisional passage: the text of one page OCR has read while the document is still running, found by
# keyword search until the document's chunks replace it (ingest/provisional.py).
PROVISIONAL = "provisional"


@dataclass(frozen=True)
class Chunk:
    """A retrievable passage with where it sits in its document."""

    id: str
    document_id: str
    ordinal: int
    text: str
    section: str
    page_start: int
    page_end: int
    token_count: int
    rects: tuple[Rect, ...] = ()
    recommendation_class: str | None = None
    evidence_level: str | None = None
    kind: str = "body"


@dataclass(frozen=True)
class SearchHit:
    """One fused search result."""

    rank: int
    chunk: Chunk
    document_name: str
    score: float
    ranks: dict[str, int | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the public JSON shape of the CLI's `search --json`."""
        return {
            "rank": self.rank,
            "chunk_id": self.chunk.id,
            "document": self.document_name,
            "document_id": self.chunk.document_id,
            "page_start": self.chunk.page_start,
            "page_end": self.chunk.page_end,
            "section": self.chunk.section,
            "text": self.chunk.text,
            "score": round(self.score, 6),
            "rects": [rect.to_json() for rect in self.chunk.rects],
            "ranks": {"dense": self.ranks.get("dense"), "sparse": self.ranks.get("sparse"), **self.ranks},
            "recommendation_class": self.chunk.recommendation_class,
            "evidence_level": self.chunk.evidence_level,
        }


@dataclass(frozen=True)
class SearchResult:
    """A query's hits and how long each stage took."""

    query: str
    hits: list[SearchHit]
    timings_ms: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        """Return the public JSON shape."""
        return {
            "query": self.query,
            "results": [hit.to_json() for hit in self.hits],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


@dataclass(frozen=True)
class IngestReport:
    """What happened to one file given to `ingest`."""

    document_id: str | None
    document: str
    status: str
    pages: int
    chunks: int
    error: str | None

    def to_json(self) -> dict[str, Any]:
        """Return the public JSON shape of the CLI's `ingest`."""
        return asdict(self)


def time_left_words(seconds: float) -> str:
    """ "about 40 s left", "about 3 min left" (a job's time left, for people)."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s left"
    return f"about {round(seconds / 60)} min left"


@dataclass(frozen=True)
class StageProgress:
    """A running job's place: stage, overall share 0..1, seconds left, and the stage's counts (if it has any)."""

    stage: str
    overall: float
    eta_s: float | None
    counts: dict[str, int]


@dataclass(frozen=True)
class PageImage:
    """One page of a source drawn for the viewer: a PNG and the page's size in PDF points."""

    page: int
    pages: int
    png: bytes
    width: float
    height: float


@dataclass(frozen=True)
class Figure:
    """A figure of a document (an image or a vector drawing) with its caption, as stored: its box on its page (PDF
    points, top-left origin), label ("Figure 3", "" without a caption), caption, the text inside it, the chunks of
    its page it sits beside (nearest first) and its thumbnail's file name ("" when none was written)."""

    id: str
    document_id: str
    ordinal: int
    rect: Rect
    label: str
    caption: str
    text: str
    kind: str
    chunk_ids: tuple[str, ...] = ()
    thumbnail: str = ""

    def to_json(self) -> dict[str, Any]:
        """Return the public JSON shape (the thumbnail by name; the API serves it by the figure's id)."""
        return {
            "id": self.id, "document_id": self.document_id, "ordinal": self.ordinal, "page": self.rect.page,
            "rect": self.rect.to_json(), "label": self.label, "caption": self.caption, "text": self.text,
            "kind": self.kind, "chunk_ids": list(self.chunk_ids), "has_thumbnail": bool(self.thumbnail),
        }

    def to_record(self) -> dict[str, Any]:
        """Everything, for a chat's saved answer (the thumbnail by its file name)."""
        return {**self.to_json(), "thumbnail": self.thumbnail}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Figure:
        """Rebuild a figure saved with `to_record`."""
        rect = data["rect"]
        return cls(
            id=data["id"], document_id=data["document_id"], ordinal=int(data["ordinal"]),
            rect=Rect(int(rect["page"]), rect["x0"], rect["y0"], rect["x1"], rect["y1"]), label=data["label"],
            caption=data["caption"], text=data["text"], kind=data["kind"], chunk_ids=tuple(data["chunk_ids"]),
            thumbnail=data.get("thumbnail", ""),
        )
