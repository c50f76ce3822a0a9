"""Leases on document rows and job recovery, in one process on real SQLite files: one holder at a time,
heartbeats, cancel, and re-queueing of jobs whose worker is gone; migration 2 on an old catalog."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.adapters.ownership import release_data_dir
from workspace_app.jobs.leases import new_owner, owner_is_gone
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.storage.sqlite.migrations import MIGRATIONS


@pytest.fixture
def service(tmp_path: Path, build: Callable[..., Any]) -> Any:
    made = build(tmp_path / "data")
    made.workspaces.create("W")
    return made


@pytest.fixture
def queued(service: Any, tmp_path: Path) -> Any:
    """A queued text document (nothing runs it: there is no worker)."""
    source = tmp_path / "notes.md"
    source.write_text("# Notes\n\nBeta blockers after myocardial infarction.\n", encoding="utf-8")
    report = service.documents.submit("W", source)
    assert report.status == "queued"
    return service.catalog.get_document(report.document_id)


def dead_owner() -> str:
    """The owner id of a process that has exited (on this host)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return new_owner("worker").replace(f":{os.getpid()}:", f":{child.stdout.strip()}:")


def test_only_one_holder_until_the_lease_goes_stale(service: Any, queued: Any) -> None:
    catalog = service.catalog
    assert catalog.claim_document(queued.id, "a@elsewhere:1:x", stale_after_s=30)
    assert not catalog.claim_document(queued.id, "b@elsewhere:2:y", stale_after_s=30)
    assert catalog.get_document(queued.id).status == "running"
    time.sleep(0.05)
    assert catalog.claim_document(queued.id, "b@elsewhere:2:y", stale_after_s=0.01)  # a's heartbeat is old
    assert catalog.renew_lease(queued.id, "a@elsewhere:1:x") == "lost"
    assert catalog.renew_lease(queued.id, "b@elsewhere:2:y") == "ok"


def test_cancel_is_immediate_when_queued_and_cooperative_when_running(service: Any, queued: Any, tmp_path: Path) -> None:
    catalog = service.catalog
    assert catalog.request_cancel(queued.id) == "cancelled"
    assert not catalog.claim_document(queued.id, "a@elsewhere:1:x", 30)  # a cancelled job is never started

    assert service.documents.retry("W", queued.id).status == "queued"
    assert catalog.claim_document(queued.id, "a@elsewhere:1:x", 30)
    assert not catalog.cancel_requested(queued.id)
    assert catalog.request_cancel(queued.id) == "running"
    assert catalog.cancel_requested(queued.id)  # what a running job reads between its steps
    assert catalog.renew_lease(queued.id, "a@elsewhere:1:x") == "cancel"
    assert service.documents.get("W", queued.id).cancel_requested
    assert not catalog.cancel_requested("no-such-document")


def test_a_removed_document_loses_its_lease(service: Any, queued: Any) -> None:
    assert service.catalog.claim_document(queued.id, "a@elsewhere:1:x", 30)
    service.documents.remove("W", queued.id)
    assert service.catalog.renew_lease(queued.id, "a@elsewhere:1:x") == "lost"


def test_recovery_requeues_jobs_of_dead_workers_only(service: Any, queued: Any, tmp_path: Path) -> None:
    catalog, queue = service.catalog, service.documents.jobs.queue()
    assert queue.pending_document_ids() == [queued.id]
    queue._huey.dequeue()  # a worker takes the job (huey deletes it from the queue) and dies before claiming it
    assert service.documents.jobs.recover() == [queued.id]
    assert service.documents.jobs.recover() == []  # in the queue again: not twice
    assert queue.pending_document_ids() == [queued.id]

    alive = new_owner("worker")  # this process
    assert catalog.claim_document(queued.id, alive, 30)
    assert service.documents.jobs.recover() == []
    assert catalog.get_document(queued.id).status == "running"
    assert catalog.release_lease(queued.id, alive, status="queued")

    gone = dead_owner()
    assert owner_is_gone(gone) and not owner_is_gone(alive)
    assert catalog.claim_document(queued.id, gone, 30)
    assert service.documents.jobs.recover() == []  # its job is still waiting in the queue: nothing to add
    document = catalog.get_document(queued.id)
    assert (document.status, document.stage) == ("queued", "queued")  # freed at once, not after 30 s
    assert catalog.claim_document(queued.id, alive, 30)


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_a_dead_workers_job_goes_ahead_of_the_waiting_ones(
    backend: str, tmp_path: Path, build: Callable[..., Any], request: pytest.FixtureRequest
) -> None:
    """It waited its turn once already: taken over, it runs next, not after every job queued since."""
    service = build(tmp_path / "data", queue_url=request.getfixturevalue("redis_url") if backend == "redis" else "")
    service.workspaces.create("W")
    ids = []
    for name in ("first", "second", "third"):
        source = tmp_path / f"{name}.md"
        source.write_text(f"# {name}\n\nBeta blockers after myocardial infarction.\n", encoding="utf-8")
        ids.append(service.documents.submit("W", source).document_id)
    queue = service.documents.jobs.queue()
    assert type(queue._huey).__name__ == {"sqlite": "SqliteHuey", "redis": "PriorityRedisHuey"}[backend]
    assert queue.pending_document_ids() == ids  # in the order they were queued
    assert queue._huey.dequeue().args[0] == ids[0]  # a worker takes the first job...
    assert service.catalog.claim_document(ids[0], dead_owner(), 30)  # ...and dies holding it
    assert service.documents.jobs.recover() == [ids[0]]
    assert queue.pending_document_ids() == ids  # back at the head, ahead of the two queued after it
    assert [queue._huey.dequeue().args[0] for _ in ids] == ids
    queue._huey.flush()


def test_a_job_whose_holder_is_gone_shows_stalled_with_who_held_it_until_a_worker_takes_it(
    service: Any, queued: Any, cli: Callable[..., Any], tmp_path: Path
) -> None:
    catalog = service.catalog
    gone = dead_owner()
    assert catalog.claim_document(queued.id, gone, 30)
    shown = service.documents.get("W", queued.id)
    assert shown.status == "running" and shown.stalled
    note = shown.job_note(time.time())
    assert note is not None and note.startswith(f"stalled: {gone.rsplit(':', 1)[0]} stopped answering at ")
    release_data_dir(tmp_path / "data")  # this process's App is idle while the CLI process owns the embedded store
    listed = cli(tmp_path / "data", "documents", "-w", "W", "--json")
    row = json.loads(listed.stdout.splitlines()[0])
    assert row["stalled"] is True and row["note"].startswith("stalled: ") and row["held_by"] == gone
    assert "\tstalled\t" in cli(tmp_path / "data", "documents", "-w", "W").stdout

    alive = new_owner("worker")  # a live holder with a fresh heartbeat is not stalled
    assert catalog.release_lease(queued.id, gone, status="queued")  # what the worker's recovery does
    assert catalog.claim_document(queued.id, alive, 30)
    assert not service.documents.get("W", queued.id).stalled
    time.sleep(0.05)
    service.documents.jobs.settings.lease_timeout_s = 0.01  # ...until its heartbeat is older than the lease timeout
    assert service.documents.get("W", queued.id).stalled


def test_process_job_skips_a_document_that_is_already_ready(service: Any, queued: Any) -> None:
    assert service.documents.jobs.run(queued.id, "w@elsewhere:1:x") == "ready"
    assert service.documents.jobs.run(queued.id, "w@elsewhere:1:x") == "skipped"
    document = service.catalog.get_document(queued.id)
    assert document.status == "ready" and document.chunks == document.chunks_total == document.chunks_embedded > 0
    assert (document.progress, document.eta_s) == (1.0, None)


def test_migration_2_upgrades_an_existing_catalog(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (1)")
        db.execute("INSERT INTO workspaces VALUES ('w1', 'Old', '2025-01-01T00:00:00+00:00')")
        db.execute(
            "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, pages, chunks, status, "
            "stage, progress, added_at, updated_at) VALUES ('d1', 'w1', 'old.pdf', 'abc', 10, 'application/pdf', 3, "
            "7, 'ready', 'ready', 1.0, '2025-01-01', '2025-01-01')"
        )
    catalog = SqliteCatalog(path)
    document = catalog.get_document("d1")
    catalog.close()
    assert document is not None and (document.status, document.chunks, document.included) == ("ready", 7, True)
    assert (document.pages_parsed, document.chunks_total, document.eta_s, document.cancel_requested) == (0, 0, None, False)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == len(MIGRATIONS)
