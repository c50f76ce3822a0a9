"""MIMIC-IV import into the real catalog: idempotent by event id, nothing embedded twice, lab text and flags,
the hospital's own link keys kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workspace_app.errors import PatientNotFoundError
from workspace_app.patients.mimic import MimicReader, lab_content, lab_direction


def test_reimport_updates_rows_and_embeds_nothing(imported: tuple[Any, Any, Any]) -> None:
    app, first, second = imported
    assert first.events > 150 and not first.errors
    assert first.embedded == first.events
    assert second.events == first.events and second.embedded == 0
    [patient] = [p for p in app.patients.list() if p.patient_id == "10019917"]
    assert patient.events == first.events and patient.admissions >= 1


def test_event_ids_are_the_tables_own_keys(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    events = app.patients.events("10019917")
    ids = [e.event_id for e in events]
    assert len(ids) == len(set(ids))
    assert {e.source_table for e in events} >= {"labevents", "emar", "poe", "prescriptions", "inputevents", "admissions"}
    assert all(e.event_id.startswith(e.source_table + ":") for e in events)
    assert all(e.source_row >= 2 for e in events)  # line 1 is the header
    assert [e.timestamp for e in events] == sorted(e.timestamp for e in events)


def test_administrations_and_orders_keep_the_hospitals_link_keys(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    emar = app.patients.events("10019917", "nursing")
    administrations = [e for e in emar if e.source_table == "emar"]
    assert administrations and all("poe_id" in e.links for e in administrations)
    orders = {e.event_id for e in app.patients.events("10019917", "order")}
    assert any(f"poe:{e.links['poe_id']}" in orders for e in administrations)
    infusions = [e for e in emar if e.source_table == "inputevents"]
    assert infusions and all("linkorderid" in e.links for e in infusions)


def test_lab_results_read_as_a_clinician_writes_them(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    labs = app.patients.events("10019917", "lab")
    low = [e for e in labs if "(low; ref" in e.content]
    assert low, "some result of this patient is below its range"
    label = low[0].content.split(" ")[0].lower()
    assert any(c.startswith("abnormal:") and c.endswith("↓") and label in c for c in low[0].concepts)
    valued = [e for e in labs if e.sub_type != "microbiology" and "(no value)" not in e.content]
    assert valued and all("lab:" in " ".join(e.concepts) for e in valued)


def test_lab_content_and_direction() -> None:
    row = {"valuenum": "3.10", "value": "3.1", "valueuom": "mmol/L", "ref_range_lower": "3.5", "ref_range_upper": "5.1",
           "flag": "abnormal"}
    assert lab_content("Potassium", row) == "Potassium 3.1 mmol/L (low; ref 3.5–5.1)"
    assert lab_direction("6", "3.5", "5.1", "abnormal") == "high"
    assert lab_direction("", "", "", "abnormal") == "abnormal"
    assert lab_content("Potassium", {**row, "valuenum": "4.0", "flag": ""}) == "Potassium 4 mmol/L (ref 3.5–5.1)"


def test_reading_a_few_patients_filters_every_table(demo: Path) -> None:
    reader = MimicReader(demo, {"10019917"})
    admissions, _ = reader.read_admissions()
    assert admissions and {a.patient_id for a in admissions} == {"10019917"}
    diagnoses = list(reader.diagnoses())
    assert diagnoses and all(e.patient_id == "10019917" and e.timestamp for e in diagnoses)
    assert all(e.content.startswith("Diagnosis: ") and "(ICD-" in e.content for e in diagnoses)


def test_admissions_are_listed_per_patient(imported: tuple[Any, Any, Any]) -> None:
    app, first, _ = imported
    admissions = app.patients.admissions("10019917")
    assert len(admissions) == first.admissions >= 1
    assert all(a.patient_id == "10019917" and a.admit_time <= a.discharge_time for a in admissions)
    assert {e.admission_id for e in app.patients.events("10019917", "admission")} <= {a.admission_id for a in admissions}
    with pytest.raises(PatientNotFoundError):
        app.patients.admissions("nobody")
