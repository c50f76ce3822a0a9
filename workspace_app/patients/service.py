"""The patients service: import records (a MIMIC-IV folder or a generic events file), list patients and their
events, and find an event's related events. The one way pages, the CLI and the benchmarks reach patient records.
"""

from __future__ import annotations

import builtins
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from workspace_app.embedding.embedder import Embedder, text_key
from workspace_app.errors import EventNotFoundError, PatientNotFoundError, UnsupportedFileError
from workspace_app.jobs.pace import Pace
from workspace_app.models.events import (
    TIME_FORMAT,
    Admission,
    Event,
    ImportReport,
    ImportStep,
    Patient,
    RowError,
    SimilarPatient,
    VocabularyEntry,
    parse_time,
)
from workspace_app.patients.concepts import extract_concepts
from workspace_app.patients.events_file import read_events_file
from workspace_app.patients.import_pace import ImportPace, count_lines
from workspace_app.patients.lexicon import Lexicon, load_lexicon
from workspace_app.patients.mimic import MimicReader, is_mimic_dir
from workspace_app.patients.related import TOP_N, PatientMemory, related_events, similar_events
from workspace_app.patients.rules import RuleSet, load_rules
from workspace_app.patients.similar import PatientIndex, Profile, profile_of
from workspace_app.storage.base import EventStore, VocabularyStore

ImportProgress = Callable[[ImportStep], None]
"""Called after each batch (and at the end of each table) with where the import is: table, events stored so far,
rows read of the totals, time left."""

BATCH = 2000
_FLAGS = {"↓": "low", "↑": "high", "!": "abnormal"}  # how an abnormal finding's flag reads in words
MEMORIES = 8  # patient memories kept in this process (each a few MB at most)


class PatientService:
    """Patient records over an event store, the app's embedder and a rule set."""

    def __init__(
        self, store: EventStore, embedder: Embedder, rules: RuleSet | Path | None = None,
        vocabulary: VocabularyStore | None = None, links: Path | None = None, sequence_weight: float = 0.1,
        similar_reranked: int = 20,
        pace: Callable[[], Pace] = Pace,
    ) -> None:
        """`vocabulary`: where the dictionaries' definitions of imported codes are kept (none: not kept). `rules`: a rule set, or the YAML file to read it from on first use (None: the shipped rules.yaml), so
        a broken user file fails related-event search with its message, not the whole application. `links`: a file of
        links learned from the record (mined_rules.yaml) added to the rules file's rules (None: no links). `pace`: measures
        each table's time left during an import (jobs/pace.py)."""
        self._store = store
        self._embedder = embedder
        self._vocabulary = vocabulary
        self._rules = rules if isinstance(rules, RuleSet) else None
        self._rules_file = None if isinstance(rules, RuleSet) else rules
        self._links_file = links
        self._sequence_weight = sequence_weight
        self._similar_reranked = similar_reranked
        self._pace = pace  # measures each table's time left during an import
        self._memories: dict[str, tuple[int, int, PatientMemory]] = {}  # (events, vectors, memory)
        self._profiles: dict[str, tuple[int, Profile]] = {}  # (events, profile): similar patients' profiles
        self._index: tuple[tuple[tuple[str, int], ...], PatientIndex] | None = None  # (patients' counts, index)
        self._titles: dict[str, str] = {}  # ICD concept -> its stored title
        self._lock = threading.Lock()

    @property
    def rules(self) -> RuleSet:
        """The rules and type priors (read and validated once). Raises RulesFileError."""
        if self._rules is None:
            self._rules = load_rules(self._rules_file, self._links_file)
        return self._rules

    # Import

    def import_path(
        self, path: Path, patients: Iterable[str] | None = None, on_progress: ImportProgress | None = None
    ) -> ImportReport:
        """Import a MIMIC-IV folder (only some patients, if given) or a generic events file; idempotent by event id.
        Raises UnsupportedFileError for anything else."""
        started = time.perf_counter()
        report = ImportReport(str(path))
        if path.is_dir() and is_mimic_dir(path):
            self._import_mimic(path, set(patients) if patients is not None else None, report, on_progress)
        elif path.is_file():
            header = int(path.suffix.lower() == ".csv")
            track = ImportPace([(path.name, max(count_lines(path) - header, 0))], self._pace)
            self._store_records(read_events_file(path), path.name, report, on_progress, track, header)
        else:
            raise UnsupportedFileError(
                f"{path} is neither a MIMIC-IV folder (with hosp/admissions.csv.gz) nor a .csv/.jsonl events file."
            )
        with self._lock:
            self._memories.clear()
        report.seconds = time.perf_counter() - started
        return report

    def _import_mimic(
        self, folder: Path, patients: set[str] | None, report: ImportReport, on_progress: ImportProgress | None
    ) -> None:
        reader = MimicReader(folder, patients)
        track = ImportPace([(name, max(count_lines(file) - 1, 0)) for name, file in reader.table_files()], self._pace)
        people = reader.read_patients()
        self._store.upsert_patients(people)
        admissions, admission_events = reader.read_admissions()
        self._store.upsert_admissions(admissions)
        report.patients, report.admissions = len(people), len(admissions)
        self._store_records(admission_events, "admissions", report, on_progress, track)
        for table, read in reader.event_tables():
            self._store_records(read(), table, report, on_progress, track)
        if self._vocabulary is not None:
            self._vocabulary.upsert_vocabulary(reader.vocabulary())

    def _store_records(
        self, records: Iterable[Event | RowError], source: str, report: ImportReport,
        on_progress: ImportProgress | None, track: ImportPace, header: int = 1,
    ) -> None:
        """Store and embed the records batch by batch; `on_progress` hears where the import is after each batch and
        once the table is read to its end. A record's line less the `header` lines is the rows read so far."""
        lexicon = load_lexicon()
        iterator = iter(records)
        while batch := list(itertools.islice(iterator, BATCH)):
            events = []
            for record in batch:
                if isinstance(record, RowError):
                    report.errors.append(record)
                elif not record.timestamp:
                    report.errors.append(RowError(source, record.source_row, "no time (its admission is unknown)."))
                else:
                    events.append(_prepared(record, lexicon))
            report.events += self._store.upsert_events(events)
            report.embedded += self._embed_missing(events)
            if on_progress:
                on_progress(track.step(source, report.events, _last_line(batch) - header))
        if on_progress:
            on_progress(track.finish(source, report.events))

    def _embed_missing(self, events: builtins.list[Event]) -> int:
        """Embed the events with no vector for this model (or one of an older text); returns how many."""
        model = self._embedder.model_id
        stored = self._store.vector_keys(model, [e.event_id for e in events])
        texts = [(e, e.embedding_text) for e in events]  # each made once: a regex over the content
        todo = [(e, text, key) for e, text in texts if stored.get(e.event_id) != (key := text_key(text))]
        if not todo:
            return 0
        vectors = self._embedder.embed_passages([text for _, text, _ in todo])
        self._store.put_vectors(model, {e.event_id: (key, v) for (e, _, key), v in zip(todo, vectors, strict=True)})
        return len(todo)

    # Reading

    def list(self) -> list[Patient]:
        """Every imported patient with counts."""
        return self._store.list_patients()

    def ids(self) -> builtins.list[str]:
        """Every imported patient's id (cheap: for pickers drawn on every run)."""
        return self._store.patient_ids()

    def admissions(self, patient_id: str) -> builtins.list[Admission]:
        """A patient's hospital stays in time order. Raises PatientNotFoundError."""
        admissions = self._store.admissions(patient_id)
        if not admissions:
            self._check_known(patient_id)
        return admissions

    def events(self, patient_id: str, event_type: str | None = None) -> builtins.list[Event]:
        """A patient's events in time order (of one type if given). Raises PatientNotFoundError."""
        events = self._store.events(patient_id, event_type)
        if not events:
            self._check_known(patient_id)
        return events

    def _check_known(self, patient_id: str) -> None:
        if not any(p.patient_id == patient_id for p in self._store.list_patients()):
            raise PatientNotFoundError(f"No patient {patient_id!r}. `workspace-app patients list` shows them.")

    def event(self, patient_id: str, event_id: str) -> Event:
        """One event of a patient. Raises EventNotFoundError."""
        event = self._store.get_event(event_id)
        if event is None or event.patient_id != patient_id:
            raise EventNotFoundError(f"Patient {patient_id!r} has no event {event_id!r}.")
        return event

    def memory(self, patient_id: str) -> PatientMemory:
        """The patient's events and vectors, built once and kept while the record is unchanged: an import by the
        worker (another process) adds events, which the count of events shows on the next call; a memory built
        while some events still had no vector is also checked against the count of vectors."""
        count = self._store.event_count(patient_id)
        with self._lock:
            found = self._memories.get(patient_id)
        if found is not None and found[0] == count:
            events, vectors, memory = found
            if vectors == events or self._store.vector_count(patient_id, self._embedder.model_id) == vectors:
                return memory
        ids, matrix = self._store.patient_vectors(patient_id, self._embedder.model_id)
        events_now = self.events(patient_id)
        memory = PatientMemory.build(events_now, ids, matrix)
        with self._lock:
            self._memories.pop(patient_id, None)
            if len(self._memories) >= MEMORIES:
                self._memories.pop(next(iter(self._memories)))
            self._memories[patient_id] = (len(events_now), len(ids), memory)
        return memory

    def definitions(self, system: str, codes: Sequence[str] | None = None) -> builtins.list[VocabularyEntry]:
        """The stored standard definitions of a code system ('icd9', 'icd10', 'labitem'), of some codes if given."""
        return self._vocabulary.vocabulary(system, codes) if self._vocabulary is not None else []

    def similarity(self, patient_id: str, text: str) -> dict[str, float]:
        """Cosine similarity of a text (a question) to each of the patient's embedded events, by event id."""
        memory = self.memory(patient_id)
        if not memory.events or not memory.vectors.any():
            return {}
        query = self._embedder.embed_query(text)
        if query.shape[0] != memory.vectors.shape[1]:
            return {}
        scores = memory.vectors @ query
        return {event.event_id: float(score) for event, score in zip(memory.events, scores, strict=True)}

    # Related events

    def related(
        self, patient_id: str, event_id: str, top_k: int = 20, window_h: float | None = 24,
        weights: Mapping[str, float] | None = None, tau_h: float = 6, top_n: int = TOP_N,
    ) -> builtins.list[dict[str, Any]]:
        """Events related to one event of a patient, best first, each with its score and reasons (seed 004 §4).
        Raises EventNotFoundError."""
        self.event(patient_id, event_id)
        return related_events(self.memory(patient_id), self.rules, event_id, top_k, window_h, weights, tau_h, top_n)

    # Similar patients

    def similar_patients(self, patient_id: str, top_k: int = 5) -> builtins.list[SimilarPatient]:
        """The imported patients most like this one (concept profile and event sequence), best first, each with
        the reasons in words. Raises PatientNotFoundError."""
        index = self._patient_index()
        if patient_id not in index.profiles:
            raise PatientNotFoundError(f"No patient {patient_id!r}. `workspace-app patients list` shows them.")
        return index.similar(patient_id, top_k, self._sequence_weight, self._concept_name)

    def _patient_index(self) -> PatientIndex:
        """The index of every patient's profile, built again when an import changed any patient's count of events
        (and then only those patients' profiles are read again)."""
        patients = self._store.list_patients()
        counts = tuple((p.patient_id, p.events) for p in patients)
        with self._lock:
            if self._index is not None and self._index[0] == counts:
                return self._index[1]
        profiles = []
        for patient in patients:
            with self._lock:
                found = self._profiles.get(patient.patient_id)
            if found is None or found[0] != patient.events:
                found = (patient.events, profile_of(patient, self._store.events(patient.patient_id)))
                with self._lock:
                    self._profiles[patient.patient_id] = found
            profiles.append(replace(found[1], patient=patient))
        index = PatientIndex(profiles, self._similar_reranked)
        with self._lock:
            self._index = (counts, index)
        return index

    def _concept_name(self, concept: str) -> str:
        """A concept in words: an ICD code by its stored title ("icd:4280" -> "Congestive heart failure,
        unspecified"), others without their kind ("drug:warfarin" -> "warfarin")."""
        kind, _, value = concept.partition(":")
        if kind == "icd":
            if concept not in self._titles:
                found = [e.title for system in ("icd9", "icd10") for e in self.definitions(system, [value])]
                self._titles[concept] = found[0] if found else f"ICD {value}"
            return self._titles[concept]
        if kind == "abnormal" and value[-1:] in _FLAGS:
            return f"{_FLAGS[value[-1]]} {value[:-1]}"
        return value or concept

    def similar(self, patient_id: str, event_id: str, top_k: int = 20) -> builtins.list[dict[str, Any]]:
        """Plain vector search among the patient's events (the baseline related() is measured against)."""
        self.event(patient_id, event_id)
        return similar_events(self.memory(patient_id), event_id, top_k)


def _last_line(batch: Sequence[Event | RowError]) -> int:
    """The file line of a batch's last record (records come in file order)."""
    last = batch[-1]
    return last.line if isinstance(last, RowError) else last.source_row


def _prepared(event: Event, lexicon: Lexicon) -> Event:
    """The event with its time in one format ('2182-01-09' -> '2182-01-09 00:00:00') and its concepts."""
    timestamp = parse_time(event.timestamp).strftime(TIME_FORMAT)
    return replace(event, timestamp=timestamp, concepts=extract_concepts(event, lexicon))
