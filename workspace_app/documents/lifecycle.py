"""The one owner of a document's state: status, stage, progress, counts and error, as typed transitions.

    queued --start--> running --progress(stage...)--> ready
       ^                 |--fail(message)--> failed --requeue--> queued
       |                 |--cancelled--> cancelled --requeue--> queued
       +--requeue (a dead job, a shutdown)--+
       +--release_to_retry (a passing failure; next_try_at set until the next try starts)--+

Every write of these columns goes through `DocumentStates`; nothing else calls the repository's untyped
`update_document` or passes state columns to `release_lease` (tests/test_layering.py checks it).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from workspace_app.models.documents import StageProgress
from workspace_app.storage.base import DocumentRepository, JobLeases


class DocumentStates:
    """Typed transitions of document rows over the documents repository and the job leases."""

    def __init__(self, documents: DocumentRepository, leases: JobLeases) -> None:
        self._documents = documents
        self._leases = leases

    def start(self, document_id: str) -> None:
        """A worker took the job: running, parsing, counters reset."""
        self._documents.update_document(
            document_id, status="running", stage="parsing", progress=0.0, error=None, eta_s=None,
            pages_parsed=0, chunks_embedded=0, chunks_total=0, stage_done=0, stage_total=0, stage_waiting=0,
            error_retryable=1,
        )

    def progress(self, document_id: str, step: StageProgress) -> None:
        """Where a running job is."""
        self._documents.update_document(
            document_id, stage=step.stage, status="running", progress=step.overall, eta_s=step.eta_s, **step.counts
        )

    def parsed(self, document_id: str, pages: int, pages_without_text: Sequence[int]) -> None:
        """The page count and the pages that had no text, known once parsing ends."""
        self._documents.update_document(document_id, pages=pages, pages_without_text=tuple(pages_without_text))

    def ready(self, document_id: str, pages: int, chunks: int) -> None:
        """Every chunk is searchable."""
        self._documents.update_document(
            document_id, status="ready", stage="ready", progress=1.0, chunks=chunks, pages=pages, error=None,
            eta_s=None, chunks_embedded=chunks, chunks_total=chunks,
        )

    def fail(self, document_id: str, message: str, retryable: bool = True) -> None:
        """The job (or queueing it) failed with a message the user can act on. A permanent failure (the file
        itself cannot be used: running it again ends the same) also leaves chat, and offers no retry."""
        permanent = {} if retryable else {"included": 0}
        self._documents.update_document(
            document_id, status="failed", stage="failed", error=message, eta_s=None, error_retryable=int(retryable),
            **permanent,
        )

    def attempting(self, document_id: str, attempt: int, attempts: int) -> None:
        """Which try of the job now runs (1 of 1 when the queue allows no retry)."""
        self._documents.update_document(document_id, attempt=attempt, attempts=attempts, next_try_at=None)

    def release_to_retry(self, document_id: str, owner: str, message: str, retry_in_s: float) -> bool:
        """A try failed for a passing reason: queued again, saying why and when the next try starts."""
        return self._leases.release_lease(
            document_id, owner, status="queued", stage="queued", progress=0.0, eta_s=None, error=message,
            next_try_at=time.time() + retry_in_s,
        )

    def include(self, document_id: str, included: bool) -> None:
        """Switch a source on or off for chat."""
        self._documents.update_document(document_id, included=int(included))

    def requeue(self, document_id: str, statuses: Sequence[str]) -> bool:
        """Back to queued when the document is in one of `statuses`; True when it changed."""
        return self._leases.requeue_document(document_id, statuses)

    def release_cancelled(self, document_id: str, owner: str) -> bool:
        """A cancelled job lets go of its lease: cancelled, progress reset."""
        return self._leases.release_lease(
            document_id, owner, status="cancelled", stage="cancelled", progress=0.0, eta_s=None, cancel_requested=0
        )

    def release_to_queue(self, document_id: str, owner: str, *, reset_progress: bool = True) -> bool:
        """A job that stopped early (shutdown, a dead holder) goes back to the queue."""
        if reset_progress:
            return self._leases.release_lease(document_id, owner, status="queued", stage="queued", progress=0.0, eta_s=None)
        return self._leases.release_lease(document_id, owner, status="queued", stage="queued", eta_s=None)

    def release_dead(self, document_id: str, owner: str) -> bool:
        """Free the lease of a holder that died (a killed `ingest`), leaving progress as it was."""
        return self._leases.release_lease(document_id, owner, status="queued", stage="queued")
