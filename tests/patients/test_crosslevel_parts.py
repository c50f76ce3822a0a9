"""The parts of a cross-level answer that need no index: the patient-free question, the concepts a question names,
which of a patient's events are chosen, and how a patient citation is exported."""

from __future__ import annotations

from workspace_app.answer.export import citation_line
from workspace_app.models.answers import Citation
from workspace_app.models.events import Event
from workspace_app.patients.crosslevel import patient_free, without_patient
from workspace_app.patients.patient_evidence import choose_events, event_sentence, score_events
from workspace_app.patients.questions import concept_names

QUESTION = "Is this patient's anticoagulation in line with the AF guideline?"


def test_question_concepts_in_english_and_chinese() -> None:
    english = [c.key for c in concept_names(QUESTION)]
    chinese = [c.key for c in concept_names("该患者的抗凝治疗是否符合房颤指南？")]
    assert english == chinese == ["class:anticoagulant", "disease:atrial fibrillation"]
    assert [c.key for c in concept_names("Is the INR on target?")] == ["lab:inr(pt)"]
    assert concept_names("What time is it?") == []


def test_patient_free_question() -> None:
    concepts = concept_names(QUESTION)
    assert patient_free(concepts, "en") == (
        "What is recommended for anticoagulation in patients with atrial fibrillation?"
    )
    assert patient_free(concepts, "zh") == "心房颤动患者的抗凝治疗推荐什么？"
    assert patient_free([], "en") == ""
    assert without_patient(QUESTION) == "Is anticoagulation in line with the AF guideline?"
    assert without_patient("该患者的抗凝治疗是否符合指南？") == "抗凝治疗是否符合指南？"


def _event(event_id: str, time: str, sub_type: str, content: str, *concepts: str) -> Event:
    return Event(event_id, "p1", time, "order", sub_type, content, concepts=concepts)


EVENTS = [
    _event("d1", "2150-01-01 08:00:00", "diagnosis", "Diagnosis: Atrial fibrillation", "disease:atrial fibrillation"),
    _event("w1", "2150-01-01 12:00:00", "prescription", "Prescription: Warfarin 5 mg", "class:anticoagulant", "drug:warfarin"),
    _event("w2", "2150-01-02 12:00:00", "prescription", "Prescription: Warfarin 5 mg", "class:anticoagulant", "drug:warfarin"),
    _event("k1", "2150-01-02 13:00:00", "prescription", "Prescription: Potassium chloride", "class:potassium supplement"),
]


def test_events_sharing_a_concept_are_chosen_repeats_grouped() -> None:
    keys = ["class:anticoagulant", "disease:atrial fibrillation"]
    chosen = choose_events(score_events(EVENTS, keys, {"w1": 0.4, "w2": 0.6}), keys)
    assert [p.event.event_id for p in chosen] == ["d1", "w1"]
    warfarin = chosen[1]
    assert warfarin.repeats == 1 and warfarin.last_time == "2150-01-02 12:00:00"
    assert event_sentence(warfarin, "en") == (
        "2150-01-01 12:00: Prescription: Warfarin 5 mg (and 1 more time until 2150-01-02 12:00)"
    )
    assert choose_events(score_events(EVENTS, ["class:statin"], {}), ["class:statin"]) == []


def test_exported_patient_citation_names_its_level() -> None:
    citation = Citation(2, "w1", "Patient p1", "", 0, 0, "order/prescription", "Prescription: Warfarin 5 mg", (), (),
                        1.0, level="patient", patient_id="p1", event_id="w1")
    assert citation_line(citation) == "2. Patient p1, (patient), order/prescription: “Prescription: Warfarin 5 mg”"
