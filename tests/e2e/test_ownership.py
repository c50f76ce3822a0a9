"""One owner per data dir: a second `serve`, or a second process on the embedded store, is refused with a message
naming the owner; the run file is written by serve and deleted only by it; CLI commands are serve's clients."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workspace_app.adapters.supervisor import remove_run_file

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "workspace_app.adapters.cli"]


def workspace_app(data_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "--data-dir", str(data_dir), *args], check=False, capture_output=True, text=True, timeout=timeout,
        cwd=data_dir.parent,
    )


def started(data_dir: Path, *args: str, ready: Path, log: Path) -> subprocess.Popen[bytes]:
    """`workspace-app ARGS` in the background, once `ready` exists."""
    with log.open("ab") as out:
        process = subprocess.Popen([*CLI, "--data-dir", str(data_dir), *args], stdout=out, stderr=out, cwd=data_dir.parent)
    deadline = time.monotonic() + 300  # a running process may start slowly beside a loaded run; one that exits fails at once
    while not ready.exists():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
    return process


def stopped(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            return process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A `serve` on tmp_path/data, as soon as its Chroma server is up (the run file exists)."""
    from workspace_app.adapters.supervisor import free_port

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    run_file = data_dir / "run" / "serve.json"
    process = started(data_dir, "serve", "--port", str(free_port()), ready=run_file, log=tmp_path / "serve.log")
    try:
        yield data_dir, process
    finally:
        stopped(process)


def test_a_second_serve_is_refused_and_leaves_the_run_file_alone(serving: tuple[Path, subprocess.Popen[bytes]]) -> None:
    from workspace_app.adapters.supervisor import free_port

    data_dir, first = serving
    run_file = data_dir / "run" / "serve.json"
    before = run_file.read_text()

    second = workspace_app(data_dir, "serve", "--port", str(free_port()))

    assert second.returncode == 1
    assert f"Another workspace-app (pid {first.pid}, serve, since " in second.stderr
    assert f"owns {data_dir.resolve()}. Stop it first, or use another data dir with WORKSPACE_DATA_DIR." in second.stderr
    assert run_file.read_text() == before
    assert not remove_run_file(data_dir)  # this test process did not write it
    assert json.loads(run_file.read_text())["pid"] == first.pid


def test_cli_commands_are_clients_of_a_running_serve(serving: tuple[Path, subprocess.Popen[bytes]]) -> None:
    data_dir, first = serving
    created = workspace_app(data_dir, "workspace", "create", "W")
    assert created.returncode == 0, created.stderr
    listed = workspace_app(data_dir, "workspace", "list", "--json")
    assert json.loads(listed.stdout)["name"] == "W"

    assert stopped(first) == 0
    assert not (data_dir / "run" / "serve.json").exists()  # removed by its owner on the way out


def test_the_embedded_store_has_one_user_at_a_time(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    assert workspace_app(data_dir, "workspace", "create", "W").returncode == 0  # owns it, then exits: released
    lock = data_dir / "run" / "owner.lock"
    worker = started(data_dir, "worker", ready=lock, log=tmp_path / "worker.log")
    try:
        deadline = time.monotonic() + 60
        while "consuming with" not in (tmp_path / "worker.log").read_text():
            assert worker.poll() is None and time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            time.sleep(0.2)

        refused = workspace_app(data_dir, "workspace", "list")
        serve = workspace_app(data_dir, "serve", "--port", "0")
    finally:
        stopped(worker)

    assert refused.returncode == 2
    assert f"error: Another workspace-app (pid {worker.pid}, workspace-app worker, since " in refused.stderr
    assert serve.returncode == 1 and f"(pid {worker.pid}, workspace-app worker" in serve.stderr
    assert workspace_app(data_dir, "workspace", "list").returncode == 0  # the worker has exited: free again
