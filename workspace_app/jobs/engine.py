"""The one way a leased job runs, whatever it does: claimed by its store, kept alive by a heartbeat while its work
runs, and settled by what ended it.

    run_leased(job, ...) -> job.claim (or 'skipped') -> job.work(check) under a Heartbeat -> its outcome
        -> or JobInterrupted: job.interrupted(reason)   (cancel, lost lease, shutdown)
        -> or a WorkspaceError: job.failed(error)        (what happened and what to do, said by the error)
        -> then job.release()                            (always, once claimed)

    recover_unfinished(...) -> every unfinished job nobody runs (its holder's lease dead, or no holder) is released
        and queued again, unless it is already queued; one whose cancel was asked is settled as cancelled instead;
        a dead holder's job goes ahead of the waiting ones (it had its turn)

A kind of job (documents/jobs.py: ingestion; patients/imports.py: patient imports) says how to do each step for
its own rows; this module holds the control flow they share, so a fix to it holds for both.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from workspace_app.errors import WorkspaceError
from workspace_app.jobs.entries import JobEntry
from workspace_app.jobs.leases import Heartbeat, JobInterrupted, lease_is_dead
from workspace_app.storage.base import JobQueue, Lease

log = logging.getLogger(__name__)


class LeasedJob(Protocol):
    """One job of a kind, as the engine runs it."""

    def claim(self, owner: str) -> bool: ...
    def work(self, check: Callable[[], None]) -> str: ...
    def interrupted(self, owner: str, reason: str) -> str: ...
    def failed(self, owner: str, error: WorkspaceError) -> str: ...
    def release(self, owner: str) -> None: ...


def run_leased(
    job: LeasedJob, job_id: str, leases: Lease, owner: str, heartbeat_s: float, shutdown: threading.Event | None,
) -> str:
    """Run `job` (id `job_id`, its lease renewed through `leases`) if `owner` can claim it; returns its outcome,
    or 'skipped' when another holder has it."""
    if not job.claim(owner):
        return "skipped"
    try:
        with Heartbeat(leases, job_id, owner, heartbeat_s, shutdown) as heartbeat:
            return job.work(heartbeat.check)
    except JobInterrupted as stop:
        return job.interrupted(owner, stop.reason)
    except WorkspaceError as exc:
        return job.failed(owner, exc)
    finally:
        job.release(owner)


@dataclass(frozen=True)
class Unfinished:
    """A queued or running job as recovery sees it: who holds it, since when its lease was renewed, and whether its
    cancel was asked."""

    entry: JobEntry
    holder: str | None
    lease_age_s: float | None
    cancel_requested: bool


class JobRecovery(Protocol):
    """One kind of job, as recovery settles its unfinished ones."""

    def release_dead(self, job: Unfinished) -> bool: ...
    def settle_cancelled(self, job: Unfinished) -> None: ...


def recover_unfinished(
    kind: JobRecovery, jobs: Iterable[Unfinished], queue: JobQueue, stale_after_s: float
) -> list[str]:
    """Queue again every unfinished job nobody runs (a dead holder's lease released first, its job ahead of the
    waiting ones); returns their ids."""
    pending = set(queue.pending_document_ids())
    requeued = []
    for job in jobs:
        if job.holder is not None:
            if not lease_is_dead(job.lease_age_s, job.holder, stale_after_s) or not kind.release_dead(job):
                continue
            log.warning("%s %s of %s died; queueing it again", job.entry.kind, job.entry.job_id, job.holder)
        if job.cancel_requested:
            kind.settle_cancelled(job)
        elif str(job.entry) not in pending:
            queue.enqueue(str(job.entry), first=job.holder is not None)
            requeued.append(job.entry.job_id)
    return requeued
