"""`workspace-app serve` end to end: Chroma, worker and UI start, the run file points at Chroma, crashes restart,
Ctrl-C stops all."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CLI = Path(sys.executable).parent / "workspace-app"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answer(url: str, token: str | None = None) -> str | None:
    """The body of a successful GET (sending the Chroma token, if given), or None."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with LOOPBACK.open(urllib.request.Request(url, headers=headers), timeout=2) as response:
            return str(response.read().decode())
    except OSError:
        return None


def wait_for(condition: Callable[[], object], timeout_s: float, process: subprocess.Popen[bytes]) -> None:
    """Poll until the condition holds; fail early when `serve` itself exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        assert process.poll() is None, f"serve exited with {process.returncode}"
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout_s:.0f} s")


def children_of(pid: int) -> dict[int, str]:
    """{pid: command line} of the direct children of a process (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found[int(entry.name)] = cmdline
    return found


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Served:
    """A running `workspace-app serve` on a data dir in tmp_path."""

    def __init__(self, data_dir: Path, port: int, process: subprocess.Popen[bytes]) -> None:
        self.data_dir = data_dir
        self.port = port
        self.process = process
        self.run_file = data_dir / "run" / "serve.json"

    def health(self) -> str | None:
        return answer(f"http://127.0.0.1:{self.port}/_stcore/health")

    def run_info(self) -> dict[str, object]:
        return dict(json.loads(self.run_file.read_text()))

    def ready(self) -> bool:
        """The run file says every child is ready (it is written earlier, once Chroma answers)."""
        try:
            return bool(self.run_info().get("ready"))
        except (OSError, ValueError):
            return False

    def chroma_token(self) -> str:
        return (self.data_dir / "run" / "chroma.token").read_text().strip()

    def chroma_pid(self) -> int | None:
        return next((pid for pid, cmd in children_of(self.process.pid).items() if " run --path " in cmd), None)

    def worker_pid(self) -> int | None:
        return next((pid for pid, cmd in children_of(self.process.pid).items() if cmd.endswith(" worker")), None)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    data_dir = tmp_path / "data"
    process = subprocess.Popen(
        [str(CLI), "--data-dir", str(data_dir), "serve", "--port", str(port)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    server = Served(data_dir, port, process)
    try:
        wait_for(lambda: server.health() == "ok" and server.ready(), START_TIMEOUT_S, process)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        assert process.stdout is not None
        process.stdout.close()


def test_serve_starts_ui_and_chroma_and_stops_cleanly_on_ctrl_c(served: Served) -> None:
    info = served.run_info()
    assert info["pid"] == served.process.pid
    assert info["ui_url"] == f"http://127.0.0.1:{served.port}"
    assert "heartbeat" in (answer(f"{info['chroma_url']}/api/v2/heartbeat", served.chroma_token()) or "")
    assert str(info["api_url"]).startswith("http://127.0.0.1:")
    assert '"status":"ok"' in (answer(f"{info['api_url']}/health") or "")  # the API, a client of the same Chroma
    children = children_of(served.process.pid)
    assert len(children) == 4, children  # Chroma's gate, the worker, the API and the UI
    assert served.worker_pid() is not None

    served.process.send_signal(signal.SIGINT)
    assert served.process.wait(STOP_TIMEOUT_S) == 0

    assert not [pid for pid in children if is_alive(pid)]
    assert not served.run_file.exists()
    assert served.health() is None
    assert served.process.stdout is not None
    output = served.process.stdout.read().decode()
    assert f"Workspace is running at http://127.0.0.1:{served.port}" in output
    assert f"API: {info['api_url']}" in output


def test_serve_restarts_a_crashed_chroma_on_the_same_url(served: Served) -> None:
    chroma_url = str(served.run_info()["chroma_url"])
    first = served.chroma_pid()
    assert first is not None

    os.kill(first, signal.SIGKILL)
    wait_for(lambda: served.chroma_pid() not in (None, first), 15, served.process)
    wait_for(lambda: answer(f"{chroma_url}/api/v2/heartbeat", served.chroma_token()), 30, served.process)

    assert served.run_info()["chroma_url"] == chroma_url


def test_serve_refuses_a_busy_port(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [str(CLI), "--data-dir", str(tmp_path / "data"), "serve", "--port", str(port)],
            check=False, cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )
    assert done.returncode == 1
    assert f"Port {port} is in use" in done.stderr
    assert not (tmp_path / "data" / "run" / "serve.json").exists()


def test_serve_restarts_a_crashed_worker(served: Served) -> None:
    first = served.worker_pid()
    assert first is not None

    os.kill(first, signal.SIGKILL)
    wait_for(lambda: served.worker_pid() not in (None, first), 15, served.process)

    log = served.data_dir / "run" / "worker.log"
    wait_for(lambda: log.read_text().count("consuming with") >= 1, 60, served.process)
