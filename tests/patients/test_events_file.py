"""The generic events file (CSV or JSON Lines): bad rows reported with their line numbers, good rows kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workspace_app.errors import UnsupportedFileError
from workspace_app.models.events import Event, RowError
from workspace_app.patients.events_file import read_events_file

HEADER = "event_id,patient_id,timestamp,event_type,sub_type,content\n"


def test_a_bad_csv_row_is_reported_by_line_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text(
        HEADER
        + "e1,p1,2024-05-01 08:00:00,lab,chemistry,Potassium 3.1 mmol/L (low; ref 3.5–5.1)\n"
        + "e2,p1,not a time,order,prescription,Potassium chloride 40 mEq PO\n"
        + "e3,p1,2024-05-01 09:00:00,order,,Furosemide 40 mg IV\n"
        + "e4,p1,2024-05-01T10:30:00,nursing,administration,Potassium chloride given\n",
        encoding="utf-8",
    )
    records = list(read_events_file(path))
    errors = [r for r in records if isinstance(r, RowError)]
    assert [(e.line, e.source) for e in errors] == [(3, "events.csv"), (4, "events.csv")]
    assert "timestamp 'not a time'" in errors[0].message and "sub_type" in errors[1].message
    kept = [r for r in records if isinstance(r, Event)]
    assert [e.event_id for e in kept] == ["e1", "e4"] and kept[1].timestamp == "2024-05-01 10:30:00"
    assert kept[0].source_row == 2


def test_a_bad_jsonl_line_is_reported(tmp_path: Path) -> None:
    good = {"event_id": "e1", "patient_id": "p1", "timestamp": "2024-05-01 08:00", "event_type": "lab",
            "sub_type": "chemistry", "content": "BNP 900 pg/mL (high; ref 0–100)"}
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([json.dumps(good), "{not json", json.dumps({**good, "event_id": "e2", "extra": 1})]))
    records = list(read_events_file(path))
    assert isinstance(records[0], Event)
    assert str(records[1]).startswith("events.jsonl:2: not valid JSON")
    assert str(records[2]) == (
        "events.jsonl:3: unknown field(s): extra; allowed: event_id, patient_id, timestamp, event_type, sub_type, "
        "content."
    )


def test_a_wrong_header_or_suffix_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text("id,patient,when\n1,2,3\n")
    with pytest.raises(UnsupportedFileError, match="the header must be exactly event_id"):
        list(read_events_file(path))
    with pytest.raises(UnsupportedFileError, match=r"\.csv or \.jsonl"):
        list(read_events_file(tmp_path / "events.xlsx"))


def test_the_service_imports_the_good_rows_and_reports_the_bad(imported: tuple[Any, Any, Any], tmp_path: Path) -> None:
    app, _, _ = imported
    path = tmp_path / "other-system.csv"
    path.write_text(
        HEADER + "x1,other-1,2024-05-01 08:00:00,lab,chemistry,钾 3.1↓\n"
        + "x2,other-1,2024-05-01 09:00:00,order,prescription,氯化钾 口服\n" + "x3,other-1,,order,prescription,?\n",
        encoding="utf-8",
    )
    report = app.patients.import_path(path)
    assert report.events == 2 and [str(e) for e in report.errors] == ["other-system.csv:4: missing or empty: timestamp."]
    [lab] = app.patients.events("other-1", "lab")
    assert "abnormal:potassium↓" in lab.concepts
    hits = app.patients.related("other-1", "x1")
    assert hits[0]["event_id"] == "x2" and hits[0]["reasons"]["rule_hits"] == ["hypokalemia_to_kcl"]
