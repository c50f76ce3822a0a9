"""Child logs of `serve` stay bounded: rotated at start above a size, copy-truncated while a child writes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from workspace_app.adapters.logs import rotate_log


def test_a_big_log_is_shifted_and_only_a_few_old_ones_are_kept(tmp_path: Path) -> None:
    log = tmp_path / "chroma.log"
    for generation in range(6):
        log.write_bytes(str(generation).encode() * 200)
        assert rotate_log(log, max_bytes=100, keep=3)
    assert not log.exists()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["chroma.log.1", "chroma.log.2", "chroma.log.3"]
    assert (tmp_path / "chroma.log.1").read_bytes().startswith(b"5")
    assert (tmp_path / "chroma.log.3").read_bytes().startswith(b"3")


def test_a_small_log_is_left_alone(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("short\n")
    assert not rotate_log(log, max_bytes=100)
    assert not rotate_log(tmp_path / "missing.log", max_bytes=100)
    assert log.read_text() == "short\n"


def test_a_running_writer_keeps_writing_to_the_truncated_log(tmp_path: Path) -> None:
    log = tmp_path / "ui.log"
    with open(log, "ab") as out:
        script = "import sys, time\nfor i in range(40):\n    print('x' * 50, flush=True); time.sleep(0.02)\n"
        child = subprocess.Popen([sys.executable, "-c", script], stdout=out)
        rotated = 0
        while child.poll() is None:
            rotated += rotate_log(log, max_bytes=500, keep=2, copy=True)
            time.sleep(0.05)
    assert rotated >= 2
    assert log.stat().st_size <= 500 + 51 * 3  # what arrived since the last check, not everything
    assert not log.read_bytes().startswith(b"\0")  # the writer appends at the new start, no hole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ui.log", "ui.log.1", "ui.log.2"]
