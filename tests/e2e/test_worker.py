"""The queue and the worker in real processes: jobs from the CLI, kill -9 mid-document and restart, SIGTERM,
two workers on one queue, cancel and retry. Every document must end with exactly the chunks of an
undisturbed run (chunk ids `<document>-00000..`) and one vector per chunk."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from keyword_index import keyword_rows

pytestmark = pytest.mark.slow

CLI = Path(sys.executable).parent / "workspace-app"
SMALL = [("shen-2017-syncope.pdf", 10, 12), ("mosca-2011-women-cvd.pdf", 3, 4), ("eckel-2013-lifestyle.pdf", 5, 6)]


# Processes: a Chroma server for the module, workers started, killed and restarted by the tests.

LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    from workspace_app.adapters.supervisor import free_port as pick

    return pick()


def answers(url: str, headers: dict[str, str] | None = None) -> bool:
    try:
        with LOOPBACK.open(urllib.request.Request(url, headers=headers or {}), timeout=2) as response:
            return 200 <= int(response.status) < 300
    except OSError:
        return False


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, poll_s: float = 0.1) -> None:
    """Poll until the condition holds or fail naming what we waited for."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(URL, token) of a Chroma server as serve runs it (behind its token gate) on a free loopback port
    (UI, workers and the test are all its clients)."""
    from workspace_app.adapters.supervisor import chroma_spec, chroma_token

    folder = tmp_path_factory.mktemp("chroma-server")
    url, token = f"http://127.0.0.1:{free_port()}", chroma_token(folder)
    spec = chroma_spec(folder, url, token)
    with open(folder / "chroma.log", "wb") as log:
        process = subprocess.Popen(spec.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: answers(f"{url}/api/v2/heartbeat", headers=spec.ready_headers), 60, "the Chroma server")
        yield url, token
    finally:
        process.terminate()
        process.wait(30)


class Worker:
    """One `workspace-app worker` process on a data dir."""

    def __init__(self, data_dir: Path, log_path: Path, env: dict[str, str]) -> None:
        self.data_dir = data_dir
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
        environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **env})
        self.process = subprocess.Popen(
            [str(CLI), "--data-dir", str(data_dir), "worker"], stdout=self._log, stderr=self._log,
            stdin=subprocess.DEVNULL, env=environ, cwd=data_dir.parent,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_consuming(self, timeout_s: float = 60) -> None:
        """Until huey's consumer runs (the model may still be loading in the background)."""
        wait_until(lambda: "consuming with" in self.log() or self.process.poll() is not None, timeout_s, "the worker")
        assert self.process.poll() is None, self.log()[-3000:]

    def kill(self, sig: int = signal.SIGKILL, timeout_s: float = 30) -> int:
        """Send a signal and reap the process (a zombie would still look alive to the lease check)."""
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        code = self.process.wait(timeout_s)
        self._log.close()
        return code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.kill(signal.SIGTERM)
        self._log.close()


@pytest.fixture(scope="module")
def chroma_env(chroma_server: tuple[str, str]) -> dict[str, str]:
    """The environment that makes a process a client of the module's Chroma server."""
    url, token = chroma_server
    return {"WORKSPACE_CHROMA_URL": url, "WORKSPACE_STORAGE__CHROMA_TOKEN": token}


@pytest.fixture
def start_worker(tmp_path: Path, chroma_env: dict[str, str]) -> Iterator[Callable[..., Worker]]:
    """start_worker(data_dir, **env): a worker on the data dir talking to the module's Chroma server."""
    started: list[Worker] = []

    def _start(data_dir: Path, **env: str) -> Worker:
        log_path = tmp_path / f"worker-{len(started) + 1}.log"
        worker = Worker(data_dir, log_path, {**chroma_env, **env})
        started.append(worker)
        return worker

    yield _start
    for worker in started:
        worker.stop()


@pytest.fixture
def client(chroma_server: tuple[str, str], embedder: Any) -> Iterator[Callable[[Path], Any]]:
    """client(data_dir): a service in the test process on the same data dir and Chroma server as the workers."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings

    services: list[Any] = []

    def _client(data_dir: Path) -> Any:
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        settings.storage.data_dir = data_dir
        settings.storage.chroma_url, settings.storage.chroma_token = chroma_server
        service = build_app(settings, embedder=embedder)
        services.append(service)
        return service

    yield _client
    for service in services:
        service.catalog.close()
        service.documents.jobs.queue().close()


# Checks


def expected_ids(document_id: str, count: int) -> list[str]:
    return [f"{document_id}-{ordinal:05d}" for ordinal in range(count)]


def assert_complete(service: Any, document: Any, expected_chunks: int) -> None:
    """Ready, with exactly the expected chunks, keyword rows and vectors, nothing twice."""
    document = service.catalog.get_document(document.id)
    assert document.status == "ready" and document.error is None, document
    ids = service.catalog.document_chunk_ids(document.id)
    assert ids == expected_ids(document.id, expected_chunks)
    assert document.chunks == expected_chunks == document.chunks_total == document.chunks_embedded
    assert service.vectors.count(document.workspace_id, document.id) == expected_chunks
    with sqlite3.connect(service.settings.storage.data_dir / "catalog.sqlite") as db:
        rows = keyword_rows(db, document.id)
    assert rows == expected_chunks


def settled(service: Any, workspace: str) -> bool:
    return all(not d.is_active for d in service.documents.list(workspace))


def jobs_done(worker: Worker, outcome: str) -> list[str]:
    """Document ids the worker's log says ended with this outcome."""
    return re.findall(rf"job (\w+) {outcome} in", worker.log())


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def hundred_pages(guidelines: Path, tmp_path: Path) -> Path:
    """A 100-page PDF: 25 guideline pages four times (repeated text keeps embedding cheap; chunks stay 100 pages' worth)."""
    target = tmp_path / "hundred-pages.pdf"
    with pymupdf.open(guidelines / "kusumoto-2018-bradycardia.pdf") as source, pymupdf.open() as made:
        for _ in range(4):
            made.insert_pdf(source, from_page=10, to_page=34)
        made.save(target, garbage=3, deflate=True)
    return target


def test_worker_runs_what_ingest_no_wait_queues(
    data_dir: Path, tmp_path: Path, cli: Callable[..., Any], client: Callable[[Path], Any],
    start_worker: Callable[..., Worker], excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]],
    chroma_env: dict[str, str],
) -> None:
    files = [excerpt(*spec) for spec in SMALL[:2]]
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(files[0].read_bytes()[:2000])
    assert cli(data_dir, "workspace", "create", "W").returncode == 0

    queued = cli(data_dir, "ingest", "-w", "W", "--no-wait", *files, broken, **chroma_env)
    assert queued.returncode == 1, "a file refused before queueing fails the command, as a run that waits would"
    reports = [json.loads(line) for line in queued.stdout.splitlines()]
    assert [(r["document"], r["status"]) for r in reports] == [(f.name, "queued") for f in files] + [
        ("broken.pdf", "failed")
    ]
    assert reports[2]["error"].startswith("broken.pdf ")
    reports = reports[:2]
    service = client(data_dir)
    assert sorted(service.documents.jobs.queue().pending_document_ids()) == sorted(r["document_id"] for r in reports)

    worker = start_worker(data_dir)
    wait_until(lambda: settled(service, "W"), 240, "the queued files to settle")

    for path in files:
        assert_complete(service, service.documents.get("W", path.name), len(chunk_pdf(path)))
    failed = service.documents.get("W", "broken.pdf")
    assert failed.status == failed.stage == "failed" and (failed.error or "").startswith("broken.pdf ")
    assert service.documents.jobs.queue().pending_document_ids() == []
    listed = cli(data_dir, "documents", "-w", "W", "--json", **chroma_env)
    shown = {d["name"]: d for d in map(json.loads, listed.stdout.splitlines())}
    first = shown[files[0].name]
    assert (first["status"], first["stage"], first["progress"], first["eta_s"]) == ("ready", "ready", 1.0, None)
    assert first["pages_parsed"] == first["pages"] == 3 and first["chunks_embedded"] == first["chunks_total"] > 0
    assert shown["broken.pdf"]["error"] == failed.error
    assert sorted(jobs_done(worker, "ready")) == sorted(r["document_id"] for r in reports[:2])


def test_kill_9_mid_document_then_restart_ends_like_an_undisturbed_run(
    data_dir: Path, client: Callable[[Path], Any], start_worker: Callable[..., Worker], hundred_pages: Path,
    chunk_pdf: Callable[[Path], list[Any]],
) -> None:
    service = client(data_dir)
    service.workspaces.create("W")
    report = service.documents.submit("W", hundred_pages)
    env = {"WORKSPACE_EMBEDDING__BATCH_SIZE": "4"}  # progress after every 16 passages: easy to catch mid-way
    first = start_worker(data_dir, **env)

    def embedding_under_way() -> bool:
        document = service.catalog.get_document(report.document_id)
        return document.stage == "embedding" and 0 < document.chunks_embedded < document.chunks_total

    wait_until(embedding_under_way, 240, "the embedding stage", poll_s=0.02)
    assert first.kill(signal.SIGKILL) == -signal.SIGKILL
    left = service.catalog.get_document(report.document_id)
    assert (left.status, left.stage) == ("running", "embedding")
    assert service.documents.jobs.queue().pending_document_ids() == []  # huey removed the job when the worker took it

    second = start_worker(data_dir, **env)
    wait_until(lambda: settled(service, "W"), 240, "the document to finish after the restart")

    assert_complete(service, service.documents.get("W", hundred_pages.name), len(chunk_pdf(hundred_pages)))
    assert service.catalog.get_document(report.document_id).pages == 100
    assert "queued 1 unfinished jobs again" in second.log()


def test_sigterm_puts_the_running_job_back_and_a_new_worker_finishes_it(
    data_dir: Path, client: Callable[[Path], Any], start_worker: Callable[..., Worker], excerpt: Callable[..., Path],
    chunk_pdf: Callable[[Path], list[Any]],
) -> None:
    service = client(data_dir)
    service.workspaces.create("W")
    path = excerpt("grundy-2018-cholesterol.pdf", 20, 29)
    report = service.documents.submit("W", path)
    worker = start_worker(data_dir, WORKSPACE_EMBEDDING__BATCH_SIZE="2")
    wait_until(lambda: service.catalog.get_document(report.document_id).status == "running", 120, "the job to start")

    assert worker.kill(signal.SIGTERM) == 0
    back = service.catalog.get_document(report.document_id)
    assert (back.status, back.stage) == ("queued", "queued")
    assert service.documents.jobs.queue().pending_document_ids() == [report.document_id]

    start_worker(data_dir)
    wait_until(lambda: settled(service, "W"), 240, "the document to finish")
    assert_complete(service, back, len(chunk_pdf(path)))


def test_two_workers_share_the_queue_and_never_run_a_document_twice(
    data_dir: Path, client: Callable[[Path], Any], start_worker: Callable[..., Worker], excerpt: Callable[..., Path],
    chunk_pdf: Callable[[Path], list[Any]],
) -> None:
    service = client(data_dir)
    service.workspaces.create("W")
    workers = [start_worker(data_dir, WORKSPACE_QUEUE__WORKER_THREADS="1") for _ in range(2)]
    for worker in workers:
        worker.wait_consuming()
    paths = [excerpt(*spec) for spec in SMALL] + [excerpt("stout-2018-achd.pdf", 30, 31)]
    reports = [service.documents.submit("W", path) for path in paths]
    service.documents.enqueue("W", [r.document_id for r in reports])  # every job twice: only one run may win

    wait_until(lambda: settled(service, "W") and not service.documents.jobs.queue().pending_document_ids(), 300, "all jobs")

    for path in paths:
        assert_complete(service, service.documents.get("W", path.name), len(chunk_pdf(path)))
    ready = [jobs_done(worker, "ready") for worker in workers]
    assert sorted(ready[0] + ready[1]) == sorted(r.document_id for r in reports)  # each exactly once
    assert all(ready), "both workers took jobs"
    assert len(jobs_done(workers[0], "skipped") + jobs_done(workers[1], "skipped")) == len(paths)


def test_cancel_a_running_job_then_retry_it(
    data_dir: Path, client: Callable[[Path], Any], start_worker: Callable[..., Worker], excerpt: Callable[..., Path],
    chunk_pdf: Callable[[Path], list[Any]],
) -> None:
    service = client(data_dir)
    workspace = service.workspaces.create("W")
    path = excerpt("ommen-2024-hcm.pdf", 10, 17)
    report = service.documents.submit("W", path)
    start_worker(data_dir, WORKSPACE_EMBEDDING__BATCH_SIZE="2")

    def embedding_started() -> bool:
        return service.catalog.get_document(report.document_id).chunks_embedded > 0

    wait_until(embedding_started, 240, "the embedding stage", poll_s=0.02)
    asked = service.documents.cancel("W", report.document_id)
    assert asked.status == "running" and asked.cancel_requested
    wait_until(lambda: service.catalog.get_document(report.document_id).status == "cancelled", 60, "the cancel")
    cancelled = service.catalog.get_document(report.document_id)
    assert cancelled.stage == "cancelled" and not cancelled.cancel_requested
    assert service.catalog.document_chunk_ids(report.document_id) == []
    assert service.vectors.count(workspace.id, report.document_id) == 0

    assert service.documents.retry("W", report.document_id).status == "queued"
    wait_until(lambda: settled(service, "W"), 240, "the retried document")
    assert_complete(service, cancelled, len(chunk_pdf(path)))


# The Redis backend: the same queue code on RedisHuey, with a real redis-server (tests/redis_server.py).


def test_redis_backend_queues_jobs_for_two_workers_to_finish_once_each(
    data_dir: Path, cli: Callable[..., Any], client: Callable[[Path], Any], start_worker: Callable[..., Worker],
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]], chroma_env: dict[str, str], redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    on_redis = {"WORKSPACE_QUEUE__BACKEND": "redis", "WORKSPACE_QUEUE__REDIS_URL": redis_url}
    files = [excerpt(*spec) for spec in SMALL]
    assert cli(data_dir, "workspace", "create", "W", **on_redis).returncode == 0
    queued = cli(data_dir, "ingest", "-w", "W", "--no-wait", *files, **chroma_env, **on_redis)
    assert queued.returncode == 0, queued.stderr
    ids = [json.loads(line)["document_id"] for line in queued.stdout.splitlines()]
    for name, value in on_redis.items():
        monkeypatch.setenv(name, value)
    service = client(data_dir)
    assert sorted(service.documents.jobs.queue().pending_document_ids()) == sorted(ids)  # the jobs live in Redis
    assert not (data_dir / "queue.sqlite").exists()  # nothing fell back to the SQLite queue

    workers = [start_worker(data_dir, WORKSPACE_QUEUE__WORKER_THREADS="1", **on_redis) for _ in range(2)]
    wait_until(lambda: settled(service, "W") and not service.documents.jobs.queue().pending_document_ids(), 300, "all jobs")

    for path in files:
        assert_complete(service, service.documents.get("W", path.name), len(chunk_pdf(path)))
    ready = [jobs_done(worker, "ready") for worker in workers]
    assert sorted(ready[0] + ready[1]) == sorted(ids)  # each exactly once


# Passing faults: the vector store down for a while is retried by the queue, with back-off, on its own.


class ChromaServer:
    """A Chroma server of our own that the test can stop and start again on the same port and files."""

    def __init__(self, folder: Path) -> None:
        from workspace_app.adapters.supervisor import chroma_spec, chroma_token

        self.folder = folder
        self.url = f"http://127.0.0.1:{free_port()}"
        self.token = chroma_token(folder)
        self._argv = chroma_spec(folder, self.url, self.token).argv
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.folder / "chroma.log", "ab") as log:
            self.process = subprocess.Popen(self._argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        heartbeat = f"{self.url}/api/v2/heartbeat"
        wait_until(lambda: answers(heartbeat, {"Authorization": f"Bearer {self.token}"}), 60, "the Chroma server")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


@pytest.fixture
def own_chroma(tmp_path: Path) -> Iterator[ChromaServer]:
    folder = tmp_path / "own-chroma"
    folder.mkdir()
    server = ChromaServer(folder)
    server.start()
    yield server
    server.stop()


def test_a_vector_store_outage_is_retried_with_back_off_until_the_document_is_ready(
    data_dir: Path, tmp_path: Path, own_chroma: ChromaServer, embedder: Any, excerpt: Callable[..., Path],
    chunk_pdf: Callable[[Path], list[Any]],
) -> None:
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = data_dir
    settings.storage.chroma_url, settings.storage.chroma_token = own_chroma.url, own_chroma.token
    settings.queue.retries = 20
    service = build_app(settings, embedder=embedder)
    service.workspaces.create("W")
    env = {"WORKSPACE_CHROMA_URL": own_chroma.url, "WORKSPACE_STORAGE__CHROMA_TOKEN": own_chroma.token,
           "WORKSPACE_QUEUE__RETRY_DELAY_S": "1",
           "WORKSPACE_QUEUE__RETRY_DELAY_MAX_S": "2"}
    worker = Worker(data_dir, tmp_path / "worker.log", env)
    try:
        worker.wait_consuming()
        own_chroma.stop()
        path = excerpt(*SMALL[0])
        report = service.documents.submit("W", path)
        seen: list[Any] = []

        def retrying() -> bool:
            document = service.documents.get("W", report.document_id)
            seen.append(document)
            return document.retrying and document.attempt >= 2

        wait_until(retrying, 240, "a second try to fail and a third to be planned")
        waiting = seen[-1]
        assert waiting.status == "queued" and waiting.attempts == 21 and "vector store" in (waiting.error or "")
        note = waiting.job_note(time.time())
        assert note is not None and note.startswith(f"retrying ({waiting.attempt + 1} of 21) — next try")
        assert not any(d.status == "failed" for d in seen[1:]), "a passing fault never shows as failed for good"
        own_chroma.start()  # the store is back: the next try (within 2 s) finishes the document
        back = time.monotonic()
        wait_until(lambda: settled(service, "W"), 120, "the document after the store came back")
        assert time.monotonic() - back < 60
        assert_complete(service, service.catalog.get_document(report.document_id), len(chunk_pdf(path)))
        done = service.catalog.get_document(report.document_id)
        assert done.attempt > 2 and done.next_try_at is None and done.job_note(time.time()) is None
        assert "Unhandled exception" not in worker.log()
    finally:
        worker.stop()
        service.catalog.close()
        service.documents.jobs.queue().close()


def test_the_last_try_of_a_passing_fault_fails_with_the_count_and_a_bad_file_is_never_retried(
    data_dir: Path, tmp_path: Path, own_chroma: ChromaServer, embedder: Any, excerpt: Callable[..., Path],
) -> None:
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = data_dir
    settings.storage.chroma_url, settings.storage.chroma_token = own_chroma.url, own_chroma.token
    settings.queue.retries = 2  # the tries a job is given are the enqueuer's
    service = build_app(settings, embedder=embedder)
    service.workspaces.create("W")
    env = {"WORKSPACE_CHROMA_URL": own_chroma.url, "WORKSPACE_STORAGE__CHROMA_TOKEN": own_chroma.token,
           "WORKSPACE_QUEUE__RETRY_DELAY_S": "0.5"}
    # A file that fails for good when read: queued as a good PDF, then its stored copy replaced by one whose only
    # page has no text (the quick checks before queueing would have refused it), as a file damaged on disk.
    bad = service.documents.submit("W", excerpt(*SMALL[1]))
    assert bad.status == "queued"
    with pymupdf.open() as blank:
        blank.new_page()
        blank.save(service.documents.document_path(service.documents.get("W", bad.document_id)))
    worker = Worker(data_dir, tmp_path / "worker.log", env)
    try:
        worker.wait_consuming()
        wait_until(lambda: settled(service, "W"), 120, "the damaged file")
        failed = service.catalog.get_document(bad.document_id)
        assert (failed.status, failed.attempt, failed.retryable) == ("failed", 1, False)
        own_chroma.stop()
        report = service.documents.submit("W", excerpt(*SMALL[2]))
        wait_until(lambda: settled(service, "W"), 240, "three tries of the document")
        dead = service.catalog.get_document(report.document_id)
        assert (dead.status, dead.attempt, dead.attempts, dead.retryable) == ("failed", 3, 3, True)
        assert "gave up after 3 tries" in (dead.error or "")
        assert service.documents.jobs.queue().pending_document_ids() == []
    finally:
        worker.stop()
        service.catalog.close()
        service.documents.jobs.queue().close()
