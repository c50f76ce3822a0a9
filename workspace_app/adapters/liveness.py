"""Worker liveness: every `workspace-app worker` (alone or started by `serve`) keeps a beacon in the shared dir
(`WORKSPACE_SHARED__DIR`, by default the data dir).

    <shared dir>/run/workers/<owner>.json   {"owner", "pid", "beat_at"}, rewritten every `queue.heartbeat_s`

A worker writes its beacon once its model is loaded (it takes jobs from then on) and deletes it when it stops. A
beacon counts as alive while its last beat is younger than `queue.lease_timeout_s` (the age after which a job's
lease is presumed dead too) and, on this host, while its process exists, so a worker killed with -9 is seen gone
at once. `/health` reads the beacons. Workers on other machines are seen through the shared dir (their clocks
kept in step).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from workspace_app.jobs.leases import owner_is_gone

BEACONS = "run/workers"

log = logging.getLogger("workspace_app.worker")


@dataclass(frozen=True)
class WorkerBeat:
    """A worker's last heartbeat: who, and how many seconds ago."""

    owner: str
    age_s: float


class WorkerBeacon:
    """Context manager of a running worker: beats on its own thread until the block ends, then removes the file."""

    def __init__(self, data_dir: Path, owner: str, interval_s: float) -> None:
        self.path = data_dir / BEACONS / f"{re.sub(r'[^A-Za-z0-9._-]', '_', owner)}.json"
        self._owner = owner
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="worker-beacon", daemon=True)

    def __enter__(self) -> Self:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.write()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self.path.unlink(missing_ok=True)

    def write(self) -> None:
        """Record a beat now, atomically (a private temporary file renamed over the beacon)."""
        info = {"owner": self._owner, "pid": os.getpid(), "beat_at": time.time()}
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
            out.write(json.dumps(info))
        os.replace(tmp, self.path)

    def _beat(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.write()
            except OSError as exc:  # a full or busy disk: the next beat tries again
                log.warning("worker beacon %s not written: %s", self.path, exc)


def live_workers(data_dir: Path, stale_after_s: float) -> list[WorkerBeat]:
    """The workers whose beacon beat within `stale_after_s` and whose process is not known to be gone."""
    beats = []
    for path in sorted((data_dir / BEACONS).glob("*.json")):
        beat = _read_beacon(path)
        if beat is not None and beat.age_s <= stale_after_s and not owner_is_gone(beat.owner):
            beats.append(beat)
    return beats


def _read_beacon(path: Path) -> WorkerBeat | None:
    """A beacon's beat, or None when it is unreadable (being replaced, or left half-written by a crash)."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        return WorkerBeat(str(info["owner"]), max(0.0, time.time() - float(info["beat_at"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None
