"""Streaming and first-ask benchmark (issue 27, targets): how soon a streamed extractive answer starts, and how the
first ask after `workspace-app api` reports ready compares with warm asks.

    .venv/bin/python -m bench.streaming [--runs 3] [--asks 24] [--docs 5] [--data-dir DIR] [--label default]

A data dir with the dev PDFs ingested (in this process, embedded Chroma, as bench.api does) is prepared once and
kept in `--data-dir` (default bench/.cache/streaming, reused while its record file is there). Then, per run:

1. start: `workspace-app api` is started on it (a real process, `python -m workspace_app.adapters.cli`, so that
   PYTHONPATH picks the tree), and `GET /health` is polled every 50 ms until it answers 200 (ready). At once one
   `POST /ask` is sent: the first ask. Each run starts one question further along the list, so each run's first
   question is a different one.
2. warm: `--asks` more `POST /ask`, one after another, each a question not asked before in this process (so no
   recent-query memo helps; query embeddings are not kept on disk, so a new process has none): the warm p50/p95. Target: first ask < 2 x warm p95.
3. streams: `--asks` more fresh questions as `POST /v1/chat/completions` with `stream: true` (the `openai`
   protocol, server-sent events), then `--asks` more as Ollama's `POST /api/chat` (NDJSON). Each is timed from
   sending the request to the first chunk carrying answer text (the OpenAI stream's opening role chunk has none)
   and to the stream's end. Target: first content chunk < 300 ms warm (p50 and p95 reported).

Questions are the guideline dev questions (../shared/eval, English and Chinese) in file order, hybrid mode (the
API's default). The machine's load average is recorded at the start and after each run. Results go to
bench/results/streaming.json under the label (other labels are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.common import (
    CACHE_DIR,
    EVAL_DIR,
    RESULTS_DIR,
    bench_settings,
    dev_inputs,
    git_info,
    load_jsonl,
    log,
    machine_info,
    now_iso,
    open_app,
    percentile,
)
from bench.common.serving import free_port, stop

OUT = RESULTS_DIR / "streaming.json"
WORKSPACE = "Bench streaming"
MODEL = f"workspace:{WORKSPACE}"
RECORD = "bench-streaming.json"
QUESTION_FILES = ("guidelines_dev.jsonl", "guidelines_dev_more.jsonl", "guidelines_dev_xling.jsonl")
FIRST_CHUNK_TARGET_MS = 300
READY_POLL_S = 0.05


def questions(skip: int = 0) -> Iterator[str]:
    """Each dev question once, in file order, from the `skip`-th."""
    seen: dict[str, None] = {}
    for name in QUESTION_FILES:
        seen.update((row["question"], None) for row in load_jsonl(EVAL_DIR / name))
    yield from list(seen)[skip:]


def prepare(data_dir: Path, docs: int) -> dict[str, Any]:
    """The data dir with the first `docs` dev PDFs ingested (reused when its record file says so)."""
    from workspace_app.adapters.ownership import release_data_dir

    record_path = data_dir / RECORD
    if record_path.exists():
        record: dict[str, Any] = json.loads(record_path.read_text())
        if record.get("docs") == docs:
            log(f"reusing {data_dir}")
            return record
    app = open_app(bench_settings(data_dir))
    try:
        workspace = app.workspaces.create(WORKSPACE)
        reports = [app.documents.ingest(workspace.id, path) for path in dev_inputs()[:docs]]
        app.suggestions.suggest(workspace.id, "hybrid")  # as the worker does after ingesting
    finally:
        app.close()
        release_data_dir(data_dir)
    record = {"docs": docs, "documents": [r.document for r in reports], "chunks": sum(r.chunks for r in reports),
              "statuses": [r.status for r in reports]}
    record_path.write_text(json.dumps(record))
    return record


class ApiProcess:
    """`workspace-app api` on the data dir; `ready_s` is the time from its start until `/health` answered 200."""

    def __init__(self, data_dir: Path, log_path: Path) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        argv = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data_dir), "api", "--port", str(port)]
        self.log_path = log_path
        self.started = time.monotonic()
        with log_path.open("ab") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env)
        self.ready_s = self._wait_ready()

    def _wait_ready(self, timeout_s: float = 300) -> float:
        import httpx

        with httpx.Client(timeout=5, trust_env=False) as client:
            while time.monotonic() - self.started < timeout_s and self.process.poll() is None:
                try:
                    if client.get(f"{self.url}/health").status_code == 200:
                        return time.monotonic() - self.started
                except httpx.HTTPError:
                    pass
                time.sleep(READY_POLL_S)
        self.stop()
        raise SystemExit(f"the API did not become ready; see {self.log_path}")

    def stop(self) -> None:
        stop(self.process)


def timed_ask(client: Any, question: str, stages: dict[str, list[float]] | None = None) -> float:
    """Seconds of one `POST /ask` (JSON answer); the answer's own stage timings are added to `stages`."""
    began = time.perf_counter()
    response = client.post("/ask", json={"question": question, "workspace": WORKSPACE})
    elapsed = time.perf_counter() - began
    response.raise_for_status()
    for stage, ms in (response.json().get("timings_ms") or {}).items():
        if stages is not None:
            stages.setdefault(stage, []).append(ms)
    return elapsed


def openai_stream(client: Any, question: str) -> tuple[float, float, int]:
    """(seconds to the first chunk with text, seconds to the end, chunks with text) of one streamed completion."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": question}], "stream": True}
    began = time.perf_counter()
    first, pieces = None, 0
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                pieces += 1
                first = first if first is not None else time.perf_counter() - began
    return _checked(first, question), time.perf_counter() - began, pieces


def ollama_stream(client: Any, question: str) -> tuple[float, float, int]:
    """(seconds to the first line with text, seconds to the end, lines with text) of one streamed Ollama chat."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": question}]}
    began = time.perf_counter()
    first, pieces = None, 0
    with client.stream("POST", "/api/chat", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line and json.loads(line).get("message", {}).get("content"):
                pieces += 1
                first = first if first is not None else time.perf_counter() - began
    return _checked(first, question), time.perf_counter() - began, pieces


def _checked(first: float | None, question: str) -> float:
    if first is None:
        raise RuntimeError(f"a stream without text for {question!r}")
    return first


def ms_stats(seconds: list[float]) -> dict[str, float]:
    """Count, p50, p95 and max in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1),
            "max_ms": round(max(ms), 1)}


def streams(client: Any, asked: Iterator[str], asks: int, one: Any) -> dict[str, Any]:
    """`asks` fresh questions streamed with `one`: first-text and end times, pieces per answer."""
    firsts, ends, pieces = [], [], []
    for _ in range(asks):
        first, end, count = one(client, next(asked))
        firsts.append(first)
        ends.append(end)
        pieces.append(count)
    return {"first_text": ms_stats(firsts), "end": ms_stats(ends), "pieces_p50": percentile(pieces, 50),
            "first_text_p95_lt_300ms": percentile(firsts, 95) * 1000 < FIRST_CHUNK_TARGET_MS}


def one_run(data_dir: Path, folder: Path, asked: Iterator[str], asks: int, index: int) -> dict[str, Any]:
    """Start the API, ask the first question at once, then the warm asks and the streams; stop it."""
    import httpx

    api = ApiProcess(data_dir, folder / f"api-{index}.log")
    try:
        with httpx.Client(base_url=api.url, timeout=120, trust_env=False) as client:
            first_question = next(asked)
            first_stages: dict[str, list[float]] = {}
            first = timed_ask(client, first_question, first_stages)
            stages: dict[str, list[float]] = {}
            warm = [timed_ask(client, next(asked), stages) for _ in range(asks)]
            openai = streams(client, asked, asks, openai_stream)
            ollama = streams(client, asked, asks, ollama_stream)
    finally:
        api.stop()
    warm_p95 = percentile(warm, 95)
    run = {
        "ready_s": round(api.ready_s, 2), "first_ask_ms": round(first * 1000, 1), "first_question": first_question,
        "first_ask_stages_ms": {stage: round(ms[0], 1) for stage, ms in first_stages.items()},
        "warm_ask": ms_stats(warm),
        "warm_ask_stages_p50_ms": {stage: round(percentile(ms, 50), 1) for stage, ms in stages.items()}, "first_over_warm_p95": round(first / warm_p95, 2),
        "first_lt_2x_warm_p95": first < 2 * warm_p95, "openai_stream": openai, "ollama_stream": ollama,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }
    log(json.dumps(run))
    return run


def run(runs: int, asks: int, docs: int, data_dir: Path) -> dict[str, Any]:
    """Prepare the data dir, then the runs."""
    import tempfile

    workspace = prepare(data_dir, docs)
    with tempfile.TemporaryDirectory(prefix="bench-streaming-") as folder:
        records = [one_run(data_dir, Path(folder), questions(i), asks, i) for i in range(runs)]
    return {"workspace": workspace, "asks_per_measure": asks, "runs": records, "summary": summary(records)}


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The targets over all runs: worst first-ask ratio, and the streams' first-text p50/p95 over every ask."""
    return {
        "first_over_warm_p95_max": max(r["first_over_warm_p95"] for r in records),
        "first_lt_2x_warm_p95_all_runs": all(r["first_lt_2x_warm_p95"] for r in records),
        "openai_first_text_p95_ms": [r["openai_stream"]["first_text"]["p95_ms"] for r in records],
        "ollama_first_text_p95_ms": [r["ollama_stream"]["first_text"]["p95_ms"] for r in records],
        "first_text_lt_300ms_all_runs": all(
            r[kind]["first_text_p95_lt_300ms"] for r in records for kind in ("openai_stream", "ollama_stream")
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="API starts (default 3)")
    parser.add_argument("--asks", type=int, default=24, help="asks per measurement (warm, each stream; default 24)")
    parser.add_argument("--docs", type=int, default=5, help="dev PDFs in the workspace (default all 5)")
    parser.add_argument("--data-dir", type=Path, default=CACHE_DIR / "streaming", help="prepared data dir (reused)")
    parser.add_argument("--label", default="default")
    args = parser.parse_args()
    needed = args.runs - 1 + 1 + 3 * args.asks
    if needed > len(list(questions())):
        parser.error(f"{needed} questions needed, {len(list(questions()))} available: fewer --runs or --asks")
    machine = machine_info()
    figures = run(args.runs, args.asks, args.docs, args.data_dir)
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[args.label] = {"when": now_iso(), "git": git_info(), "machine": machine, **figures}
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(figures["summary"], indent=2))


if __name__ == "__main__":
    main()
