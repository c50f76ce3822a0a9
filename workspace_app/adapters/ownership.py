"""One owner per data dir: an OS lock (`flock`) on `<data_dir>/run/owner.lock`.

`serve` takes it before it starts anything; a process that opens the embedded (in-process) Chroma store takes it
too. Processes that talk to a running serve's Chroma server don't: they are its clients. The lock file records
who holds it (pid, role, since) so a refusal can say so. The kernel drops the lock when its holder exits, however
it exits, so a lock left by a dead process never blocks anyone; the file itself stays (deleting a lock file
races with the next locker).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from workspace_app.errors import DataDirBusyError

LOCK_FILE = "run/owner.lock"
_held: dict[Path, int] = {}  # data dir -> open lock file descriptor, for the life of this process


def claim_data_dir(data_dir: Path, role: str) -> None:
    """Own `data_dir` until `release_data_dir` or exit; raise DataDirBusyError naming the holder when another
    process owns it. Claiming again from the owning process is a no-op."""
    key = data_dir.resolve()
    if key in _held:
        return
    path = key / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        raise DataDirBusyError(busy_message(key, holder)) from None
    owner = {"pid": os.getpid(), "role": role, "since": time.time()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(owner).encode(), 0)
    _held[key] = fd


def release_data_dir(data_dir: Path) -> None:
    """Give up ownership taken by this process (nothing when it holds none)."""
    fd = _held.pop(data_dir.resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the last descriptor releases the flock


def busy_message(data_dir: Path, holder: dict[str, object]) -> str:
    """What a refused process tells its user: who holds the data dir and what to do."""
    pid = holder.get("pid")
    since = holder.get("since")
    when = f", since {time.strftime('%H:%M', time.localtime(float(since)))}" if isinstance(since, int | float) else ""
    who = f"pid {pid}, {holder.get('role', 'unknown role')}{when}" if pid else "a process that is still starting"
    if isinstance(pid, int) and not _alive(pid):
        who += "; that pid has ended, so a process it started still holds the lock"
    return (
        f"Another workspace-app ({who}) owns {data_dir}. Stop it first, or use another data dir with "
        "WORKSPACE_DATA_DIR."
    )


def _read_holder(fd: int) -> dict[str, object]:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
