"""Related-event search (seed 004 §4) on a real demo patient: reasons, the window, weights, the baseline."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from workspace_app.errors import EventNotFoundError, PatientNotFoundError
from workspace_app.models.events import epoch_seconds
from workspace_app.patients.service import PatientService

FEATURES = ("sim_vec", "time_score", "concept_overlap", "rule_boost", "mined_link")


def _administration(app: Any) -> Any:
    return next(e for e in app.patients.events("10019917", "nursing") if e.source_table == "emar")


def test_related_events_come_with_their_reasons(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    query = _administration(app)
    hits = app.patients.related("10019917", query.event_id, top_k=10)
    assert 0 < len(hits) <= 10 and query.event_id not in {h["event_id"] for h in hits}
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    for hit in hits:
        reasons = hit["reasons"]
        assert set(FEATURES) | {"rule_hits"} <= set(reasons)
        assert all(0.0 <= reasons[f] <= 1.0 for f in FEATURES) and isinstance(reasons["rule_hits"], list)
        weighted = 0.1 * reasons["sim_vec"] + 0.2 * reasons["time_score"] + 0.15 * reasons["concept_overlap"]
        weighted += 0.15 * reasons["rule_boost"] + 0.5 * reasons["mined_link"]
        assert hit["score"] == pytest.approx(weighted, abs=2e-3)
        assert reasons["time_score"] == pytest.approx(math.exp(-abs(reasons["dt_h"]) / 6), abs=1e-3)


def test_the_window_bounds_temporal_recall(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    query = _administration(app)
    at = epoch_seconds(query.timestamp)
    hits = app.patients.related("10019917", query.event_id, top_k=1000, window_h=6)
    inside = {e.event_id for e in app.patients.events("10019917")
              if abs(epoch_seconds(e.timestamp) - at) <= 6 * 3600 and e.event_id != query.event_id}
    returned = {h["event_id"]: h["reasons"] for h in hits}
    assert inside <= set(returned)  # every event in the window is a candidate
    for event_id, reasons in returned.items():
        if "window" in reasons["recall"]:
            assert abs(reasons["dt_h"]) <= 6
        else:  # beyond the window only what the vector or the type prior recalled
            assert event_id not in inside and set(reasons["recall"]) <= {"vector", "type_prior"}


def test_weights_switch_features_off(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    query = _administration(app)
    hits = app.patients.related("10019917", query.event_id, top_k=5, weights={"w1": 0, "w2": 0, "w3": 0, "w4": 1, "w5": 0})
    assert all(h["score"] == pytest.approx(h["reasons"]["rule_boost"], abs=1e-3) for h in hits)
    with pytest.raises(ValueError, match="unknown weight 'w6'"):
        app.patients.related("10019917", query.event_id, weights={"w6": 1})


def test_the_baseline_is_plain_vector_search(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    query = _administration(app)
    similar = app.patients.similar("10019917", query.event_id, top_k=5)
    assert len(similar) == 5 and [h["score"] for h in similar] == sorted((h["score"] for h in similar), reverse=True)


def test_unknown_patients_and_events_are_errors_users_can_read(imported: tuple[Any, Any, Any]) -> None:
    app, _, _ = imported
    with pytest.raises(EventNotFoundError, match="has no event 'labevents:0'"):
        app.patients.related("10019917", "labevents:0")
    with pytest.raises(PatientNotFoundError, match="patients list"):
        app.patients.events("nobody")


def test_related_events_see_events_another_process_imported(build: Any, tmp_path: Path) -> None:
    """The worker imports in its own process: a page that already showed a patient's related events finds the
    events imported since, without a restart (its memory is checked against the record's size)."""
    app = build(tmp_path / "data")
    header = "event_id,patient_id,timestamp,event_type,sub_type,content\n"
    first = tmp_path / "first.csv"
    first.write_text(
        header + "k1,P1,2180-01-01 08:00:00,lab,chemistry,Potassium 3.0 mmol/L (low; ref 3.5-5.1)\n"
        "o1,P1,2180-01-01 09:00:00,order,medication,Potassium chloride 20 mEq oral\n",
        encoding="utf-8",
    )
    app.patients.import_path(first)
    assert [r["event_id"] for r in app.patients.related("P1", "k1")] == ["o1"]
    later = tmp_path / "later.csv"
    later.write_text(header + "a1,P1,2180-01-01 10:00:00,medication,administration,Potassium chloride 20 mEq given\n", encoding="utf-8")
    worker = PatientService(app.catalog.patients, app.embedder)  # another process's service over the same catalog
    worker.import_path(later)
    assert {r["event_id"] for r in app.patients.related("P1", "k1")} == {"o1", "a1"}
