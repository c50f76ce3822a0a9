"""Leases of jobs run by workers, whatever the job (a document's ingestion, a patient import): who holds one, whether
its holder is dead, the heartbeat that keeps it and turns cancel, a lost lease or shutdown into `JobInterrupted`.

    claim (the job's store) -> Heartbeat renews the lease every interval on its own thread and notices cancel or a
    lost lease; its `check()` (called by the work between pages and batches) also reads the cancel flag itself,
    at most every 0.2 s -> the work ends, or `check()` raises JobInterrupted('cancel' | 'lost' | 'shutdown')
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from types import TracebackType
from typing import Self

from workspace_app.errors import WorkspaceError
from workspace_app.storage.base import Lease

log = logging.getLogger(__name__)
HOST = socket.gethostname()
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
        self, leases: Lease, job_id: str, owner: str, interval_s: float, shutdown: threading.Event | None
    ) -> None:
        self._leases = leases
        self._job_id = job_id
        self._owner = owner
        self._interval_s = interval_s
        self._shutdown = shutdown
        self._reason: str | None = None
        self._cancel_read = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{job_id}", daemon=True)

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
                if self._leases.cancel_requested(self._job_id):
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
                state = self._leases.renew_lease(self._job_id, self._owner)
            except WorkspaceError as exc:  # a busy catalog: try again at the next beat
                log.warning("heartbeat of %s failed: %s", self._job_id, exc.user_message)
                continue
            if state != "ok":
                self._reason = state
                return


class JobInterrupted(Exception):
    """Raised by a heartbeat's check to end a run early; `reason` is 'cancel', 'lost' or 'shutdown'."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def lease_is_dead(age_s: float | None, owner: str | None, stale_after_s: float) -> bool:
    """Whether a lease renewed `age_s` ago by `owner` is dead: never renewed, stale, or its process gone."""
    return age_s is None or age_s > stale_after_s or owner_is_gone(owner or "")
