"""HTTP API benchmark (issue 15, item 7): what the API adds to an answer, and how it holds up under load.

A data dir with the dev PDFs ingested (in this process, embedded store) is asked the same questions three ways:

1. in process: `app.answers.ask` (the floor);
2. through `workspace-app api` (a real uvicorn process on the same data dir, after this process let it go), one
   client: the HTTP overhead is the difference of the medians;
3. through the API with 1, 4 and 8 concurrent clients: throughput, latency p50/p95, errors.

Every path is warmed first (one pass over the questions), so the embedding cache serves both sides alike.

    .venv/bin/python -m bench.api [--docs 5] [--reps 2] [--mode hybrid] [--label LABEL]

Results go to bench/results/api.json under the label (other labels in the file are kept).
Targets (the issue): overhead <= 10 ms p50; 8 clients without errors and p95 <= 3x the single client's p95.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import (
    RESULTS_DIR,
    bench_settings,
    dev_inputs,
    git_info,
    log,
    machine_info,
    now_iso,
    open_app,
    percentile,
)
from bench.common.serving import free_port

OUT = RESULTS_DIR / "api.json"
WORKSPACE = "Bench API"
QUESTIONS = (
    "What INR range should warfarin target in women with atrial fibrillation?",
    "Should aspirin be used in women with coronary heart disease?",
    "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?",
    "When is tilt-table testing reasonable in patients with suspected syncope?",
    "How much sodium should adults who would benefit from blood pressure lowering eat?",
    "What is recommended for women with chronic or paroxysmal atrial fibrillation?",
)
CONCURRENCY = (1, 4, 8)


def prepare(data_dir: Path, docs: int) -> dict[str, Any]:
    """Ingest the first `docs` dev PDFs into the workspace; returns what was ingested."""
    from workspace_app.adapters.ownership import release_data_dir

    app = open_app(bench_settings(data_dir))
    try:
        workspace = app.workspaces.create(WORKSPACE)
        reports = [app.documents.ingest(workspace.id, path) for path in dev_inputs()[:docs]]
        for report in reports:
            log(f"ingested {report.document}: {report.status}, {report.chunks} chunks")
        return {"documents": [r.document for r in reports], "chunks": sum(r.chunks for r in reports)}
    finally:
        app.close()
        release_data_dir(data_dir)


def in_process(data_dir: Path, mode: str, reps: int) -> list[float]:
    """Seconds per `app.answers.ask`, after a warm pass."""
    from workspace_app.adapters.ownership import release_data_dir

    app = open_app(bench_settings(data_dir))
    try:
        for question in QUESTIONS:
            app.answers.ask(WORKSPACE, question, mode=mode)
        timings = []
        for _ in range(reps):
            for question in QUESTIONS:
                started = time.perf_counter()
                app.answers.ask(WORKSPACE, question, mode=mode)
                timings.append(time.perf_counter() - started)
        return timings
    finally:
        app.close()
        release_data_dir(data_dir)


def start_api(data_dir: Path, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`workspace-app api` on the data dir (no language model), once /health answers."""
    import httpx

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    argv = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data_dir), "api", "--port", str(port)]
    with log_path.open("ab") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=5, trust_env=False).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    process.kill()
    raise SystemExit(f"the API did not start; see {log_path}")


def ask_over_http(client: Any, question: str, mode: str) -> tuple[float, bool]:
    """(seconds, ok) of one POST /ask."""
    started = time.perf_counter()
    response = client.post("/ask", json={"question": question, "workspace": WORKSPACE, "mode": mode})
    return time.perf_counter() - started, response.status_code == 200


def over_http(url: str, mode: str, reps: int) -> tuple[list[float], list[dict[str, Any]]]:
    """Single-client latencies, then each concurrency's throughput and latency."""
    import httpx

    with httpx.Client(base_url=url, timeout=300, trust_env=False) as client:
        for question in QUESTIONS:
            ask_over_http(client, question, mode)
        single = [ask_over_http(client, q, mode)[0] for _ in range(reps) for q in QUESTIONS]
        loads = [load(client, clients, mode, reps) for clients in CONCURRENCY]
    return single, loads


def load(client: Any, clients: int, mode: str, reps: int) -> dict[str, Any]:
    """`clients` threads each asking every question `reps` times; throughput and latency of all the asks."""
    jobs = [q for _ in range(reps) for q in QUESTIONS]
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda q: ask_over_http(client, q, mode), jobs * clients))
    wall = time.perf_counter() - started
    seconds = [s for s, _ in results]
    summary = {
        "clients": clients, "asks": len(results), "errors": sum(not ok for _, ok in results),
        "wall_s": round(wall, 2), "asks_per_s": round(len(results) / wall, 2), **latency(seconds),
    }
    log(f"{clients} clients: {summary}")
    return summary


def latency(seconds: list[float]) -> dict[str, float]:
    """p50/p95/max in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1), "max_ms": round(max(ms), 1)}


def run(docs: int, reps: int, mode: str) -> dict[str, Any]:
    """Prepare, measure in process, measure over HTTP; the record for the results file."""
    folder = Path(tempfile.mkdtemp(prefix="bench-api-"))
    try:
        data_dir = folder / "data"
        ingested = prepare(data_dir, docs)
        local = in_process(data_dir, mode, reps)
        log(f"in process: {latency(local)}")
        process, url = start_api(data_dir, folder / "api.log")
        try:
            single, loads = over_http(url, mode, reps)
        finally:
            process.terminate()
            process.wait(30)
        log(f"over HTTP: {latency(single)}")
        return verdict(ingested, mode, reps, local, single, loads)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def verdict(
    ingested: dict[str, Any], mode: str, reps: int, local: list[float], single: list[float], loads: list[dict[str, Any]]
) -> dict[str, Any]:
    """The measurements with the issue's targets checked."""
    local_stats, http_stats = latency(local), latency(single)
    overhead = round(http_stats["p50_ms"] - local_stats["p50_ms"], 1)
    one = next(x for x in loads if x["clients"] == 1)
    eight = next(x for x in loads if x["clients"] == 8)
    return {
        "when": now_iso(), "git": git_info(), "machine": machine_info(), "mode": mode, "reps": reps,
        "questions": len(QUESTIONS), "workspace": ingested, "in_process": local_stats, "http_single": http_stats,
        "overhead_p50_ms": overhead, "concurrency": loads,
        "targets": {
            "overhead_p50_le_10ms": overhead <= 10,
            "eight_clients_no_errors": eight["errors"] == 0,
            "eight_clients_p95_le_3x_single": eight["p95_ms"] <= 3 * one["p95_ms"],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5, help="dev PDFs to ingest (default all 5)")
    parser.add_argument("--reps", type=int, default=2, help="passes over the questions per measurement")
    parser.add_argument("--mode", default="hybrid", choices=("naive", "local", "global", "hybrid"))
    parser.add_argument("--label", default="latest")
    args = parser.parse_args()
    record = run(args.docs, args.reps, args.mode)
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[args.label] = record
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: record[k] for k in ("in_process", "http_single", "overhead_p50_ms", "targets")}, indent=2))


if __name__ == "__main__":
    main()
