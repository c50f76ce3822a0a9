"""The CLI over patient records, in subprocesses as users run it: import an events file, list, events, related."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

Cli = Callable[..., subprocess.CompletedProcess[str]]
EVENTS = """event_id,patient_id,timestamp,event_type,sub_type,content
k1,p1,2024-05-01 08:00:00,lab,chemistry,Potassium 3.1 mmol/L (low; ref 3.5–5.1)
k2,p1,2024-05-01 09:00:00,order,prescription,Potassium Chloride 40 mEq PO
k3,p1,2024-05-01 10:00:00,nursing,administration,Potassium Chloride: Administered
k4,p1,2024-05-03 10:00:00,lab,chemistry,Sodium 140 mmol/L (ref 135–145)
k5,p1,yesterday,lab,chemistry,Sodium 139 mmol/L
"""


def test_import_list_events_and_related(cli: Cli, tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = tmp_path / "events.csv"
    source.write_text(EVENTS, encoding="utf-8")
    imported = cli(data, "patients", "import", source)
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["events"] == 4 and report["embedded"] == 4
    assert report["errors"] == ["events.csv:6: timestamp 'yesterday' is not a date-time (use 2024-05-01 13:45:00)."]
    assert "skipped events.csv:6" in imported.stderr

    listed = cli(data, "patients", "list", "--json")
    assert [json.loads(line)["events"] for line in listed.stdout.splitlines()] == [4]

    labs = cli(data, "events", "--patient", "p1", "--type", "lab", "--json")
    assert [json.loads(line)["event_id"] for line in labs.stdout.splitlines()] == ["k1", "k4"]

    related = cli(data, "related", "--patient", "p1", "--event", "k1", "--json")
    assert related.returncode == 0, related.stderr
    hits = json.loads(related.stdout)
    assert hits[0]["event_id"] == "k2" and "hypokalemia_to_kcl" in hits[0]["reasons"]["rule_hits"]
    assert set(hits[0]["reasons"]) >= {"sim_vec", "time_score", "concept_overlap", "rule_hits"}

    missing = cli(data, "related", "--patient", "p1", "--event", "nope")
    assert missing.returncode == 2 and missing.stderr.startswith("error: Patient 'p1' has no event 'nope'")

    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - name: a\n    weight: -1\n", encoding="utf-8")
    broken = cli(data, "related", "--patient", "p1", "--event", "k1", WORKSPACE_PATIENTS__RULES_FILE=str(rules))
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
    assert broken.stderr.startswith(f"error: {rules}: rule 1 (a): a rule needs at least one if_* key")


def test_import_in_the_background_queues_it_for_the_worker(cli: Cli, tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = tmp_path / "events.csv"
    source.write_text(EVENTS, encoding="utf-8")
    queued = cli(data, "patients", "import", source, "--background")
    assert queued.returncode == 0, queued.stderr
    job = json.loads(queued.stdout)
    assert (job["status"], job["path"], job["events"]) == ("queued", str(source.resolve()), 0)
    refused = cli(data, "patients", "import", tmp_path / "nowhere", "--background")
    assert refused.returncode == 2 and refused.stderr.startswith("error: Nothing is at")
    listed = cli(data, "patients", "imports")
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [job["id"]]
