"""Similar patients: imported records compared by the concepts they name and the order those came in, with the
reasons in words; through the service and the CLI (the API: tests/api/test_patients_api.py)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.errors import PatientNotFoundError

# Four records: a and b name atrial fibrillation, then warfarin, then a high INR, then metoprolol, in that order;
# c names the same four in the reverse order; d names only pneumonia and ceftriaxone; every record names a
# sodium (a concept every patient has says little about likeness).
ORDERED = [
    ("history", "diagnosis", "Atrial fibrillation"),
    ("order", "prescription", "Warfarin 5 mg PO daily"),
    ("lab", "chemistry", "INR(PT) 3.9 (high; ref 0.9-1.1)"),
    ("order", "prescription", "Metoprolol tartrate 25 mg PO"),
]
OTHER = [("history", "diagnosis", "Pneumonia"), ("order", "prescription", "Ceftriaxone 1 g IV")]
SODIUM = ("lab", "chemistry", "Sodium 140 mmol/L (ref 135-145)")


def _rows(patient: str, events: list[tuple[str, str, str]]) -> list[str]:
    return [
        f"{patient}-{i},{patient},2024-05-{i + 1:02d} 08:00:00,{kind},{sub},{content}"
        for i, (kind, sub, content) in enumerate([SODIUM, *events])
    ]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("similar") / "events.csv"
    lines = [
        *_rows("a", ORDERED), *_rows("b", ORDERED), *_rows("c", ORDERED[::-1]), *_rows("d", OTHER),
    ]
    path.write_text("event_id,patient_id,timestamp,event_type,sub_type,content\n" + "\n".join(lines) + "\n",
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def app(records: Path, build: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    app = build(tmp_path_factory.mktemp("similar-data") / "data")
    assert app.patients.import_path(records).events == 18
    return app


def test_the_same_concepts_in_the_same_order_rank_first_with_reasons(app: Any) -> None:
    found = app.patients.similar_patients("a", top_k=5)
    assert [s.patient.patient_id for s in found] == ["b", "c", "d"]  # not a itself
    b, c, d = found
    assert b.profile == pytest.approx(c.profile) and b.profile > 0.99  # the same concepts, as often
    assert d.shared == ("sodium",) and d.score < 0.1  # only what every record names
    assert b.sequence == 1.0 and c.sequence is not None and c.sequence < 0.5  # the same order; reversed (but sodium)
    assert b.score > c.score
    assert {"warfarin", "atrial fibrillation", "high inr(pt)"} <= set(b.shared)
    assert b.shared[-1] == "sodium"  # what every record names comes last
    assert any("warfarin" in reason and "atrial fibrillation" in reason for reason in b.reasons)
    assert any("in the same order" in reason for reason in b.reasons)
    assert f"{round(c.sequence * 25)} of 25 pairs of these came in the same order" in c.reasons
    assert [s.patient.patient_id for s in app.patients.similar_patients("a", top_k=1)] == ["b"]


def test_an_unknown_patient_is_reported(app: Any) -> None:
    with pytest.raises(PatientNotFoundError, match="patients list"):
        app.patients.similar_patients("nobody")


@pytest.mark.slow
def test_the_cli_lists_similar_patients(
    cli: Callable[..., subprocess.CompletedProcess[str]], records: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    assert cli(data, "patients", "import", records).returncode == 0
    listed = cli(data, "patients", "similar", "--patient", "a", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["patient_id"] for r in rows] == ["b", "c", "d"] and rows[0]["reasons"] and rows[0]["sequence"] == 1.0
    assert cli(data, "patients", "similar", "--patient", "a", "--top-k", "1").stdout.startswith("b\t")
    unknown = cli(data, "patients", "similar", "--patient", "nobody")
    assert unknown.returncode != 0 and "patients list" in unknown.stderr
