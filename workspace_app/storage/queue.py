"""The durable ingestion queue on huey: `SqliteHuey` (a file in the data dir) or `PriorityRedisHuey`, same code.

A job is a queue entry (`workspace_app.jobs.entries.JobEntry`: a document id, or `import:<id>` for a patient
import). Front ends only enqueue; `workspace-app worker` consumes with huey's own consumer
(threads, polling back-off capped at `poll_max_delay_s`). huey deletes a task from the queue when a
worker takes it, so a job whose worker dies is not in the queue any more: the document row's lease
(workspace_app/storage/sqlite/leases.py) is what lets `workspace_app.documents.jobs.recover_jobs` find and re-enqueue it.

A job that fails for a passing reason raises `RetryJob`; huey's own retries run it again (`retries` times) from its
schedule, the pause doubling from `retry_delay_s` up to `retry_delay_max_s`. The handler is told which try it
runs and the pause before the next, so the document can say "retrying (2 of 9) — next try in 8 s".

Jobs run in the order they were queued, except that a job queued again after its worker died or stopped goes ahead
of the waiting ones (`enqueue(..., first=True)`): it waited its turn once already. Both backends keep a priority
(SQLite's task table; a Redis sorted set, Redis >= 5).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from huey import Huey, PriorityRedisHuey, SqliteHuey
from huey.consumer import Consumer
from huey.exceptions import RetryTask

from workspace_app.config import QueueSettings
from workspace_app.errors import StorageError
from workspace_app.models.documents import JobAttempt
from workspace_app.storage.base import RetryJob

TASK_NAME = "ingest_document"
# Renamed when the Redis queue became a sorted set (it was a list): entries an older version left under the old
# name are queued again here by recovery, since their rows still say queued and nobody holds them.
QUEUE_NAME = "workspace-jobs"
_FIRST = 1  # the priority of a job queued again (higher runs first; a new job has 0)
QUEUE_FILE = "queue.sqlite"
SHUTDOWN_TIMEOUT_S = 8.0  # running jobs stop at their next batch, well inside the supervisor's 10 s
log = logging.getLogger(__name__)


def open_huey(settings: QueueSettings, data_dir: Path) -> Huey:
    """The huey instance for the configured backend (no connection is made yet for Redis)."""
    try:
        if settings.backend == "redis":
            return PriorityRedisHuey(QUEUE_NAME, url=settings.redis_url, results=False, utc=True)
        data_dir.mkdir(parents=True, exist_ok=True)
        return SqliteHuey(QUEUE_NAME, filename=str(data_dir / QUEUE_FILE), results=False, utc=True, timeout=30)
    except Exception as exc:  # huey raises ConfigurationError when the redis package is missing
        raise StorageError(
            f"The job queue ({settings.backend}) cannot be opened: {exc}. "
            "For the redis backend install the redis package (pip install redis) and check WORKSPACE_QUEUE__REDIS_URL."
        ) from exc


class HueyJobQueue:
    """Ingestion jobs on a huey queue; the same instance enqueues (front ends) and consumes (workers)."""

    def __init__(self, huey: Huey, retries: int = 0, retry_delay_s: float = 2.0, retry_delay_max_s: float = 30.0) -> None:
        self._huey = huey
        self._handler: Callable[[str, JobAttempt], None] | None = None
        self._retries = retries
        self._retry_delay_s = retry_delay_s
        self._retry_delay_max_s = retry_delay_max_s
        self._task = huey.task(name=TASK_NAME, retries=retries, context=True)(self._run)

    def enqueue(self, document_id: str, *, first: bool = False) -> None:
        """Add one job (a document may be queued twice: the lease makes the second run a no-op); `first`: ahead of
        the jobs waiting (one queued again after its worker died or stopped)."""
        try:
            # How many tries the task was given travels with it.
            self._task(document_id, tries=self._retries + 1, priority=_FIRST if first else None)
        except Exception as exc:
            raise StorageError(f"The job queue could not be written: {exc}. Try again.") from exc

    def pending_document_ids(self) -> list[str]:
        """Document ids of the jobs waiting in the queue or for their retry time (taken jobs are not listed)."""
        try:
            waiting = [*self._huey.pending(), *self._huey.scheduled()]
            return [str(task.args[0]) for task in waiting if task.name == TASK_NAME and task.args]
        except Exception as exc:
            raise StorageError(f"The job queue could not be read: {exc}. Try again.") from exc

    def consume(
        self, handler: Callable[[str, JobAttempt], None], *, threads: int, poll_max_delay_s: float,
        on_stop: Callable[[], None],
    ) -> None:
        """Run jobs until SIGINT/SIGTERM (call from the main thread); `on_stop` runs first when told to stop."""
        self._handler = handler
        consumer = _StoppingConsumer(
            on_stop, self._huey, workers=threads, periodic=False, initial_delay=min(0.05, poll_max_delay_s),
            backoff=1.5, max_delay=poll_max_delay_s, check_worker_health=True, health_check_interval=5,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        )
        consumer.run()

    def close(self) -> None:
        """Close the backend connection."""
        close = getattr(self._huey.storage, "close", None)
        if close is not None:
            close()

    def _run(self, document_id: str, tries: int | None = None, task: Any = None) -> None:
        if self._handler is None:
            raise RuntimeError("this queue is not consuming")
        left = int(task.retries) if task is not None else 0
        of = max(tries or self._retries + 1, left + 1)
        number = of - left
        pause = min(self._retry_delay_s * 2 ** (number - 1), self._retry_delay_max_s)
        try:
            self._handler(document_id, JobAttempt(number=number, of=of, retry_in_s=pause))
        except RetryJob:
            if task is None or left <= 0:
                return  # the handler settled the document as failed: nothing is left to retry
            # huey's RetryTask schedules the task again after `delay`; it leaves the count of retries as it was,
            # so this try is taken off it here.
            task.retries = left - 1
            raise RetryTask(f"{document_id}: try {number + 1} of {of} in {pause:.0f} s", delay=pause) from None


class _StoppingConsumer(Consumer):  # type: ignore[misc]
    """huey's consumer, but every stop is graceful and first tells running jobs to wind down."""

    def __init__(self, on_stop: Callable[[], None], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_stop = on_stop

    def stop(self, graceful: bool = False) -> None:
        del graceful  # SIGTERM (the supervisor) gets the same clean stop as Ctrl-C
        self._on_stop()
        super().stop(graceful=True)
