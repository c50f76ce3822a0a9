"""Concepts found at import by lexicon and rules: drug classes in English and Chinese, lab abnormalities ↑/↓."""

from __future__ import annotations

from workspace_app.models.events import Event
from workspace_app.patients.concepts import concept_overlap, extract_concepts


def _concepts(event_type: str, content: str) -> tuple[str, ...]:
    return extract_concepts(Event("e", "p", "2150-01-01 00:00:00", event_type, "", content))


def test_lab_abnormalities_take_their_direction_and_one_name() -> None:
    assert _concepts("lab", "Potassium 3.1 mmol/L (low; ref 3.5–5.1)") == ("abnormal:potassium↓", "lab:potassium")
    assert _concepts("lab", "钾 3.1↓") == ("abnormal:potassium↓", "lab:potassium")
    assert "abnormal:ntprobnp↑" in _concepts("lab", "BNP 900 pg/mL (high; ref 0–100)")
    assert _concepts("lab", "Anion Gap 10 mEq/L (ref 8–20)") == ("lab:anion gap",)
    assert _concepts("order", "Potassium 3.1 (low)") == ()  # only lab events are read as results


def test_drugs_bring_their_class_in_either_language() -> None:
    english = _concepts("order", "Prescription: Furosemide 40 mg IV (main)")
    assert {"drug:furosemide", "class:diuretic"} <= set(english)
    assert "class:diuretic" in _concepts("order", "呋塞米 20mg 静推")
    assert "disease:infection" in _concepts("history", "Diagnosis: Sepsis, unspecified organism (ICD-10 A419)")
    assert "drug:heparin" in _concepts("order", "Heparin Flush") and _concepts("order", "Noheparinx") == ()


def test_overlap_weighs_classes_and_abnormal_findings_more() -> None:
    assert concept_overlap(("class:diuretic", "drug:furosemide"), ("class:diuretic", "drug:torsemide")) == 2.0 / 5.0
    assert concept_overlap(("lab:sodium",), ()) == 0.0
