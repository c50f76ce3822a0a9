"""The real app for the benchmarks that drive it in a browser: the CLI's path, a free port, its health, its stop.

(The browser tests have their own copy in tests/e2e/browser/served.py: the benchmarks do not import tests.)
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

CLI = Path(sys.executable).parent / "workspace-app"
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether the Streamlit server at `url` answers its health check."""
    try:
        with LOOPBACK.open(f"{url}/_stcore/health", timeout=timeout) as response:
            return bool(response.read() == b"ok")
    except OSError:
        return False


def stop(process: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """Stop `serve`, `api` or a worker as a user does (Ctrl-C), killing it if it has not stopped after `timeout_s`."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
