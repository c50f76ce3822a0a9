"""Bounded logs for the children of `serve` (chroma.log, worker.log, ui.log under `<data dir>/run/`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

LOG_MAX_BYTES = 10 * 1024 * 1024  # a child's log is rotated above this size
LOG_KEEP = 3  # rotated logs kept: <name>.log.1 (newest) .. <name>.log.3


def rotate_log(path: Path, max_bytes: int = LOG_MAX_BYTES, keep: int = LOG_KEEP, *, copy: bool = False) -> bool:
    """Above `max_bytes`, shift `path` to `path.1` (older ones to .2 .. .keep, the oldest dropped); True if rotated.

    With `copy`, the log is copied and then truncated in place (logrotate's copytruncate): a running child keeps
    writing to the same open file, which it opened for appending, so its next line lands at the new start."""
    try:
        if path.stat().st_size <= max_bytes:
            return False
    except FileNotFoundError:
        return False
    for n in range(keep - 1, 0, -1):
        older = path.with_name(f"{path.name}.{n}")
        if older.exists():
            older.replace(path.with_name(f"{path.name}.{n + 1}"))
    first = path.with_name(f"{path.name}.1")
    if copy:
        shutil.copyfile(path, first)
        os.truncate(path, 0)
    else:
        path.replace(first)
    return True
