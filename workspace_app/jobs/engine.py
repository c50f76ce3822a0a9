"""The one way a leased job runs, whatever it does: claimed by its store, kept alive by a heartbeat while its work
runs, and settled by what ended it.

    run_leased(job, ...) -> job.claim (or 'skipped') -> job.work(check) under a Heartbeat -> its outcome
        -> or JobInterrupted: job.interrupted(reason)   (cancel, lost lease, shutdown)
        -> or a WorkspaceError: job.failed(error)        (what happened and what to do, said by the error)
        -> then job.release()                            (always, once claimed)

A kind of job (documents/jobs.py: ingestion; patients/imports.py: patient imports) says how to do each step for
its own rows; this module holds the control flow they share, so a fix to it holds for both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from storage.base import Lease
from workspace_app.errors import WorkspaceError
from workspace_app.jobs.leases import Heartbeat, JobInterrupted


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
