"""Workers on two machines: one PostgreSQL catalog, one Redis queue, one Chroma server and a shared dir; two
`workspace-app worker` processes, each with its own working directory and data dir, one of them on a host of its
own name (a UTS namespace: `unshare --user --uts`), so its death is noticed only as a remote worker's is, by its
lease going stale. It is killed with SIGKILL mid-document; the other takes its job over, and every document ends
ready exactly once with exactly its chunks, keyword rows and vectors. Then the result is searched and asked through
the CLI of a third "machine" (the front end)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.common.services import chroma

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

NAMES = ["mosca-2011-women-cvd.pdf", "zh-acute-af-ed-2024.pdf", "arnett-2014-guideline-strategies.pdf"]
REMOTE_HOST = "machine-b"
LEASE_TIMEOUT_S = 10.0
SWEEP_S = 2.0


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, poll_s: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


def other_host_prefix() -> list[str]:
    """The argv prefix that runs a command under another host name, or [] where the kernel forbids it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    prefix = [unshare, "--user", "--map-root-user", "--uts", "sh", "-c", f'hostname {REMOTE_HOST} && exec "$@"', "-"]
    probe = subprocess.run([*prefix, "hostname"], capture_output=True, text=True, check=False, timeout=30)
    return prefix if probe.returncode == 0 and probe.stdout.strip() == REMOTE_HOST else []


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(URL, token) of a Chroma server behind serve's token gate: the deployment's one vector server (started as the
    workers bench starts it)."""
    with chroma(tmp_path_factory.mktemp("chroma-server")) as served:
        yield served


class Machine:
    """A working directory with its own data dir; its processes get only the deployment's settings."""

    def __init__(self, root: Path, settings: dict[str, str], prefix: list[str] | None = None) -> None:
        self.root = root
        self.data_dir = root / "data"
        self.root.mkdir(parents=True)
        self.settings = settings
        self.prefix = prefix or []
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = root / "worker.log"

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **self.settings})
        return env

    def argv(self, *args: str | Path) -> list[str]:
        return [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(self.data_dir), *map(str, args)]

    def run(self, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=timeout, env=self.environ(),
                              cwd=self.root, check=False)

    def start_worker(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([*self.prefix, *self.argv("worker")], stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, env=self.environ(), cwd=self.root)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def consuming(self) -> bool:
        assert self.process is not None and self.process.poll() is None, self.log()[-3000:]
        return "consuming with" in self.log()

    def owner_prefix(self) -> str:
        host = REMOTE_HOST if self.prefix else socket.gethostname()
        return f"worker@{host}:"

    def jobs(self, outcome: str) -> list[str]:
        """Document ids this worker's log says ended with the outcome."""
        return re.findall(rf"job (\w+) {outcome} in", self.log())

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(60)


def documents(url: str) -> dict[str, dict[str, Any]]:
    """Every document row by id, read straight from the catalog."""
    with psycopg.connect(url) as db, db.cursor(row_factory=psycopg.rows.dict_row) as cursor:
        rows = cursor.execute(
            "SELECT id, name, status, stage, lease_owner, chunks, chunks_embedded, chunks_total FROM documents"
        ).fetchall()
    return {row["id"]: row for row in rows}


def test_a_worker_killed_on_another_machine_has_its_job_taken_over_and_nothing_is_lost_or_done_twice(
    tmp_path: Path, postgres_url: str, redis_url: str, chroma_server: tuple[str, str], guidelines: Path,
    chunk_pdf: Callable[[Path], list[Any]], embedder: Any,
) -> None:
    chroma_url, token = chroma_server
    shared = tmp_path / "mnt"
    deployment = {
        "WORKSPACE_CATALOG__URL": postgres_url, "WORKSPACE_QUEUE__BACKEND": "redis",
        "WORKSPACE_QUEUE__REDIS_URL": redis_url, "WORKSPACE_STORAGE__CHROMA_URL": chroma_url,
        "WORKSPACE_STORAGE__CHROMA_TOKEN": token, "WORKSPACE_SHARED__DIR": str(shared),
        "WORKSPACE_QUEUE__LEASE_TIMEOUT_S": str(LEASE_TIMEOUT_S), "WORKSPACE_QUEUE__SWEEP_S": str(SWEEP_S),
        "WORKSPACE_QUEUE__WORKER_THREADS": "1", "WORKSPACE_EMBEDDING__BATCH_SIZE": "8",
        "WORKSPACE_INGEST__FIGURE_OCR": "false",  # pictures' words by OCR: seconds each, nothing this test checks
    }
    front = Machine(tmp_path / "front", deployment)
    here = Machine(tmp_path / "machine-a", deployment)
    prefix = other_host_prefix()
    remote = Machine(tmp_path / "machine-b", deployment, prefix)
    assert front.run("workspace", "create", "W").returncode == 0
    try:
        here.start_worker()
        remote.start_worker()
        wait_until(lambda: here.consuming() and remote.consuming(), 240, "both workers to consume")
        queued = front.run("ingest", "-w", "W", "--no-wait", *(guidelines / name for name in NAMES))
        assert queued.returncode == 0, queued.stderr[-2000:]
        ids = [json.loads(line)["document_id"] for line in queued.stdout.splitlines()]

        def remote_mid_document() -> str | None:
            for row in documents(postgres_url).values():
                if (row["status"], row["stage"]) == ("running", "embedding") and row["chunks_embedded"] > 0 and (
                    row["lease_owner"] or ""
                ).startswith(remote.owner_prefix()):
                    return str(row["id"])
            return None

        wait_until(remote_mid_document, 300, "the remote worker mid-document", poll_s=0.05)
        killed = remote_mid_document()
        assert killed is not None
        assert remote.stop(signal.SIGKILL) == -signal.SIGKILL
        killed_at = time.monotonic()
        timeline: dict[str, float] = {}

        def taken_over() -> bool:
            row = documents(postgres_url)[killed]
            owner = row["lease_owner"] or ""
            if "released" not in timeline and not owner.startswith(remote.owner_prefix()):
                timeline["released"] = time.monotonic() - killed_at
            if owner.startswith(here.owner_prefix()) or row["status"] == "ready":
                timeline["claimed"] = time.monotonic() - killed_at
                return True
            return False

        wait_until(taken_over, 300, "the surviving worker to take the job over", poll_s=0.2)
        # The survivor frees a lease older than the lease timeout at its next sweep; on one host the dead
        # process would be seen at once, so a release long before the timeout means the other host was not other.
        assert timeline["released"] <= LEASE_TIMEOUT_S + SWEEP_S + 10, timeline
        if prefix:
            assert timeline["released"] >= LEASE_TIMEOUT_S - 3, timeline
        wait_until(lambda: all(r["status"] == "ready" for r in documents(postgres_url).values()), 400, "all ready")
    finally:
        here.stop()
        remote.stop(signal.SIGKILL)

    rows = documents(postgres_url)
    assert sorted(rows) == sorted(ids)  # nothing lost, nothing added
    assert sorted(here.jobs("ready") + remote.jobs("ready")) == sorted(ids)  # each completed exactly once
    assert killed not in remote.jobs("ready") and killed in here.jobs("ready")
    assert f"queued 1 unfinished jobs again: {killed}" in here.log()
    for document_id, row in rows.items():
        expected = len(chunk_pdf(guidelines / row["name"]))
        assert row["chunks"] == row["chunks_total"] == row["chunks_embedded"] == expected, row
    with psycopg.connect(postgres_url) as db:
        per_document = dict(db.execute("SELECT document_id, COUNT(*) FROM chunks GROUP BY document_id").fetchall())
        assert db.execute("SELECT COUNT(*) = COUNT(DISTINCT id) FROM chunks").fetchone() == (True,)
        keyword_rows = db.execute("SELECT COUNT(*) FROM keyword_lengths").fetchone()[0]
    assert per_document == {document_id: row["chunks"] for document_id, row in rows.items()}
    assert keyword_rows == sum(per_document.values())
    stored = sorted(path.name for path in (shared / "files").glob("*.pdf"))
    assert len(stored) == len(NAMES)
    for machine in (front, here, remote):
        assert not (machine.data_dir / "files").exists() and not (machine.data_dir / "catalog.sqlite").exists()

    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import load_settings

    with pytest.MonkeyPatch.context() as patch:
        for name, value in deployment.items():
            patch.setenv(name, value)
        app = build_app(load_settings(tmp_path / "reader" / "data"), embedder=embedder)
    try:
        workspace = app.workspaces.get("W")
        for document_id, row in rows.items():
            assert app.vectors.count(workspace.id, document_id) == row["chunks"]  # one vector per chunk, none twice
    finally:
        app.catalog.close()

    searched = front.run("search", "-w", "W", "--json", "aspirin for women at high cardiovascular risk")
    assert searched.returncode == 0, searched.stderr[-2000:]
    hits = json.loads(searched.stdout)["results"]
    assert hits and hits[0]["document"] == "mosca-2011-women-cvd.pdf", hits[:1]
    asked = front.run("ask", "-w", "W", "--json", "Should women at high risk take aspirin?")
    assert asked.returncode == 0, asked.stderr[-2000:]
    answer = json.loads(asked.stdout)
    assert answer["citations"] and {c["document"] for c in answer["citations"]} <= set(NAMES)
