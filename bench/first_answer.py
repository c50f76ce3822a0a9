"""First-answer benchmark: how long the first question after `workspace-app serve` reports ready takes, against
the questions after it (issue 12, item 9: "first answer within 2x the warm p95").

A data dir with two ingested guidelines is prepared once in this process (its suggested questions computed, as
the worker does after ingesting, so the chat page itself asks nothing). Then, per run: `serve` starts on it; when
it prints "Workspace is running at" (ready), Chromium opens the workspace, goes to Chat and asks the questions
one after the other. Each answer is timed from pressing Enter until its citation chips are on the page. The
first question is the cold one; the rest give the warm median and p95.

    .venv/bin/python -m bench.first_answer [--runs 2] [--label after] [--data-dir DIR]

Results go to bench/results/first_answer.json under the label (other labels in the file are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from bench.common import CORPUS_DIR, RESULTS_DIR, bench_settings, git_info, now_iso, open_app, percentile
from bench.common.serving import CHROMIUM_ARGS, CLI, free_port, stop

OUT = RESULTS_DIR / "first_answer.json"
SOURCES = ("mosca-2011-women-cvd.pdf", "shen-2017-syncope.pdf")
WORKSPACE = "Bench first answer"
QUESTIONS = (
    "What INR range should warfarin target in women with atrial fibrillation?",
    "Should aspirin be used in women with coronary heart disease?",
    "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?",
    "Is hormone therapy recommended to prevent cardiovascular disease in postmenopausal women?",
    "What blood pressure should prompt pharmacotherapy in women?",
    "When is tilt-table testing reasonable in patients with suspected syncope?",
    "What is recommended for women with chronic or paroxysmal atrial fibrillation?",
)
READY_LINE = "Workspace is running at"


def prepare(data_dir: Path) -> None:
    """Ingest the sources into a workspace and compute its suggested questions (skipped when already there)."""
    app = open_app(bench_settings(data_dir))
    try:
        if app.catalog.find_workspace(WORKSPACE) is None:
            workspace = app.workspaces.create(WORKSPACE)
            for name in SOURCES:
                report = app.documents.ingest(workspace.id, CORPUS_DIR / name)
                print(f"ingested {name}: {report.status}, {report.chunks} chunks", file=sys.stderr, flush=True)
        app.suggestions.suggest(WORKSPACE, "hybrid")
    finally:
        app.close()


def start_serve(data_dir: Path, port: int, log: IO[bytes]) -> tuple[subprocess.Popen[bytes], float, float]:
    """Start serve; returns the process, when it started and when it printed that it is ready (monotonic)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
    started = time.monotonic()
    process = subprocess.Popen(
        [str(CLI), "--data-dir", str(data_dir), "serve", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=log, env={**environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    for raw in process.stdout:
        log.write(raw)
        if READY_LINE in raw.decode(errors="replace"):
            ready = time.monotonic()
            # The UI writes to serve's output too: keep reading it so a full pipe never blocks the UI.
            threading.Thread(target=shutil.copyfileobj, args=(process.stdout, log), daemon=True).start()
            return process, started, ready
    raise RuntimeError(f"serve exited with {process.wait()} before it was ready")


def ask(page: Any, question: str, answered: int) -> float:
    """Type a question, press Enter; seconds until the answer's chips are on the page."""
    from playwright.sync_api import expect

    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    started = time.monotonic()
    box.press("Enter")
    expect(page.get_by_role("button", name="[1]", exact=True)).to_have_count(answered + 1, timeout=180_000)
    return time.monotonic() - started


def one_run(browser: Any, data_dir: Path, log: IO[bytes]) -> dict[str, Any]:
    """Serve, open the workspace's chat, ask every question; the timings of this run."""
    from playwright.sync_api import expect


    port = free_port()
    process, started, ready = start_serve(data_dir, port, log)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/")
        page.locator("[class*='st-key-workspaces-open-'] button").first.click()
        expect(page.get_by_text("Now working in").first).to_be_visible(timeout=60_000)
        page.get_by_role("link", name="Chat").click()
        expect(page.get_by_test_id("stChatInputTextArea")).to_be_visible(timeout=60_000)
        chat_open = time.monotonic()
        page.wait_for_timeout(500)
        before = page.get_by_role("button", name="[1]", exact=True).count()  # answers of earlier runs' chat
        latencies = [ask(page, question, before + index) for index, question in enumerate(QUESTIONS)]
        page.close()
    finally:
        stop(process)
    warm = latencies[1:]
    return {
        "serve_ready_s": round(ready - started, 2), "chat_open_after_ready_s": round(chat_open - ready, 2),
        "first_answer_s": round(latencies[0], 2), "first_answer_after_ready_s": round(chat_open - ready + latencies[0], 2),
        "warm_answers_s": [round(x, 2) for x in warm], "warm_median_s": round(percentile(warm, 50), 2),
        "warm_p95_s": round(percentile(warm, 95), 2), "first_over_warm_p95": round(latencies[0] / percentile(warm, 95), 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and merge its results into the results file under the label."""
    parser = argparse.ArgumentParser(prog="python -m bench.first_answer", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--label", default="current")
    parser.add_argument("--data-dir", type=Path, help="a data dir to prepare once and reuse (default: a new one)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-first-answer-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        prepare(data_dir)
        runs = []
        with sync_playwright() as playwright, open(Path(tmp) / "serve.log", "ab") as log:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
            try:
                for index in range(args.runs):
                    runs.append(one_run(browser, data_dir, log))
                    print(f"run {index + 1}: {runs[-1]}", file=sys.stderr, flush=True)
            finally:
                browser.close()
    existing = json.loads(args.out.read_text()) if args.out.exists() else {}
    existing[args.label] = {
        "date": now_iso(), "git": git_info(), "load_average": [round(x, 2) for x in os.getloadavg()],
        "questions": list(QUESTIONS), "runs": runs,
        "met": all(run["first_answer_s"] <= 2 * run["warm_p95_s"] for run in runs),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(existing, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(existing[args.label], indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
