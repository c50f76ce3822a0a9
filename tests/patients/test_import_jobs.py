"""Patient imports as worker jobs, on a real data dir through the worker's own job handler: queued after a check,
run to done with progress recorded after each batch, bad rows reported by line, a shutdown and a killed worker
recovered without duplicates, a cancel obeyed."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.adapters.worker import handle_job
from workspace_app.errors import ImportNotFoundError, ImportSourceError
from workspace_app.jobs.entries import JobEntry
from workspace_app.jobs.leases import HOST
from workspace_app.models.events import ImportStep

OWNER = "test@nowhere:1:x"
PATIENT = "10019917"  # the demo's smallest patient (tests/patients/conftest.py)
HEADER = "event_id,patient_id,timestamp,event_type,sub_type,content\n"
ROWS = [
    "j1,P-job,2150-03-01 08:00:00,lab,Chemistry,Potassium 3.1 mmol/L (low; ref 3.5–5.1)",
    "j2,P-job,2150-03-01 09:00:00,order,Medication,Potassium chloride 40 mEq PO",
    "j3,P-job,2150-03-01 10:00:00,nursing,Administration,Potassium chloride 40 mEq given",
    "j4,P-job,2150-03-02 07:00:00,lab,Chemistry,Potassium 4.0 mmol/L (ref 3.5–5.1)",
]
BAD = "j5,P-job,yesterday,lab,Chemistry,Sodium 139 mmol/L"  # line 6 of the file


@pytest.fixture
def app(tmp_path: Path, build: Callable[..., Any]) -> Any:
    made = build(tmp_path / "data")
    made.settings.queue.heartbeat_s = 0.1
    return made


def events_file(folder: Path, rows: list[str], name: str = "events.csv") -> Path:
    path = folder / name
    path.write_text(HEADER + "".join(row + "\n" for row in rows), encoding="utf-8")
    return path


def pending(app: Any) -> list[str]:
    return app.documents.jobs.queue().pending_document_ids()


def work(app: Any, import_id: str, shutdown: threading.Event | None = None) -> Any:
    """Run the queued import as the worker does (its job handler, with a queue entry's text)."""
    handle_job(app, str(JobEntry.patient_import(import_id)), OWNER, shutdown or threading.Event())
    return app.patient_imports.get(import_id)


def test_an_events_file_is_queued_run_to_done_and_reports_its_bad_rows(app: Any, tmp_path: Path) -> None:
    path = events_file(tmp_path, [*ROWS, BAD])
    queued = app.patient_imports.submit(path)
    assert (queued.status, queued.path) == ("queued", str(path.resolve()))
    assert pending(app) == [str(JobEntry.patient_import(queued.import_id))], "the worker finds it in the queue"
    assert app.patients.list() == [], "nothing is imported before the worker runs it"
    done = work(app, queued.import_id)
    assert done.status == "done" and done.finished_at is not None and done.held_by is None
    assert (done.table, done.events, done.patient_count, done.embedded) == ("events.csv", 4, 0, 4)
    assert done.error_count == 1 and done.first_errors[0].startswith("events.csv:6: timestamp 'yesterday'")
    assert [e.event_id for e in app.patients.events("P-job")] == ["j1", "j2", "j3", "j4"]


def test_progress_is_recorded_after_each_batch_while_it_runs(app: Any, demo: Path) -> None:
    queued = app.patient_imports.submit(demo, [PATIENT])
    seen: list[tuple[str, str, int]] = []
    stalls: list[bool] = []
    steps: list[Any] = []

    def listen(step: Any) -> None:
        shown = app.patient_imports.get(queued.import_id)  # what the Patients page reads at that moment
        seen.append((shown.status, shown.table, shown.events))
        stalls.append(shown.stalled)
        steps.append(step)
        assert (shown.table, shown.events) == (step.table, step.events) and shown.step == step

    assert app.patient_imports.run(queued.import_id, OWNER, None, listen) == "done"
    assert not any(stalled for stalled in stalls), "a live worker's import is not stalled"
    assert {status for status, _, _ in seen} == {"running"}
    tables = [table for _, table, _ in seen]
    assert tables[0] == "admissions" and len(set(tables)) >= 3, tables
    counts = [events for _, _, events in seen]
    assert counts == sorted(counts) and counts[-1] > 100
    # Totals counted before reading: every table of the demo is read to its end, rows and tables alike.
    assert {step.tables_total for step in steps} == {9} and steps[-1].table_number == 9
    assert steps[-1].rows_done == steps[-1].rows_total > 200_000, "the demo's rows in all (every patient's are read)"
    assert [s.rows_done for s in steps] == sorted(s.rows_done for s in steps)
    labevents = [s for s in steps if s.table == "labevents"]
    assert labevents[-1].table_done == labevents[-1].table_rows == 107_727
    done = app.patient_imports.get(queued.import_id)
    assert (done.status, done.patients, done.patient_count) == ("done", (PATIENT,), 1)
    assert done.events == counts[-1] == len(app.patients.events(PATIENT)) and done.admissions >= 1


@pytest.mark.parametrize("kind", ["missing", "folder", "text file"])
def test_what_cannot_be_imported_is_refused_before_queueing(app: Any, tmp_path: Path, kind: str) -> None:
    target = {"missing": tmp_path / "nowhere", "folder": tmp_path, "text file": tmp_path / "notes.txt"}[kind]
    if kind == "text file":
        target.write_text("not events", encoding="utf-8")
    with pytest.raises(ImportSourceError) as refused:
        app.patient_imports.submit(target)
    expected = {"missing": "Nothing is at", "folder": "not a MIMIC-IV one", "text file": "is not an events file"}
    assert expected[kind] in refused.value.user_message
    assert app.patient_imports.latest() == [] and pending(app) == []


def test_a_shutdown_between_batches_puts_it_back_in_the_queue(app: Any, tmp_path: Path) -> None:
    queued = app.patient_imports.submit(events_file(tmp_path, ROWS))
    stopping = threading.Event()
    stopping.set()
    requeued = work(app, queued.import_id, stopping)
    assert (requeued.status, requeued.held_by) == ("queued", None)
    assert pending(app).count(str(JobEntry.patient_import(queued.import_id))) == 2, "queued again for the next worker"
    done = work(app, queued.import_id)
    assert (done.status, done.events, done.embedded) == ("done", 4, 0), "the first run's vectors are kept"
    assert work(app, queued.import_id).status == "done", "the second queue entry finds it done and skips it"


def test_an_import_of_a_killed_worker_is_recovered_and_completes_without_duplicates(
    app: Any, tmp_path: Path
) -> None:
    path = events_file(tmp_path, ROWS)
    queued = app.catalog.imports.add_import(str(path), [])  # its queue entry went with the killed worker
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead_owner = f"worker@{HOST}:{int(gone.stdout)}:dead"
    assert app.catalog.imports.claim_import(queued.import_id, dead_owner, 60)
    # What the killed run had stored before it died: the first two events (same ids), embedded.
    (tmp_path / "before").mkdir()
    app.patients.import_path(events_file(tmp_path / "before", ROWS[:2]))
    app.catalog.imports.record_progress(queued.import_id, dead_owner, ImportStep("events.csv", 2))
    stalled = app.patient_imports.get(queued.import_id)
    assert (stalled.status, stalled.events, stalled.stalled) == ("running", 2, True), "the page can say so"
    assert app.patient_imports.recover() == [queued.import_id]
    assert app.patient_imports.get(queued.import_id).status == "queued"
    assert pending(app) == [str(JobEntry.patient_import(queued.import_id))]
    done = work(app, queued.import_id)
    assert (done.status, done.events, done.embedded) == ("done", 4, 2), "only the missing events are embedded"
    assert [e.event_id for e in app.patients.events("P-job")] == ["j1", "j2", "j3", "j4"]
    assert app.patient_imports.recover() == [], "a finished import is not queued again"


def test_a_cancel_stops_a_queued_import_at_once(app: Any, tmp_path: Path) -> None:
    queued = app.patient_imports.submit(events_file(tmp_path, ROWS))
    assert app.patient_imports.cancel(queued.import_id) == "cancelled"
    assert work(app, queued.import_id).status == "cancelled"
    assert app.patients.list() == []
    with pytest.raises(ImportNotFoundError):
        app.patient_imports.get("nope")


def test_a_cancel_stops_a_running_import_at_its_next_batch(app: Any, tmp_path: Path) -> None:
    queued = app.patient_imports.submit(events_file(tmp_path, ROWS))

    def cancel_now(step: ImportStep) -> None:
        app.patient_imports.cancel(queued.import_id)

    assert app.patient_imports.run(queued.import_id, OWNER, None, cancel_now) == "cancelled"
    stopped = app.patient_imports.get(queued.import_id)
    assert (stopped.status, stopped.held_by) == ("cancelled", None) and stopped.finished_at is not None


def test_an_import_whose_lease_was_taken_over_is_not_reported_done_by_the_old_worker(app: Any, tmp_path: Path) -> None:
    queued = app.patient_imports.submit(events_file(tmp_path, ROWS))

    def taken_over(step: ImportStep) -> None:  # our heartbeat stalled and another worker took the import
        assert app.catalog.imports.claim_import(queued.import_id, "other@nowhere:2:y", -1)

    assert app.patient_imports.run(queued.import_id, OWNER, None, taken_over) == "lost"
    running = app.patient_imports.get(queued.import_id)
    assert (running.status, running.held_by, running.finished_at) == ("running", "other@nowhere:2:y", None)


def test_an_uploaded_events_file_is_kept_under_the_data_dir_and_imported_from_there(app: Any) -> None:
    data = (HEADER + "".join(row + "\n" for row in ROWS)).encode()
    saved = app.patient_imports.save_upload("ward 7 <export>.csv", data)
    assert saved.parent == app.settings.storage.data_dir / "imports" and saved.suffix == ".csv"
    assert saved.read_bytes() == data and "<" not in saved.name
    queued = app.patient_imports.submit(saved)
    assert work(app, queued.import_id).events == 4
    with pytest.raises(ImportSourceError, match="upload a .csv or .jsonl file"):
        app.patient_imports.save_upload("notes.pdf", b"%PDF-1.7")


def test_an_import_has_its_total_and_time_left_once_half_done(tmp_path: Path, embedder: Any) -> None:
    """Issue 28 item 5: a run through the worker's job handler records, from its halfway point on, the rows of the
    whole import and the time left (in the table and in all), measured in this run, where the page reads it."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path / "data"
    settings.queue.pace_min_measured_s = 0.0  # any measured batch gives an estimate (a fast machine is done in < 1 s)
    app = build_app(settings, embedder=embedder)
    try:
        contents = ["Potassium 3.1 mmol/L (low)", "Potassium chloride 40 mEq PO", "Sodium 139 mmol/L", "INR 2.4 (high)"]
        rows = [f"e{n},P-{n % 7},2150-03-01 {n % 24:02d}:00:00,lab,Chemistry,{contents[n % 4]}" for n in range(9000)]
        queued = app.patient_imports.submit(events_file(tmp_path, rows))  # 5 batches of 2,000 rows
        half: list[Any] = []

        def listen(step: Any) -> None:
            if 2 * step.rows_done >= step.rows_total > step.rows_done and not half:
                half.append(app.patient_imports.get(queued.import_id))

        assert app.patient_imports.run(queued.import_id, OWNER, None, listen) == "done"
    finally:
        app.catalog.close()
    [shown] = half
    assert (shown.step.rows_total, shown.step.table_rows, shown.step.tables_total) == (9000, 9000, 1)
    assert shown.step.eta_s is not None and shown.step.eta_s > 0 and shown.step.table_eta_s == shown.step.eta_s
    assert "6,000 of 9,000 rows" in shown.step.in_words() and shown.step.in_words().endswith(" s left")


def test_the_time_left_in_all_is_shown_while_a_new_table_is_not_measured_yet() -> None:
    """Issue 29 item 4: right after a table ends, the next one has no pace of its own yet; the time left in all
    then counts its rows at the whole run's pace (the import's halfway point often falls there), never nothing."""
    from workspace_app.jobs.pace import Pace
    from workspace_app.patients.import_pace import ImportPace

    now = [0.0]
    pace = ImportPace([("labevents", 1000), ("emar", 600), ("poe", 400)], lambda: Pace(15.0, 1.0), lambda: now[0])
    for rows in (250, 500, 750):
        now[0] += 2.5
        pace.step("labevents", rows, rows)
    now[0] = 10.0
    pace.finish("labevents", 1000)  # 1,000 rows in 10 s: 100 rows a second so far
    started = pace.step("emar", 0, 0)
    assert started.table_eta_s is None, "the new table is not measured yet"
    assert started.eta_s == 10.0, "its 600 rows and the next table's 400 at the run's pace"
