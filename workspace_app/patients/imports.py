"""Patient imports as worker jobs: checked and queued by a front end, run by the worker with progress, recovered
after a crash.

    front end --submit(path, patients)--> imports row (queued) + queue entry JobEntry.patient_import(id)
    worker --run--> the job engine: claim the import's lease (or skip) -> a Heartbeat renews it on its own thread
        -> PatientService.import_path, whose progress callback (after each batch of events) records
           (table, events stored, rows read of the counted totals, time left) and checks the heartbeat -> done (counts, bad rows) | failed (what to do)
        -> or interrupted: cancel -> cancelled (what was stored stays); shutdown -> queued again; lost -> left
    recover: queued/running imports that nobody runs (stale lease, owner process gone, or missing from the queue)
    are queued again. An import is idempotent by event id, so a re-run stores nothing twice and embeds only what
    the killed run had not.

It runs on the one job engine (workspace_app/jobs/: lease, heartbeat, settling) that document ingestion runs on.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from workspace_app.config import QueueSettings
from workspace_app.errors import ImportNotFoundError, ImportSourceError, WorkspaceError
from workspace_app.jobs.engine import Unfinished, recover_unfinished, run_leased
from workspace_app.jobs.entries import JobEntry
from workspace_app.jobs.leases import lease_is_dead
from workspace_app.models.events import ImportStep, PatientImport
from workspace_app.patients.events_file import SUFFIXES
from workspace_app.patients.mimic import is_mimic_dir
from workspace_app.patients.service import ImportProgress, PatientService
from workspace_app.storage.base import ImportStore, JobQueue, UploadFolder
from workspace_app.text.file_names import safe_file_name

log = logging.getLogger(__name__)


REFUSED_SOURCE = (
    "Nothing can be imported from that path. Patient records are imported only from a MIMIC-IV folder (holding "
    "hosp/admissions.csv.gz) or a .csv/.jsonl events file inside the server's import folders "
    "(WORKSPACE_PATIENTS__IMPORT_ROOTS; by default imports/ in the data dir), named in full or relative to one of "
    "them. Put the records there and give their path, or upload an events file."
)  # one message for every refused path: it must not tell a caller what exists on the server's disk


def confined_source(given: str, roots: Sequence[Path]) -> Path:
    """The importable source that `given` names inside one of `roots` (a relative path is tried under each), with
    symbolic links and `..` resolved first. Raises ImportSourceError(REFUSED_SOURCE) for anything else."""
    folders = [root.resolve() for root in roots]
    named = Path(given)
    for candidate in [named] if named.is_absolute() else [folder / named for folder in folders]:
        try:
            resolved = candidate.resolve()
            if any(resolved.is_relative_to(folder) for folder in folders):
                check_source(resolved)
                return resolved
        # A path the OS cannot look up (a NUL byte: ValueError; a name over NAME_MAX or PATH_MAX: OSError) is refused
        # like any other: it names nothing that can be imported.
        except (ImportSourceError, OSError, ValueError):
            continue
    raise ImportSourceError(REFUSED_SOURCE)


def check_source(path: Path) -> None:
    """Raise ImportSourceError unless the path is a MIMIC-IV folder or a .csv/.jsonl events file."""
    if not path.exists():
        raise ImportSourceError(f"Nothing is at {path} on the server. Check the path (it is read by the server, "
                                "not your browser) or upload an events file.")
    if path.is_dir() and not is_mimic_dir(path):
        raise ImportSourceError(f"{path} is a folder but not a MIMIC-IV one: it needs hosp/admissions.csv.gz "
                                "(give the folder that holds hosp/ and icu/).")
    if path.is_file() and path.suffix.lower() not in SUFFIXES:
        raise ImportSourceError(f"{path.name} is not an events file: give a .csv or .jsonl file with the fields "
                                "event_id, patient_id, timestamp, event_type, sub_type, content, or a MIMIC-IV folder.")


class PatientImports:
    """Queues, runs, follows and recovers patient imports; its dependencies are given, not reached through a facade."""

    def __init__(
        self, store: ImportStore, patients: PatientService, queue: JobQueue | None, settings: QueueSettings,
        uploads: UploadFolder, roots: Sequence[Path] = (),
    ) -> None:
        self._store = store
        self._patients = patients
        self._queue = queue
        self.settings = settings
        self._uploads = uploads
        self._roots = list(roots) or [uploads.root]

    def submit(self, path: Path, patients: Sequence[str] | None = None) -> PatientImport:
        """Check what is to be imported (any path this process can read: the CLI's and the UI's user's own) and queue
        it for the worker. Raises ImportSourceError."""
        path = path.expanduser().resolve()
        check_source(path)
        return self._queued(path, patients)

    def submit_from_roots(self, given: str, patients: Sequence[str] | None = None) -> PatientImport:
        """Queue the import of a path inside the import roots (what a remote caller may name), refusing any other
        with one message that says nothing of what exists. Raises ImportSourceError."""
        return self._queued(confined_source(given, self._roots), patients)

    def _queued(self, path: Path, patients: Sequence[str] | None) -> PatientImport:
        chosen = [p.strip() for p in patients or () if p.strip()]
        queue = self._job_queue()
        started = self._store.add_import(str(path), chosen)
        queue.enqueue(str(JobEntry.patient_import(started.import_id)))
        return started

    def save_upload(self, name: str, data: bytes) -> Path:
        """Keep an uploaded events file in the shared store (to be imported from there); returns its path here.
        Raises ImportSourceError for a file that is not .csv/.jsonl."""
        suffix = Path(name).suffix.lower()
        if suffix not in SUFFIXES:
            raise ImportSourceError(f"{name} is not an events file: upload a .csv or .jsonl file (a MIMIC-IV folder "
                                    "is imported by its path on the server).")
        file_name = f"{uuid.uuid4().hex[:8]}-{safe_file_name(Path(name).stem, suffix[1:], 'events')}"
        return self._uploads.save(file_name, data)

    def get(self, import_id: str) -> PatientImport:
        """One import. Raises ImportNotFoundError."""
        found = self._store.get_import(import_id)
        if found is None:
            raise ImportNotFoundError(f"No patient import {import_id!r}.")
        return self._with_health(found)

    def latest(self, limit: int = 5) -> list[PatientImport]:
        """The latest imports, newest first."""
        return [self._with_health(job) for job in self._store.list_imports(limit)]

    def _with_health(self, job: PatientImport) -> PatientImport:
        """The import, marked stalled when it is running but its worker's lease is dead."""
        if job.status != "running" or job.held_by is None:
            return job
        return replace(job, stalled=True) if _lease_is_dead(job, self.settings.lease_timeout_s) else job

    def cancel(self, import_id: str) -> str:
        """Stop an import (at its next batch when running); returns its status then."""
        self.get(import_id)
        return self._store.request_cancel(import_id)

    def run(
        self, import_id: str, owner: str, shutdown: threading.Event | None = None,
        on_progress: ImportProgress | None = None,
    ) -> str:
        """Run an import if its lease can be taken: 'done', 'failed', 'cancelled', 'requeued', 'lost' or 'skipped'.
        `on_progress` hears where it is (table, events stored, totals, time left) after each batch, once it is
        recorded."""
        job = _Import(self, import_id, on_progress)
        try:
            return run_leased(job, import_id, self._store, owner, self.settings.heartbeat_s, shutdown)
        except Exception as exc:  # a bug or an unreadable file: said in words, the traceback in the log
            log.exception("import %s crashed", import_id)
            self._store.fail_import(import_id, owner, f"The import stopped on an unexpected error ({type(exc).__name__}). "
                                    "The worker's log has the details; the events stored so far are kept, and "
                                    "importing again continues where it stopped.")
            return "failed"

    def recover(self) -> list[str]:
        """Queue again every unfinished import that nobody runs; returns their ids."""
        store = self._store
        unfinished = [
            Unfinished(JobEntry.patient_import(j.import_id), j.held_by, j.heartbeat_age_s,
                       store.cancel_requested(j.import_id))
            for j in store.active_imports()
        ]
        return recover_unfinished(self, unfinished, self._job_queue(), self.settings.lease_timeout_s)

    def release_dead(self, job: Unfinished) -> bool:
        """Recovery: free a dead holder's lease, the import queued again."""
        return self._store.release_to_queue(job.entry.job_id, job.holder or "")

    def settle_cancelled(self, job: Unfinished) -> None:
        """Recovery: an import whose cancel was asked ends cancelled (what it stored stays)."""
        self._store.request_cancel(job.entry.job_id)

    def _settle_interrupted(self, import_id: str, owner: str, reason: str) -> str:
        if reason == "cancel":
            self._store.cancel_import(import_id, owner)
            return "cancelled"
        if reason == "shutdown":
            if self._store.release_to_queue(import_id, owner):
                self._job_queue().enqueue(str(JobEntry.patient_import(import_id)), first=True)
            return "requeued"
        return "lost"

    def _job_queue(self) -> JobQueue:
        if self._queue is None:
            raise WorkspaceError("No job queue is configured: import with `workspace-app patients import` instead.")
        return self._queue


def _lease_is_dead(job: PatientImport, stale_after_s: float) -> bool:
    return lease_is_dead(job.heartbeat_age_s, job.held_by, stale_after_s)


@dataclass
class _Import:
    """One patient import as the job engine runs it (jobs/engine.py)."""

    imports: PatientImports
    import_id: str
    on_progress: ImportProgress | None
    _owner: str = ""

    def claim(self, owner: str) -> bool:
        self._owner = owner
        return self.imports._store.claim_import(self.import_id, owner, self.imports.settings.lease_timeout_s)

    def work(self, check: Callable[[], None]) -> str:
        store, owner = self.imports._store, self._owner
        job = self.imports.get(self.import_id)

        def progress(step: ImportStep) -> None:
            store.record_progress(self.import_id, owner, step)
            if self.on_progress is not None:
                self.on_progress(step)
            check()

        source = self.imports._uploads.local_copy(Path(job.path))  # an upload another machine took is fetched here
        report = self.imports._patients.import_path(source, job.patients or None, progress)
        return "done" if store.finish_import(self.import_id, owner, report) else "lost"

    def interrupted(self, owner: str, reason: str) -> str:
        return self.imports._settle_interrupted(self.import_id, owner, reason)

    def failed(self, owner: str, error: WorkspaceError) -> str:
        log.info("import %s failed: %s", self.import_id, error.user_message)
        self.imports._store.fail_import(self.import_id, owner, error.user_message)
        return "failed"

    def release(self, owner: str) -> None:
        """Nothing to release: the import's row was settled by its outcome."""
