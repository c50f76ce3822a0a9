"""Plain data of patient records (seed 004): patients, admissions, clinical events and import reports."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from workspace_app.models.documents import time_left_words

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")  # a value, dose, rate, code or clock time


def parse_time(text: str) -> datetime:
    """A record's time ('2180-05-07 00:19:00', '2180-05-07', ISO 'T' forms) as an aware UTC datetime.

    Raises ValueError for anything else."""
    value = datetime.fromisoformat(text.strip())
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def epoch_seconds(text: str) -> float:
    """Seconds since the epoch of a record's time (MIMIC dates are shifted into the 2100s: still fine)."""
    return parse_time(text).timestamp()


@dataclass(frozen=True)
class Event:
    """One clinical event of one patient, with where it came from and the hospital's own link keys."""

    event_id: str
    patient_id: str
    timestamp: str
    event_type: str
    sub_type: str
    content: str
    source_table: str = ""
    source_row: int = 0
    links: Mapping[str, str] = field(default_factory=dict)
    concepts: tuple[str, ...] = ()
    admission_id: str = ""

    @property
    def embedding_text(self) -> str:
        """What is embedded: a short type label, then the content with each number as '#' (seed 004 §3; no id, no
        time). A vector says what kind of event this is (which test, drug, order, and its direction: "low", "high");
        values are compared as numbers where they count (timelines, guideline targets). Without its numbers the
        demo's 33,087 distinct event texts are 6,310, each embedded once (bench/README.md, "The whole demo")."""
        return f"[{self.event_type}/{self.sub_type}] {_NUMBER.sub('#', self.content)}"

    def to_json(self) -> dict[str, Any]:
        """The event as JSON (a public contract: keys are only ever added)."""
        return {
            "event_id": self.event_id, "patient_id": self.patient_id, "timestamp": self.timestamp,
            "event_type": self.event_type, "sub_type": self.sub_type, "content": self.content,
            "source_table": self.source_table, "source_row": self.source_row, "links": dict(self.links),
            "concepts": list(self.concepts), "admission_id": self.admission_id,
        }


@dataclass(frozen=True)
class VocabularyEntry:
    """A standard definition of a code the records use: an ICD diagnosis title, a lab item's label.

    `system` is 'icd9', 'icd10' or 'labitem'; `detail` says more where the dictionary does (a lab's fluid and
    category); `source` names the dictionary it was read from."""

    system: str
    code: str
    title: str
    detail: str = ""
    source: str = ""


@dataclass(frozen=True)
class ConceptName:
    """A concept of the patients lexicon as a text names it: its key ('class:anticoagulant') and its names in
    English and Chinese ('anticoagulant', '抗凝药')."""

    key: str
    name: str
    name_zh: str = ""

    @property
    def kind(self) -> str:
        """The concept's kind: 'class', 'drug', 'disease', 'lab'..."""
        return self.key.split(":", 1)[0]


@dataclass(frozen=True)
class TimelineHit:
    """Events of one content (the same order, result or administration) found for a timeline question: the one
    cited (the nearest to the question's reference time) and how many others there were, from when to when."""

    event: Event
    repeats: int = 0
    first_time: str = ""
    last_time: str = ""


@dataclass(frozen=True)
class TimelineFindings:
    """What the record says to a question about a patient's timeline, in the question's language: a lead sentence
    (what was looked for, over which time) and the events found; or, when the record does not say, the sentence
    that says so (`hits` empty). `anchor` is the event a before/after question is relative to; `more` counts the
    contents found but not listed."""

    lead: str
    hits: tuple[TimelineHit, ...] = ()
    anchor: Event | None = None
    more: int = 0


@dataclass(frozen=True)
class Admission:
    """One hospital stay of a patient."""

    admission_id: str
    patient_id: str
    admit_time: str
    discharge_time: str
    admission_type: str = ""


@dataclass(frozen=True)
class Patient:
    """A patient with what the catalog holds about them."""

    patient_id: str
    gender: str = ""
    age: int | None = None
    admissions: int = 0
    events: int = 0
    first_time: str = ""
    last_time: str = ""

    def to_json(self) -> dict[str, Any]:
        """The patient as JSON."""
        return {
            "patient_id": self.patient_id, "gender": self.gender, "age": self.age, "admissions": self.admissions,
            "events": self.events, "first_time": self.first_time, "last_time": self.last_time,
        }


@dataclass(frozen=True)
class SimilarPatient:
    """Another patient like the one asked about, with the measures and the reasons in words."""

    patient: Patient
    score: float
    profile: float  # cosine of the weighted concept profiles
    sequence: float | None  # share of shared concept pairs in the same order (None: too few to say)
    shared: tuple[str, ...]  # shared concepts' names, most telling first
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """As the CLI and the API return it."""
        return {
            "patient_id": self.patient.patient_id, "gender": self.patient.gender, "age": self.patient.age,
            "score": round(self.score, 4), "profile": round(self.profile, 4),
            "sequence": None if self.sequence is None else round(self.sequence, 4),
            "shared": list(self.shared), "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class RowError:
    """A row of an input file that was not imported, and why."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


@dataclass
class ImportReport:
    """What an import did: rows read and kept, vectors made, rows refused."""

    source: str
    patients: int = 0
    admissions: int = 0
    events: int = 0
    embedded: int = 0
    seconds: float = 0.0
    errors: list[RowError] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (errors as 'file:line: message')."""
        return {
            "source": self.source, "patients": self.patients, "admissions": self.admissions, "events": self.events,
            "embedded": self.embedded, "seconds": round(self.seconds, 2), "errors": [str(e) for e in self.errors],
        }


IMPORT_ACTIVE = ("queued", "running")


@dataclass(frozen=True)
class ImportStep:
    """Where a running import is, after a batch: the table (or file) being read and the events stored so far; the
    rows of that table read of its total, its number (from 1) of all tables, the rows of all tables read of their
    total (the totals are counted before reading); the seconds left in the table and in the whole import at the pace
    measured in this run (None while not measured yet)."""

    table: str
    events: int
    table_done: int = 0
    table_rows: int = 0
    table_number: int = 0
    tables_total: int = 0
    rows_done: int = 0
    rows_total: int = 0
    table_eta_s: float | None = None
    eta_s: float | None = None

    def in_words(self) -> str:
        """ "Importing labevents (table 4 of 9): 52,000 of 107,727 rows · 61,210 events stored · about 40 s left in
        this table, about 2 min in all"; "estimating the time left…" until the pace is measured."""
        text = f"Importing {self.table}"
        if self.tables_total > 1:
            text += f" (table {self.table_number} of {self.tables_total})"
        text += f": {self.table_done:,} of {self.table_rows:,} rows · {self.events:,} events stored"
        if self.table_eta_s is None or self.eta_s is None:
            return f"{text} · estimating the time left…"
        if self.tables_total > 1:
            in_all = time_left_words(self.eta_s).replace(" left", " in all")
            return f"{text} · {time_left_words(self.table_eta_s)} in this table, {in_all}"
        return f"{text} · {time_left_words(self.eta_s)}"


@dataclass(frozen=True)
class PatientImport:
    """An import of patient records run by a worker: what it reads, how far it got, how it ended.

    `status` is queued, running, done, failed or cancelled; `table` is the table or file being read and `events`
    how many events are stored so far; once done, the counts and the first bad rows (as 'file:line: why') are set;
    a failed import says why in `error`. `held_by`/`heartbeat_age_s` name the worker running it."""

    import_id: str
    path: str
    patients: tuple[str, ...] = ()
    status: str = "queued"
    table: str = ""
    events: int = 0
    patient_count: int = 0
    admissions: int = 0
    embedded: int = 0
    error_count: int = 0
    first_errors: tuple[str, ...] = ()
    error: str = ""
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    held_by: str | None = None
    heartbeat_age_s: float | None = None
    stalled: bool = False  # running, but its worker's lease expired or its process is gone (until one takes it over)
    step: ImportStep | None = None  # totals and time left while it runs (None before its first batch)

    @property
    def is_active(self) -> bool:
        """Whether a worker still has it to do (queued) or does it now (running)."""
        return self.status in IMPORT_ACTIVE

    def to_json(self) -> dict[str, Any]:
        """The import as JSON."""
        return {
            "id": self.import_id, "path": self.path, "patients": list(self.patients), "status": self.status,
            "table": self.table, "events": self.events, "patient_count": self.patient_count,
            "admissions": self.admissions, "embedded": self.embedded, "error_count": self.error_count,
            "first_errors": list(self.first_errors), "error": self.error, "created_at": self.created_at,
            "started_at": self.started_at, "finished_at": self.finished_at, "stalled": self.stalled,
            "progress": asdict(self.step) if self.step is not None else None,
        }
