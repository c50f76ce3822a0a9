"""Worker adapter: `workspace-app worker` takes jobs from the queue: document ingestion (the pipeline) and patient
imports (typed queue entries, `workspace_app.jobs.entries.JobEntry`; imports run by `app.patient_imports`). Both
run on the one job engine (`workspace_app.jobs`): lease, heartbeat, settling.

The embedding model is loaded before the first job is taken: a worker that cannot load it exits (the
supervisor retries with backoff) and leaves every job queued, instead of failing them one by one.
One process runs `queue.worker_threads` jobs at once, so parsing of one document overlaps embedding of
another. At start, and every `queue.sweep_s`, it queues again the jobs nobody runs (e.g. those of a worker
killed mid-job). On SIGINT/SIGTERM running jobs stop at their next page or batch and go back to the queue.
While it takes jobs it keeps a beacon in `<shared dir>/run/workers/` (`adapters.liveness`), read by `/health`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from workspace_app.adapters.liveness import WorkerBeacon
from workspace_app.app import App
from workspace_app.config import Settings
from workspace_app.errors import WorkspaceError
from workspace_app.jobs.entries import JobEntry
from workspace_app.jobs.leases import new_owner
from workspace_app.models.documents import JobAttempt
from workspace_app.storage.base import RetryJob

log = logging.getLogger("workspace_app.worker")


def run_worker(settings: Settings, threads: int | None = None) -> int:
    """Consume jobs until told to stop; returns the process exit code."""
    from workspace_app.adapters.wiring import build_app, chroma_location

    if chroma_location(settings)[1] is None:
        log.warning("no Chroma server configured or running: using the embedded store (one process only)")
    app = build_app(settings, role="workspace-app worker")
    owner = new_owner("worker")
    shutdown = threading.Event()
    if not _load_model(app):
        return 1
    _recover(app)
    threading.Thread(target=_sweep, args=(app, shutdown), name="sweeper", daemon=True).start()
    count = threads or settings.queue.worker_threads
    log.info("worker %s consuming with %d threads", owner, count)
    with WorkerBeacon(settings.shared_dir, owner, settings.queue.heartbeat_s):
        app.documents.jobs.queue().consume(
            lambda document_id, attempt: handle_job(app, document_id, owner, shutdown, attempt),
            threads=count, poll_max_delay_s=settings.queue.poll_max_delay_s, on_stop=shutdown.set,
        )
    log.info("worker %s stopped", owner)
    return 0


def handle_job(
    app: App, queued: str, owner: str, shutdown: threading.Event, attempt: JobAttempt | None = None
) -> None:
    """Run the job a queue entry names (`JobEntry`: a document to ingest or a patient import) and log what became
    of it. The job's row holds the outcome; the only exception raised is `RetryJob`, for the queue to run a
    document again after its back-off."""
    entry = JobEntry.parse(queued)
    if entry.kind == "import":
        # Its row holds the outcome; a failure is not retried: it says what to fix.
        _logged("import", entry.job_id, owner, lambda: app.patient_imports.run(entry.job_id, owner, shutdown))
        return
    document_id = entry.job_id
    outcome = _logged(
        "job", document_id, owner, lambda: app.documents.jobs.run(document_id, owner, shutdown, attempt=attempt)
    )
    if outcome == "retrying":
        raise RetryJob(queued)
    if outcome == "ready":
        _suggest_when_settled(app, document_id)


def _logged(kind: str, job_id: str, owner: str, run: Callable[[], str]) -> str | None:
    """Run a job and log its outcome, or what stopped it (None then)."""
    started = time.monotonic()
    try:
        outcome = run()
    except WorkspaceError as exc:
        log.error("%s %s: %s", kind, job_id, exc.user_message)
        return None
    except Exception:
        log.exception("%s %s crashed", kind, job_id)
        return None
    log.info("%s %s %s in %.1f s by %s", kind, job_id, outcome, time.monotonic() - started, owner)
    return outcome


def _suggest_when_settled(app: App, document_id: str) -> None:
    """After the last document of a batch, find the workspace's suggested questions (checked with the answerer)
    here, so the empty chat shows them at once."""
    document = app.catalog.get_document(document_id)
    if document is None or any(d.is_active for d in app.documents.list(document.workspace_id)):
        return
    started = time.monotonic()
    try:
        found = app.suggestions.suggest(document.workspace_id)
    except WorkspaceError as exc:
        log.warning("suggested questions of workspace %s: %s", document.workspace_id, exc.user_message)
        return
    except Exception:  # the chat page finds them itself then
        log.exception("suggested questions of workspace %s failed", document.workspace_id)
        return
    log.info("%d suggested questions for workspace %s in %.1f s", len(found), document.workspace_id,
             time.monotonic() - started)


def _load_model(app: App) -> bool:
    """Load the embedding model (in this thread, before any job runs); False when it cannot be loaded."""
    started = time.monotonic()
    try:
        app.embedder.load()  # the whole model: its vector length alone is known without it (the numpy runner)
        dimension = app.embedder.dimension
    except WorkspaceError as exc:
        log.error("%s", exc.user_message, exc_info=exc.__cause__)
        return False
    log.info("embedding model ready (%d dimensions) after %.1f s", dimension, time.monotonic() - started)
    return True


def _recover(app: App) -> None:
    for kind, recover in (("jobs", app.documents.jobs.recover), ("imports", app.patient_imports.recover)):
        try:
            requeued = recover()
        except WorkspaceError as exc:
            log.error("recovering %s failed: %s", kind, exc.user_message)
            continue
        if requeued:
            log.info("queued %d unfinished %s again: %s", len(requeued), kind, ", ".join(requeued))


def _sweep(app: App, shutdown: threading.Event) -> None:
    while not shutdown.wait(app.settings.queue.sweep_s):
        _recover(app)
