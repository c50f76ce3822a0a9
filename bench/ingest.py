"""Ingestion benchmark: the corpus PDFs through the queue and a worker, against synchronous CLI ingest.

Run from the repository root (about 20 minutes on 2 shared cores):

    .venv/bin/python -m bench.ingest                    # sync CLI, queue + worker, then 5 kill -9 cycles
    .venv/bin/python -m bench.ingest --kill-cycles 0    # without the crash mode

Every mode uses a fresh data dir (so the embedding cache starts empty) under one temporary folder.
- sync: `workspace-app ingest -w W <13 PDFs>` as one process (embedded Chroma, what a user runs by hand).
- queue: a Chroma server and `workspace-app worker` (what `serve` runs); the files are submitted at once
  with `app.documents.submit` (what the Sources page calls). Timed from the worker's start (cold, like the
  CLI) and from the upload with the model already loaded (warm, like a running `serve`).
- kill: the files are queued, then the worker is killed with SIGKILL at random moments and restarted,
  `--kill-cycles` times; afterwards every document must be ready with exactly the chunks of the queue run
  (ids `<document>-00000..`), one vector and one keyword row per chunk. By default this data dir starts
  with the queue run's embedding cache (the mode checks consistency, not speed, and this keeps it to
  minutes); `--kill-cold-cache` starts it empty.
Results go to bench/results/ingest.json and a Markdown table is printed for bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import CORPUS_DIR, RESULTS_DIR, BenchApp, now_iso, open_app
from bench.common.app import vector_index

CORPUS = CORPUS_DIR
OUT = RESULTS_DIR / "ingest.json"
CLI = Path(sys.executable).parent / "workspace-app"
QUERY = "recommendation for patients"


def environ(**extra: str) -> dict[str, str]:
    """The environment of our subprocesses: no developer settings, offline models."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **extra})
    return env


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, poll_s: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


TOKENS: dict[str, str] = {}  # Chroma URL -> the token its gate asks for


class ChromaServer:
    """`chroma run` behind its token gate on a free loopback port (what `serve` starts)."""

    def __init__(self, folder: Path) -> None:
        from workspace_app.adapters.supervisor import answers, chroma_spec, chroma_token, free_port

        self.url = f"http://127.0.0.1:{free_port()}"
        folder.mkdir(parents=True, exist_ok=True)
        TOKENS[self.url] = chroma_token(folder)
        spec = chroma_spec(folder, self.url, TOKENS[self.url])
        with open(folder / "chroma.log", "wb") as log:
            self.process = subprocess.Popen(spec.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        ready = f"{self.url}/api/v2/heartbeat"
        wait_until(lambda: answers(ready, headers=spec.ready_headers), 60, "the Chroma server", 0.2)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


class WorkerProcess:
    """A `workspace-app worker` on a data dir; its peak RSS is read from /proc before it stops."""

    def __init__(self, data_dir: Path, chroma_url: str, log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.offset = log_path.stat().st_size
        self.process = subprocess.Popen(
            [str(CLI), "--data-dir", str(data_dir), "worker"],
            stdout=self._log,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
            env=environ(WORKSPACE_CHROMA_URL=chroma_url, WORKSPACE_STORAGE__CHROMA_TOKEN=TOKENS.get(chroma_url, "")),
            cwd=data_dir.parent,
        )

    def wait_model_ready(self, timeout_s: float = 180) -> None:
        def ready() -> bool:
            text = self.log_path.read_text(errors="replace")[self.offset :]
            return "embedding model ready" in text

        wait_until(ready, timeout_s, "the worker's model", 0.1)

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
        return float("nan")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(60)
        self._log.close()


def page_count(path: Path) -> int:
    with pymupdf.open(path) as doc:
        return int(doc.page_count)


def app_on(data_dir: Path, chroma_url: str | None) -> BenchApp:
    """The app in this process (its embedder is never loaded: the benchmark process only reads and queues)."""
    from workspace_app.config import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = data_dir
    settings.storage.chroma_url = chroma_url
    settings.storage.chroma_token = TOKENS.get(chroma_url or "")
    return open_app(settings)


def run_sync(files: list[Path], data_dir: Path) -> dict[str, Any]:
    """One `workspace-app ingest` process over all files; wall time, peak RSS, per-file reports."""
    subprocess.run(
        [str(CLI), "--data-dir", str(data_dir), "workspace", "create", "W"],
        check=True,
        capture_output=True,
        env=environ(),
    )
    started = time.monotonic()
    process = subprocess.Popen(
        [str(CLI), "--data-dir", str(data_dir), "ingest", "-w", "W", *map(str, files)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environ(),
        text=True,
    )
    assert process.stdout is not None
    lines = process.stdout.read().splitlines()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    reports = [json.loads(line) for line in lines if line.startswith("{")]
    return {
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "exit_code": process.returncode,
        "chunks": {r["document"]: r["chunks"] for r in reports},
        "statuses": {r["document"]: r["status"] for r in reports},
    }


def run_queue(files: list[Path], data_dir: Path, chroma_url: str, log_path: Path) -> dict[str, Any]:
    """Worker started cold, model loaded, then all files submitted at once; timings and memory."""
    app = app_on(data_dir, chroma_url)
    app.workspaces.create("W")
    worker_started = time.monotonic()
    worker = WorkerProcess(data_dir, chroma_url, log_path)
    try:
        worker.wait_model_ready()
        model_ready = time.monotonic()
        uploaded = [app.documents.submit("W", path) for path in files]
        assert all(r.status == "queued" for r in uploaded), uploaded
        reads: list[float] = []
        first_ready = wait_all_settled(app, model_ready, reads)
        done = time.monotonic()
        peak = worker.peak_rss_mb()
    finally:
        worker.stop()
    documents = app.documents.list("W")
    return {
        "wall_s_from_upload": round(done - model_ready, 1),
        "wall_s_from_worker_start": round(done - worker_started, 1),
        "worker_start_to_model_ready_s": round(model_ready - worker_started, 1),
        "first_searchable_s_from_upload": round(first_ready - model_ready, 2),
        "worker_peak_rss_mb": peak,
        "page_read_ms_p50": percentile(reads, 0.5),
        "page_read_ms_p95": percentile(reads, 0.95),
        "page_read_ms_max": round(max(reads), 1) if reads else None,
        "chunks": {d.name: d.chunks for d in documents},
        "statuses": {d.name: d.status for d in documents},
    }


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)


def wait_all_settled(app: BenchApp, since: float, reads: list[float] | None = None) -> float:
    """Poll the catalog until no document is queued or running; returns when the first became searchable.

    Each poll is what the Sources page does on every refresh (list the documents); its latency while the
    worker embeds goes to `reads` (milliseconds).
    """
    first_ready: float | None = None
    while True:
        started = time.perf_counter()
        documents = app.documents.list("W")
        if reads is not None:
            reads.append((time.perf_counter() - started) * 1000)
        if first_ready is None and any(d.status == "ready" for d in documents):
            hits = app.search.search("W", QUERY, methods=("sparse",)).hits
            first_ready = time.monotonic() if hits else None
        if all(not d.is_active for d in documents):
            return first_ready if first_ready is not None else time.monotonic()
        if time.monotonic() - since > 3600:
            raise TimeoutError("ingestion did not finish within an hour")
        time.sleep(0.1)


def run_kill(
    files: list[Path], data_dir: Path, chroma_url: str, log_path: Path, cycles: int, expected: dict[str, int], seed: int,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Kill the worker with SIGKILL at random moments, restart it, and check nothing was lost or duplicated."""
    rng = random.Random(seed)
    if cache is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cache, data_dir / "embeddings.sqlite")
    app = app_on(data_dir, chroma_url)
    app.workspaces.create("W")
    for path in files:
        app.documents.submit("W", path)
    kills = []
    started = time.monotonic()
    for _ in range(cycles):
        worker = WorkerProcess(data_dir, chroma_url, log_path)
        worker.wait_model_ready()
        delay = rng.uniform(2.0, 30.0)
        time.sleep(delay)
        running = [f"{d.name}:{d.stage}" for d in app.documents.list("W") if d.status == "running"]
        worker.stop(signal.SIGKILL)
        kills.append({"after_s": round(delay, 1), "running": running})
    worker = WorkerProcess(data_dir, chroma_url, log_path)
    try:
        wait_all_settled(app, time.monotonic())
    finally:
        worker.stop()
    return {
        "cycles": cycles,
        "seed": seed,
        "kills": kills,
        "wall_s": round(time.monotonic() - started, 1),
        **check_exact(app, data_dir, expected),
    }


def check_exact(app: BenchApp, data_dir: Path, expected: dict[str, int]) -> dict[str, Any]:
    """Lost and duplicated chunks, vectors and keyword rows against the undisturbed counts."""
    problems = []
    workspace = app.workspaces.get("W")
    with sqlite3.connect(data_dir / "catalog.sqlite") as db:
        for document in app.documents.list("W"):
            want = expected.get(document.name)
            ids = app.catalog.document_chunk_ids(document.id)
            table = f"fts_{workspace.id}"
            fts = db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
                (document.id,),
            ).fetchone()[0]
            vectors = vector_index(app).count(workspace.id, document.id)
            good = [f"{document.id}-{i:05d}" for i in range(want or 0)]
            if document.status != "ready" or ids != good or vectors != want or fts != want or document.chunks != want:
                problems.append(
                    {
                        "document": document.name,
                        "status": document.status,
                        "chunks": len(ids),
                        "expected": want,
                        "vectors": vectors,
                        "keyword_rows": fts,
                        "error": document.error,
                    }
                )
        total = db.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM chunks").fetchone()
    return {
        "documents_ready": sum(d.status == "ready" for d in app.documents.list("W")),
        "chunks_total": total[0],
        "chunks_distinct": total[1],
        "vectors_total": vector_index(app).count(workspace.id),
        "expected_total": sum(expected.values()),
        "problems": problems,
        "lost_or_duplicated": len(problems) + abs(total[0] - sum(expected.values())),
    }


def markdown(results: dict[str, Any]) -> str:
    """The table for bench/README.md."""
    sync, queue, kill = results["sync"], results["queue"], results.get("kill")
    pages = results["pages"]
    rows = [
        ("total wall time, sync CLI (one cold process)", f"{sync['wall_s']} s ({pages / sync['wall_s']:.2f} pages/s)"),
        (
            "total wall time, queue + worker from worker start (cold)",
            f"{queue['wall_s_from_worker_start']} s ({pages / queue['wall_s_from_worker_start']:.2f} pages/s)",
        ),
        (
            "total wall time, queue from upload (warm worker, as under `serve`)",
            f"{queue['wall_s_from_upload']} s ({pages / queue['wall_s_from_upload']:.2f} pages/s)",
        ),
        ("ratio queue (cold) / sync CLI (target <= 1.05)", f"{results['ratio_queue_cold_to_sync']:.3f}"),
        (
            "time to first searchable chunk after upload (target <= 10 s)",
            f"{queue['first_searchable_s_from_upload']} s",
        ),
        ("worker peak RSS (target < 2.5 GB)", f"{queue['worker_peak_rss_mb']:.0f} MB"),
        ("sync CLI peak RSS", f"{sync['peak_rss_mb']:.0f} MB"),
        (
            "Sources page read (list documents) while the worker embeds, p50 / p95 / max",
            f"{queue['page_read_ms_p50']} / {queue['page_read_ms_p95']} / {queue['page_read_ms_max']} ms",
        ),
    ]
    if kill:
        counts = f"chunks {kill['chunks_total']}/{kill['expected_total']}, vectors {kill['vectors_total']}"
        rows.append(
            (
                f"kill -9 / restart cycles: lost or duplicated chunks ({kill['cycles']} cycles)",
                f"{kill['lost_or_duplicated']} ({counts})",
            )
        )
    lines = ["| measure | result |", "|---|---|", *[f"| {name} | {value} |" for name, value in rows]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--kill-cycles", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--kill-cold-cache", action="store_true", help="kill mode starts with an empty embedding cache")
    parser.add_argument(
        "--only-queue", action="store_true",
        help="only the queue phase (first searchable chunk, worker memory); results to bench/results/ingest-queue.json",
    )
    args = parser.parse_args(argv)
    if args.only_queue:
        args.kill_cycles = 0
        if args.out == OUT:
            args.out = OUT.with_name("ingest-queue.json")
    files = sorted(args.corpus.glob("*.pdf"))
    results: dict[str, Any] = {
        "date": now_iso(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "files": len(files),
        "pages": sum(page_count(path) for path in files),
        "load_average_before": load_average(),
    }
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        folder = Path(tmp)
        if not args.only_queue:
            print(f"sync CLI ingest of {len(files)} files…", file=sys.stderr, flush=True)
            results["sync"] = run_sync(files, folder / "sync" / "data")
            save(results, args.out)
        chroma = ChromaServer(folder / "chroma-server")
        try:
            print("queue + worker…", file=sys.stderr, flush=True)
            results["queue"] = run_queue(files, folder / "queue" / "data", chroma.url, folder / "queue-worker.log")
            if "sync" in results:
                results["ratio_queue_cold_to_sync"] = round(
                    results["queue"]["wall_s_from_worker_start"] / results["sync"]["wall_s"], 3
                )
                results["same_chunks_sync_and_queue"] = results["sync"]["chunks"] == results["queue"]["chunks"]
            save(results, args.out)
            if args.kill_cycles:
                print(f"{args.kill_cycles} kill -9 cycles…", file=sys.stderr, flush=True)
                cache = None if args.kill_cold_cache else folder / "queue" / "data" / "embeddings.sqlite"
                results["kill"] = run_kill(
                    files, folder / "kill" / "data", chroma.url, folder / "kill-worker.log", args.kill_cycles,
                    results["queue"]["chunks"], args.seed, cache,
                )
                results["kill"]["embedding_cache"] = "cold" if cache is None else "warm (copied from the queue run)"
        finally:
            chroma.stop()
    results["load_average_after"] = load_average()
    results["self_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    results["complete"] = True
    save(results, args.out)
    print(markdown(results) if "sync" in results else json.dumps(results["queue"], indent=2))
    return 0


def save(results: dict[str, Any], out: Path) -> None:
    """Write what is measured so far (a run that dies later keeps its finished phases)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
