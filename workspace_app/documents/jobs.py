"""Ingestion jobs: claim a document's lease, keep it alive while the pipeline runs, settle the outcome.

    front end --enqueue(document id)--> queue --> worker thread --run_job--> claim the lease (or skip)
        -> Heartbeat renews the lease every heartbeat_s on its own thread and notices cancel / a lost lease;
           its check (between pages and batches) also reads the cancel flag itself, at most every 0.2 s
        -> pipeline, which calls Heartbeat.check between pages and embedding batches, and every 0.1 s while a
           batch is embedded (the job leaves the batch to finish on its own thread) -> ready | failed
        -> or interrupted: cancel -> cancelled (chunks and vectors dropped); shutdown -> queued again;
           lost (another worker took over a lease we failed to renew) -> left to that worker
    recover_jobs: queued/running documents that nobody runs (stale lease, owner process gone, or missing from
    the queue) are queued again. Every pipeline write is idempotent by id, so a re-run ends exactly like a
    first run.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import Self

from storage.base import Catalog, JobQueue, Lease, VectorIndex
from workspace_app.config import QueueSettings
from workspace_app.documents.lifecycle import DocumentStates
from workspace_app.errors import WorkspaceError
from workspace_app.ingest.pipeline import JobInterrupted, ProgressCallback, StopCheck
from workspace_app.models.documents import Document, JobAttempt, JobState

log = logging.getLogger(__name__)
HOST = socket.gethostname()
WAIT_POLL_S = 0.5
CANCEL_READ_S = 0.2  # how often a running job reads its cancel flag between beats


def new_owner(kind: str = "worker") -> str:
    """A lease owner id naming this process: `<kind>@<host>:<pid>:<random>`."""
    return f"{kind}@{HOST}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def owner_is_gone(owner: str) -> bool:
    """True when the owner's process ran on this host and no longer exists (its lease is dead right away)."""
    try:
        where, pid_text, _ = owner.rsplit(":", 2)
        host, pid = where.split("@", 1)[1], int(pid_text)
    except (ValueError, IndexError):
        return False
    if host != HOST:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class Heartbeat:
    """Renews a job's lease on a thread; `check()` turns cancel, a lost lease or shutdown into JobInterrupted."""

    def __init__(
        self, leases: Lease, document_id: str, owner: str, interval_s: float, shutdown: threading.Event | None
    ) -> None:
        self._leases = leases
        self._document_id = document_id
        self._owner = owner
        self._interval_s = interval_s
        self._shutdown = shutdown
        self._reason: str | None = None
        self._cancel_read = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{document_id}", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    def check(self) -> None:
        """Raise JobInterrupted when the job must stop (called by the pipeline between pages and batches, and
        while it waits for the model). A cancel is also read here, so it is obeyed without waiting for a beat."""
        if self._reason is None and time.monotonic() - self._cancel_read >= CANCEL_READ_S:
            self._cancel_read = time.monotonic()
            try:
                if self._leases.cancel_requested(self._document_id):
                    self._reason = "cancel"
            except WorkspaceError:  # a busy catalog: the heartbeat reads it again
                pass
        if self._reason is not None:
            raise JobInterrupted(self._reason)
        if self._shutdown is not None and self._shutdown.is_set():
            raise JobInterrupted("shutdown")

    def _beat(self) -> None:
        while not self._done.wait(self._interval_s):
            try:
                state = self._leases.renew_lease(self._document_id, self._owner)
            except WorkspaceError as exc:  # a busy catalog: try again at the next beat
                log.warning("heartbeat of %s failed: %s", self._document_id, exc.user_message)
                continue
            if state != "ok":
                self._reason = state
                return


Ingest = Callable[[Document, ProgressCallback | None, StopCheck | None], Document]


class Jobs:
    """Runs, waits for and recovers ingestion jobs; its dependencies are given, not reached through a facade."""

    def __init__(
        self, catalog: Catalog, vectors: VectorIndex, queue: JobQueue | None, states: DocumentStates,
        settings: QueueSettings, ingest: Ingest,
    ) -> None:
        self.catalog = catalog
        self.vectors = vectors
        self.states = states
        self.settings = settings
        self._queue = queue
        self._ingest = ingest

    def queue(self) -> JobQueue:
        """The ingestion queue, or a clear error when the app was built without one."""
        if self._queue is None:
            raise WorkspaceError("No ingestion queue is configured for this service.")
        return self._queue

    def run(
        self, document_id: str, owner: str, shutdown: threading.Event | None = None,
        on_progress: ProgressCallback | None = None, attempt: JobAttempt | None = None,
    ) -> str:
        """Ingest one document if its lease can be taken: 'ready', 'failed', 'retrying', 'cancelled', 'requeued',
        'lost' or 'skipped'. 'retrying': it failed for a passing reason and `attempt` allows another try (the
        queue runs it after `attempt.retry_in_s`); after the last try a passing failure ends 'failed' too."""
        catalog = self.catalog
        attempt = attempt or JobAttempt()
        if not catalog.claim_document(document_id, owner, self.settings.lease_timeout_s):
            return "skipped"
        document = catalog.get_document(document_id)
        if document is None:
            return "skipped"
        self.states.attempting(document_id, attempt.number, attempt.of)
        outcome = "failed"
        try:
            with Heartbeat(catalog, document_id, owner, self.settings.heartbeat_s, shutdown) as heartbeat:
                self._ingest(document, on_progress, heartbeat.check)
            outcome = "ready"
        except JobInterrupted as stop:
            outcome = self._settle_interrupted(document_id, document.workspace_id, owner, stop.reason)
        except WorkspaceError as exc:
            outcome = self._settle_failed(document, owner, exc, attempt)
        finally:
            catalog.release_lease(document_id, owner)
            self._drop_if_removed(document_id, document.workspace_id)
        return outcome

    def _settle_failed(self, document: Document, owner: str, exc: WorkspaceError, attempt: JobAttempt) -> str:
        """A failure the pipeline recorded: a passing one (the vector store down for a moment) is queued again for
        the next try while tries are left, and the last one says how many were made."""
        if not exc.retryable or attempt.of == 1:
            log.info("%s failed: %s", document.name, exc.user_message)
            self.states.fail(document.id, exc.user_message, exc.retryable)
            return "failed"
        if attempt.is_last:
            log.warning("%s failed after %d tries: %s", document.name, attempt.number, exc.user_message)
            self.states.fail(
                document.id, f"{exc.user_message} (gave up after {attempt.number} tries; Retry once it is fixed)"
            )
            return "failed"
        log.warning("%s: try %d of %d failed (%s); next try in %.0f s", document.name, attempt.number, attempt.of,
                    exc.user_message, attempt.retry_in_s)
        self.states.release_to_retry(document.id, owner, exc.user_message, attempt.retry_in_s)
        return "retrying"

    def run_until_settled(self, document_id: str, owner: str, on_progress: ProgressCallback | None = None) -> str:
        """Run a document here, or wait while another live process runs it; returns the final status."""
        while True:
            outcome = self.run(document_id, owner, None, on_progress)
            document = self.catalog.get_document(document_id)
            if document is None:
                return "removed"
            if outcome != "skipped" or not document.is_active:
                return document.status
            if not self._release_if_dead(document_id):
                time.sleep(WAIT_POLL_S)

    def with_health(self, document: Document) -> Document:
        """The document, marked stalled when it is running but its holder's lease has expired or its process is
        gone (until a worker takes the job over)."""
        if document.status != "running" or document.held_by is None:
            return document
        age = None if document.heartbeat_at is None else time.time() - document.heartbeat_at
        job = JobState(document.id, document.workspace_id, document.status, document.held_by, age, False)
        return replace(document, stalled=True) if _lease_is_dead(job, self.settings.lease_timeout_s) else document

    def recover(self) -> list[str]:
        """Queue again every unfinished document that nobody runs; returns their ids."""
        catalog, queue = self.catalog, self.queue()
        pending = set(queue.pending_document_ids())
        requeued = []
        for job in catalog.list_jobs():
            if job.lease_owner is not None:
                if not _lease_is_dead(job, self.settings.lease_timeout_s):
                    continue
                if not self.states.release_to_queue(job.document_id, job.lease_owner, reset_progress=False):
                    continue
                log.warning("job %s of %s died; queueing it again", job.document_id, job.lease_owner)
            if job.cancel_requested:
                catalog.request_cancel(job.document_id)
                self.discard_outputs(job.document_id, job.workspace_id)
            elif job.document_id not in pending:
                queue.enqueue(job.document_id)
                requeued.append(job.document_id)
        return requeued

    def discard_outputs(self, document_id: str, workspace_id: str) -> None:
        """Drop a document's chunks, keyword rows and vectors (a cancelled run leaves nothing half-built)."""
        self.catalog.replace_chunks(document_id, workspace_id, [], [])
        self.vectors.delete_document(workspace_id, document_id)

    def _release_if_dead(self, document_id: str) -> bool:
        """Free the lease of a document whose holder is dead (e.g. a killed `ingest`); True when freed."""
        for job in self.catalog.list_jobs():
            if job.document_id == document_id and job.lease_owner and _lease_is_dead(job, self.settings.lease_timeout_s):
                return self.states.release_dead(document_id, job.lease_owner)
        return False

    def _settle_interrupted(self, document_id: str, workspace_id: str, owner: str, reason: str) -> str:
        if reason == "cancel":
            self.discard_outputs(document_id, workspace_id)
            self.states.release_cancelled(document_id, owner)
            return "cancelled"
        if reason == "shutdown":
            if self.states.release_to_queue(document_id, owner):
                self.queue().enqueue(document_id)
            return "requeued"
        return "lost"

    def _drop_if_removed(self, document_id: str, workspace_id: str) -> None:
        """A document removed while it ran may have had vectors written after the removal: drop them."""
        if self.catalog.get_document(document_id) is not None:
            return
        if self.catalog.find_workspace(workspace_id) is None:
            self.vectors.drop_workspace(workspace_id)
        else:
            self.vectors.delete_document(workspace_id, document_id)


def _lease_is_dead(job: JobState, stale_after_s: float) -> bool:
    stale = job.lease_age_s is None or job.lease_age_s > stale_after_s
    return stale or owner_is_gone(job.lease_owner or "")
