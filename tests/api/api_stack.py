"""Real processes for the API tests: a Chroma server behind its token gate (as `serve` runs it), a worker and
`workspace-app api` processes on a data dir in tmp_path, all clients of that Chroma server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fake_openai import FakeOpenAI

KEY = "test-key-plain"
HASHED_KEY = "test-key-hashed"
MAX_FILE_MB = 2
WORKSPACE = "Cardio"
PDF = ("mosca-2011-women-cvd.pdf", 10, 11)
QUESTION = "What INR range should warfarin target in women with atrial fibrillation?"
START_TIMEOUT_S = 120.0
CLI = [sys.executable, "-m", "workspace_app.adapters.cli"]  # PYTHONPATH (kept in the environment) picks the tree


@dataclass(frozen=True)
class Stack:
    """The running processes' URLs and what the tests put in them."""

    open_url: str
    guarded_url: str
    data_dir: Path
    fake: FakeOpenAI
    common: dict[str, str] = field(default_factory=dict)  # every child's settings: the Chroma server's URL, token...


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environ(**extra: str) -> dict[str, str]:
    """A child's environment: no developer settings, offline model loading, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **extra})
    return env


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, process: subprocess.Popen[bytes] | None = None,
               log: Path | None = None) -> None:
    """Poll until the condition holds; fail naming what we waited for (with the log's tail) on timeout or exit."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        exited = process is not None and process.poll() is not None
        if exited or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            state = f"exited with {process.returncode}" if exited and process else f"timed out after {timeout_s:.0f} s"
            raise AssertionError(f"{what} {state}\n{tail}")
        time.sleep(0.2)


def answers(url: str, headers: dict[str, str] | None = None, status: int = 200) -> bool:
    """True when a GET returns `status`."""
    try:
        return httpx.get(url, headers=headers, timeout=5, trust_env=False).status_code == status
    except httpx.HTTPError:
        return False


class Process:
    """One child process with its log file; `stop` terminates and reaps it."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env, cwd=cwd)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run_cli(stack: Stack, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    """`workspace-app --data-dir DATA ARGS...` as one more client of the stack's Chroma server (it takes no lock on
    the data dir, so it runs beside the API processes as a user's CLI would)."""
    return subprocess.run(
        [*CLI, "--data-dir", str(stack.data_dir), *args], capture_output=True, text=True, timeout=timeout,
        env=environ(**stack.common, **env), cwd=str(stack.data_dir.parent), check=False,
    )


def start_chroma(folder: Path) -> tuple[Process, str, str]:
    """A Chroma server as `serve` starts it; returns (process, URL, token) once its heartbeat answers."""
    from workspace_app.adapters.supervisor import chroma_spec, chroma_token

    url, token = f"http://127.0.0.1:{free_port()}", chroma_token(folder)
    spec = chroma_spec(folder, url, token)
    chroma = Process(spec.argv, folder / "chroma.log", environ(), folder)
    wait_until(lambda: answers(f"{url}/api/v2/heartbeat", spec.ready_headers), 60, "the Chroma server",
               chroma.process, chroma.log)
    return chroma, url, token


def start_worker(data_dir: Path, env: dict[str, str]) -> Process:
    """`workspace-app worker` on the data dir."""
    return Process([*CLI, "--data-dir", str(data_dir), "worker"], data_dir.parent / "worker.log", env, data_dir.parent)


class Api:
    """`workspace-app api` on a free port; `url` once `/health` answers."""

    def __init__(self, data_dir: Path, env: dict[str, str], name: str = "api") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [*CLI, "--data-dir", str(data_dir), "api", "--port", str(self.port)]
        self.child = Process(argv, data_dir.parent / f"{name}.log", env, data_dir.parent)

    def wait_ready(self) -> Api:
        """Until GET /health answers at all (200, or 503 while a part is down)."""
        wait_until(lambda: answers(f"{self.url}/health") or answers(f"{self.url}/health", status=503),
                   START_TIMEOUT_S, f"the API on port {self.port}", self.child.process, self.child.log)
        return self

    def stop(self) -> None:
        self.child.stop()


def wait_settled(client: httpx.Client, workspace: str, timeout_s: float = 120) -> list[dict[str, Any]]:
    """The workspace's documents once none is queued or running."""
    deadline = time.monotonic() + timeout_s
    while True:
        documents = client.get(f"/workspaces/{workspace}/documents").json()
        if all(d["status"] not in ("queued", "running") for d in documents):
            return documents
        assert time.monotonic() < deadline, f"still ingesting: {json.dumps(documents)[:500]}"
        time.sleep(0.3)
