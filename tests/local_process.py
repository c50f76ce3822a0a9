"""A server process for the length of a test block: started, waited for until it answers, then stopped.

The throwaway servers the tests start (redis-server, moto's S3 server, an OpenID provider, the UI launcher) all go
the same way: a free loopback port, a log file, a readiness check polled until a deadline (a process that exits or
never answers fails the test with its log), then terminate, and kill if it does not stop.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def running(
    argv: list[str], ready: Callable[[], bool], log: Path, what: str, timeout_s: float, *,
    env: Mapping[str, str] | None = None, cwd: Path | None = None, poll_s: float = 0.2,
) -> Iterator[subprocess.Popen[bytes]]:
    """`argv` running until the block ends, entered once `ready()` holds; `what` names it in the failure."""
    with open(log, "wb") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=cwd
        )
    try:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer in {timeout_s:g} s: {log.read_text(errors='replace')}")
            time.sleep(poll_s)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
