"""The real app for browser tests: `workspace-app serve` (Chroma, worker, UI) on a free port, and Chromium's flags."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from offline_browser import CHROMIUM_ARGS  # noqa: F401 - the browser tests import it from here too

CLI = Path(sys.executable).parent / "workspace-app"
STARTUP_S = 300  # longest wait for `serve` to answer its health check
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with LOOPBACK.open(f"{url}/_stcore/health", timeout=2) as response:
            return bool(response.read() == b"ok")
    except OSError:
        return False


def require_chromium() -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (make setup installs it)")


@contextmanager
def serving(data_dir: Path, log_dir: Path) -> Iterator[str]:
    """`workspace-app serve` on the data dir until the block ends (Ctrl-C, as a user stops it); yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = log_dir / "serve.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(CLI), "--data-dir", str(data_dir), "serve", "--port", str(port)],
            cwd=log_dir, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        # serve starts Chroma, the worker, the API (warmed up before it opens its port) and the UI in turn: quiet,
        # ~20-30 s; beside a loaded test run (load 10 on 2 cores) it took 60-100 s. Waiting longer for a serve that
        # is still running costs nothing; one that exits fails at once with its log.
        deadline = time.monotonic() + STARTUP_S
        while not healthy(url):
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"serve did not become healthy in {STARTUP_S} s: {log_path.read_text()}"
            time.sleep(0.3)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def open_page(page: Any, link: str, heading: str, timeout_ms: int = 30_000) -> None:
    """Click a page link once and wait for the page's heading. (The Sources page used to rerun itself when its last
    job ended, and a click landing in that run was lost now and then; the page no longer does.)"""
    from playwright.sync_api import expect

    page.get_by_role("link", name=link).click()
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=timeout_ms)


def print_console_errors(page: Any) -> None:
    """Print the page's console errors and warnings as they come: pytest shows them under a failed test (a blank
    page after a frontend error says nothing by itself)."""
    page.on("console", lambda message: print(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
