"""The CLI's progress (issue 29 item 4, issue 28 item 5): `ingest` shows each stage's count and time left,
`patients import` each table's rows of the total and the time left, `documents` a running stage's time left;
"estimating" until the pace is measured, never a number made up before it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from workspace_app.adapters.cli import _document_line, stage_words
from workspace_app.ingest.pipeline import Progress
from workspace_app.models.documents import Document

Cli = Callable[..., subprocess.CompletedProcess[str]]
MEASURE_AT_ONCE = {"WORKSPACE_QUEUE__PACE_MIN_MEASURED_S": "0"}  # a fast machine finishes a stage within 1 s


@pytest.mark.slow
def test_ingest_shows_each_stage_with_its_time_left(cli: Cli, tmp_path: Path, excerpt: Callable[..., Path]) -> None:
    data = tmp_path / "data"
    assert cli(data, "workspace", "create", "W").returncode == 0
    done = cli(data, "ingest", "-w", "W", excerpt("mosca-2011-women-cvd.pdf", 10, 14),
               WORKSPACE_EMBEDDING__BATCH_SIZE="8", **MEASURE_AT_ONCE)
    assert done.returncode == 0, done.stderr
    shown = done.stderr.replace("\r", "\n")
    assert re.search(r"embedding \d+/(\d+), about \d+ s left in this step", shown), shown[-2000:]
    assert re.search(r"parsing \d+/5, (estimating the time left|about \d+ s left in this step)", shown), shown[-2000:]


@pytest.mark.slow
def test_patients_import_shows_the_rows_of_the_total_and_the_time_left(cli: Cli, tmp_path: Path) -> None:
    contents = ["Potassium 3.1 mmol/L (low)", "Potassium chloride 40 mEq PO", "Sodium 139 mmol/L", "INR 2.4 (high)"]
    source = tmp_path / "events.csv"
    source.write_text("event_id,patient_id,timestamp,event_type,sub_type,content\n" + "".join(
        f"e{n},P-{n % 7},2150-03-01 {n % 24:02d}:00:00,lab,Chemistry,{contents[n % 4]}\n" for n in range(9000)
    ), encoding="utf-8")
    done = cli(tmp_path / "data", "patients", "import", source, **MEASURE_AT_ONCE)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("Importing events.csv")]
    assert lines[0].startswith("Importing events.csv: 2,000 of 9,000 rows · 2,000 events stored · ")
    assert any(re.search(r"6,000 of 9,000 rows · 6,000 events stored · about \d+ s left$", line) for line in lines)
    assert lines[-1].startswith("Importing events.csv: 9,000 of 9,000 rows")


def test_documents_and_ingest_lines_say_estimating_waiting_or_the_time_left() -> None:
    running = Document(
        "d1", "w1", "notes.pdf", "0" * 64, 10, 12, 0, "running", "cross-language", 0.9, None, "2026-01-01",
        stage_done=0, stage_total=167,
    )
    assert _document_line(running).endswith("cross-language 90%, 0/167 · estimating the time left")
    waiting = replace(running, stage="embedding", stage_waiting=True)
    assert _document_line(waiting).endswith("embedding 90%, 0/167 · waiting for the model")
    measured = replace(running, stage_done=84, eta_s=42.0)
    assert _document_line(measured).endswith("cross-language 90%, 84/167 · about 42 s left in this step")
    assert stage_words(Progress("embedding", 0, 167, 0.25)) == "embedding 0/167, estimating the time left"
    assert stage_words(Progress("embedding", 0, 167, 0.25, None, True)) == "embedding 0/167, waiting for the model"
    assert stage_words(Progress("graph", 100, 167, 0.95, 130.0)) == "graph 100/167, about 2 min left in this step"
    assert stage_words(Progress("graph", 167, 167, 0.97, 0.0)) == "graph 167/167"
