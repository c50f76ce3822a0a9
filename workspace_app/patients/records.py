"""A patient's record as the cross-level answerer reads it (crosslevel.py's `PatientRecords`): the
patient's events, their similarity to a question, the concepts a text names, the standard definitions of the
codes events carry (ICD titles, lab item labels, kept at import), and the answer of the record's timeline to a
question about it (timeline_questions.py plans, timeline_tools.py finds)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from workspace_app.errors import PatientNotFoundError
from workspace_app.models.events import ConceptName, Event, Patient, TimelineFindings, VocabularyEntry
from workspace_app.patients.questions import concept_names
from workspace_app.patients.service import PatientService
from workspace_app.patients.timeline_questions import plan_question
from workspace_app.patients.timeline_tools import find_in_record

_ICD = re.compile(r"\(ICD-(9|10) ([0-9A-Z.]+)\)$")


class PatientRecordSource:
    """The patients service seen through the `PatientRecords` protocol of the answer package."""

    def __init__(self, patients: PatientService, recent_h: float = 24.0, relation_h: float = 24.0) -> None:
        """`recent_h`, `relation_h`: the timeline questions' windows without a duration (Settings.patients)."""
        self._patients = patients
        self._windows = (recent_h, relation_h)

    def concepts(self, text: str) -> list[ConceptName]:
        """The drug classes, drugs, diseases and labs a text names (English and Chinese)."""
        return concept_names(text)

    def events(self, patient_id: str) -> list[Event]:
        """The patient's events in time order. Raises PatientNotFoundError."""
        return self._patients.events(patient_id)

    def similarity(self, patient_id: str, text: str) -> dict[str, float]:
        """Cosine similarity of the text to each embedded event of the patient."""
        return self._patients.similarity(patient_id, text)

    def timeline(self, patient_id: str, question: str, language: str) -> TimelineFindings | None:
        """What the patient's timeline says to a question about it (None: the question is not about the timeline,
        or asks what the guidelines say). Raises PatientNotFoundError."""
        plan = plan_question(question, *self._windows)
        if not plan.is_timeline:
            return None
        # the patient's memory holds the events in time order and is kept while the record is unchanged, so a
        # second question about the same patient does not read every event again
        return find_in_record(plan, self._patients.memory(patient_id).events, patient_id, language)

    def patient(self, patient_id: str) -> Patient:
        """The patient (sex, age) as imported. Raises PatientNotFoundError."""
        found = next((p for p in self._patients.list() if p.patient_id == patient_id), None)
        if found is None:
            raise PatientNotFoundError(f"No patient {patient_id!r}. `workspace-app patients list` shows them.")
        return found

    def definitions(self, events: Sequence[Event]) -> list[tuple[str, VocabularyEntry]]:
        """(event id, definition) of the coded items among the events: diagnoses' ICD codes, labs' items."""
        found: list[tuple[str, VocabularyEntry]] = []
        for system, codes in _icd_codes(events).items():
            entries = {e.code: e for e in self._patients.definitions(system, sorted({c for _, c in codes}))}
            found += [(event_id, entries[code]) for event_id, code in codes if code in entries]
        labs = [e for e in events if e.source_table == "labevents"]
        if labs:
            items = sorted(self._patients.definitions("labitem"), key=lambda e: -len(e.title))
            for event in labs:
                entry = next((i for i in items if event.content.startswith(i.title + " ")), None)
                if entry is not None:
                    found.append((event.event_id, entry))
        return found


def _icd_codes(events: Sequence[Event]) -> dict[str, list[tuple[str, str]]]:
    """System ('icd9', 'icd10') -> (event id, code) of the coded diagnoses and procedures among the events."""
    codes: dict[str, list[tuple[str, str]]] = {}
    for event in events:
        match = _ICD.search(event.content)
        if match and event.source_table == "diagnoses_icd":
            codes.setdefault(f"icd{match[1]}", []).append((event.event_id, match[2]))
    return codes
