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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from workspace_app.config import QueueSettings
from workspace_app.documents.lifecycle import DocumentStates
from workspace_app.errors import WorkspaceError
from workspace_app.ingest.pipeline import ProgressCallback, StopCheck
from workspace_app.jobs.engine import Unfinished, recover_unfinished, run_leased
from workspace_app.jobs.entries import JobEntry
from workspace_app.jobs.leases import lease_is_dead
from workspace_app.models.documents import Document, JobAttempt, JobState
from workspace_app.storage.base import Catalog, JobQueue, VectorIndex

log = logging.getLogger(__name__)
WAIT_POLL_S = 0.5


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
        job = _Ingestion(self, document_id, attempt or JobAttempt(), on_progress)
        return run_leased(job, document_id, self.catalog, owner, self.settings.heartbeat_s, shutdown)

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
        unfinished = [
            Unfinished(JobEntry.document(j.document_id), j.lease_owner, j.lease_age_s, j.cancel_requested)
            for j in self.catalog.list_jobs()
        ]
        return recover_unfinished(self, unfinished, self.queue(), self.settings.lease_timeout_s)

    def release_dead(self, job: Unfinished) -> bool:
        """Recovery: free a dead holder's lease, the document queued again with its progress kept."""
        return self.states.release_to_queue(job.entry.job_id, job.holder or "", reset_progress=False)

    def settle_cancelled(self, job: Unfinished) -> None:
        """Recovery: a document whose cancel was asked ends cancelled, with nothing half-built left."""
        self.catalog.request_cancel(job.entry.job_id)
        document = self.catalog.get_document(job.entry.job_id)
        if document is not None:  # a removed one took its outputs with it
            self.discard_outputs(document.id, document.workspace_id)

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
                self.queue().enqueue(str(JobEntry.document(document_id)), first=True)
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
    return lease_is_dead(job.lease_age_s, job.lease_owner, stale_after_s)


@dataclass
class _Ingestion:
    """One document's ingestion as the job engine runs it (jobs/engine.py)."""

    jobs: Jobs
    document_id: str
    attempt: JobAttempt
    on_progress: ProgressCallback | None
    document: Document | None = None

    def claim(self, owner: str) -> bool:
        jobs = self.jobs
        if not jobs.catalog.claim_document(self.document_id, owner, jobs.settings.lease_timeout_s):
            return False
        self.document = jobs.catalog.get_document(self.document_id)
        if self.document is None:
            return False
        jobs.states.attempting(self.document_id, self.attempt.number, self.attempt.of)
        return True

    def work(self, check: StopCheck) -> str:
        assert self.document is not None
        self.jobs._ingest(self.document, self.on_progress, check)
        return "ready"

    def interrupted(self, owner: str, reason: str) -> str:
        assert self.document is not None
        return self.jobs._settle_interrupted(self.document_id, self.document.workspace_id, owner, reason)

    def failed(self, owner: str, error: WorkspaceError) -> str:
        assert self.document is not None
        return self.jobs._settle_failed(self.document, owner, error, self.attempt)

    def release(self, owner: str) -> None:
        assert self.document is not None
        self.jobs.catalog.release_lease(self.document_id, owner)
        self.jobs._drop_if_removed(self.document_id, self.document.workspace_id)
