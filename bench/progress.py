"""Time-left benchmark (issue 29 item 4, issue 28 item 5): at the halfway point of each stage, the time left the
job shows against the time the stage really took from there, on a quiet machine and with a CPU load running.

    .venv/bin/python -m bench.progress                       # quiet, then loaded (~30-40 min on 2 shared cores)
    .venv/bin/python -m bench.progress --conditions loaded --load-procs 3 --patients 50 --keep

Each condition starts a fresh data dir (the embedding cache empty) and
- ingests real corpus PDFs one after the other through the job engine (`documents.jobs.run`, as the worker runs
  them), listening to every progress report: stage, done of total, the stage's time left;
- imports the MIMIC-IV demo (every patient, or `--patients N` of them) through the import job
  (`patient_imports.run`), listening to every step: table, rows read of its total, time left in it and in all.
"loaded" runs `--load-procs` busy-loop processes beside it (the issue measured under load 5 on 2 cores).

A stage's halfway point is its first report with done >= total / 2 (and done < total); its actual time left is
from there to the stage's last report (documents: the next stage's first report). The error is
(shown - actual) / actual; no time shown at the halfway point counts as a miss. For the import, the time left in
all is measured the same way at the halfway point of its rows. The old estimate of documents (job elapsed × share
left / share done, from fixed stage shares) is computed from the same reports against the job's actual time left,
for comparison. Stages of one step (0 then done) have no halfway point and are listed apart; the summaries are given
for every stage and for the stages with at least READABLE_S left at their halfway point. The raw reports are kept
(`reports`, `steps`) so that another window or rule can be replayed on them.

Results: bench/results/progress.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import CORPUS_DIR, DEMO_DIR, RESULTS_DIR, git_info, log, machine_info, now_iso
from bench.common.app import bench_settings, open_app

OUT = RESULTS_DIR / "progress.json"
DOCUMENTS = ("mosca-2011-women-cvd.pdf", "zh-acute-af-ed-2024.pdf", "arnett-2014-guideline-strategies.pdf")
READABLE_S = 2.0
TARGET = 0.30  # issue 29: time-left error within ±30 % at the halfway point of each stage
OWNER = "bench@progress:1:x"
# The old estimate's fixed shares (workspace_app/ingest/pipeline.py before issue 29), for the comparison only.
_OLD_END = {"parsing": 0.2, "chunking": 0.25, "embedding": 0.8, "indexing": 0.85, "cross-language": 0.93,
            "graph": 0.97, "guide": 1.0}


def start_load(processes: int) -> list[subprocess.Popen[bytes]]:
    """Busy loops, one process each, at normal priority."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]


def stop_load(load: list[subprocess.Popen[bytes]]) -> None:
    for process in load:
        process.terminate()
    for process in load:
        process.wait(10)


def ingest_documents(app: Any, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every progress report of each document's run, as (seconds since the job started, stage, done, total, eta)."""
    app.workspaces.create("Progress")
    runs = []
    for name in names:
        report = app.documents.submit("Progress", CORPUS_DIR / name)
        reports: list[tuple[float, str, int, int, float | None, float]] = []
        started = time.monotonic()

        def listen(p: Any, reports: list[Any] = reports, started: float = started) -> None:
            reports.append((time.monotonic() - started, p.stage, p.done, p.total, p.eta_s, p.overall))

        outcome = app.documents.jobs.run(report.document_id, OWNER, None, listen)
        ended = time.monotonic() - started
        log(f"  {name}: {outcome} in {ended:.1f} s, {len(reports)} reports")
        runs.append({"document": name, "outcome": outcome, "seconds": round(ended, 1), "reports": reports})
    return runs


def document_stages(run: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """(each stage's halfway estimate against its actual time left, the stages of one step)."""
    reports, ended = run["reports"], run["seconds"]
    stages: dict[str, list[Any]] = {}
    for report in reports:
        stages.setdefault(report[1], []).append(report)
    order = list(stages)
    measured, single = [], []
    for index, stage in enumerate(order):
        end = stages[order[index + 1]][0][0] if index + 1 < len(order) else ended
        half = next((r for r in stages[stage] if r[3] > 1 and r[3] > r[2] >= r[3] / 2), None)
        if half is None:
            single.append(stage)
            continue
        row = judged(stage, half[0], half[2], half[3], half[4], end - half[0])
        row["old_job_estimate_s"], row["job_actual_left_s"] = old_estimate(half), round(ended - half[0], 1)
        measured.append(row)
    return measured, single


def old_estimate(report: tuple[Any, ...]) -> float | None:
    """What the pipeline showed before issue 29: the job's elapsed time × share left / share done."""
    elapsed, overall = report[0], report[5]
    return round(elapsed * (1 - overall) / overall, 1) if overall > 0.05 else None


def judged(stage: str, at: float, done: int, total: int, shown: float | None, actual: float) -> dict[str, Any]:
    """One halfway point: what was shown, what it really took, the relative error and whether it is within target."""
    error = None if shown is None or actual <= 0 else (shown - actual) / actual
    return {
        "stage": stage, "at_s": round(at, 1), "done": done, "total": total, "shown_left_s": shown,
        "actual_left_s": round(actual, 1), "error": None if error is None else round(error, 3),
        "within_target": error is not None and abs(error) <= TARGET,
    }


def import_demo(app: Any, patients: int | None) -> dict[str, Any]:
    """Every step of one import of the demo through the import job, with when it came."""
    chosen = None
    if patients:
        ids = (DEMO_DIR / "demo_subject_id.csv").read_text(encoding="utf-8").split()[1:]
        chosen = ids[:patients]
    queued = app.patient_imports.submit(DEMO_DIR, chosen)
    steps: list[tuple[float, Any]] = []
    started = time.monotonic()
    outcome = app.patient_imports.run(queued.import_id, OWNER, None, lambda s: steps.append((time.monotonic() - started, s)))
    ended = time.monotonic() - started
    log(f"  import: {outcome} in {ended:.1f} s, {len(steps)} steps")
    return {"outcome": outcome, "seconds": round(ended, 1), "steps": steps}


def import_stages(run: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], dict[str, Any] | None]:
    """(each table's halfway estimate, the tables of one step, the whole import's halfway estimate)."""
    steps, ended = run["steps"], run["seconds"]
    tables: dict[str, list[Any]] = {}
    for at, step in steps:
        tables.setdefault(step.table, []).append((at, step))
    measured, single = [], []
    for table, seen in tables.items():
        end = seen[-1][0]  # the table's last step: read to its end
        half = next(((at, s) for at, s in seen if s.table_rows > s.table_done >= s.table_rows / 2), None)
        if half is None:
            single.append(table)
            continue
        at, step = half
        measured.append(judged(table, at, step.table_done, step.table_rows, step.table_eta_s, end - at))
    whole = next(((at, s) for at, s in steps if s.rows_total > s.rows_done >= s.rows_total / 2), None)
    overall = None
    if whole is not None:
        at, step = whole
        overall = judged("whole import", at, step.rows_done, step.rows_total, step.eta_s, ended - at)
    return measured, single, overall


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many halfway points were within target, and the spread of the errors."""
    errors = sorted(abs(r["error"]) for r in rows if r["error"] is not None)
    return {
        "stages": len(rows), "within_30pct": sum(r["within_target"] for r in rows),
        "no_estimate": sum(r["error"] is None for r in rows),
        "median_abs_error": errors[len(errors) // 2] if errors else None, "max_abs_error": errors[-1] if errors else None,
    }


def run_condition(name: str, load_procs: int, patients: int | None, documents: tuple[str, ...]) -> dict[str, Any]:
    """One condition on a fresh data dir: the documents, then the import."""
    log(f"{name}: {load_procs} load processes")
    load = start_load(load_procs)
    before = [round(x, 2) for x in os.getloadavg()]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-progress-") as folder:
            app = open_app(bench_settings(Path(folder) / "data"))
            try:
                runs = ingest_documents(app, documents)
                imported = import_demo(app, patients)
            finally:
                app.catalog.close()
    finally:
        stop_load(load)
    return judged_condition(name, load_procs, before, runs, imported)


def judged_condition(name: str, load_procs: int, before: list[float], runs: list[dict[str, Any]],
                     imported: dict[str, Any]) -> dict[str, Any]:
    docs = []
    for run in runs:
        stages, single = document_stages(run)
        docs.append({"document": run["document"], "outcome": run["outcome"], "seconds": run["seconds"],
                     "stages": stages, "one_step_stages": single,
                     "reports": [[round(r[0], 2), r[1], r[2], r[3], r[4]] for r in run["reports"]]})
    tables, single_tables, whole = import_stages(imported)
    stage_rows = [s for d in docs for s in d["stages"]]
    old = [judged(s["stage"], s["at_s"], s["done"], s["total"], s["old_job_estimate_s"], s["job_actual_left_s"])
           for s in stage_rows]
    return {
        "condition": name, "load_processes": load_procs, "loadavg_before": before,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "documents": docs,
        "import": {"outcome": imported["outcome"], "seconds": imported["seconds"], "tables": tables,
                   "one_step_tables": single_tables, "whole": whole,
                   "steps": [[round(at, 2), s.table, s.table_done, s.table_rows, s.table_eta_s, s.rows_done,
                              s.rows_total, s.eta_s] for at, s in imported["steps"]]},
        "summary": {
            "document_stages": summary(stage_rows), "import_tables": summary(tables),
            # a stage with under READABLE_S left at its halfway point is over before a user reads the estimate
            "document_stages_readable": summary([r for r in stage_rows if r["actual_left_s"] >= READABLE_S]),
            "import_tables_readable": summary([r for r in tables if r["actual_left_s"] >= READABLE_S]),
            "import_whole": whole, "old_document_estimate_vs_job_left": summary(old),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conditions", nargs="+", default=["quiet", "loaded"], choices=["quiet", "loaded"])
    parser.add_argument("--load-procs", type=int, default=3, help="busy-loop processes of the loaded condition")
    parser.add_argument("--patients", type=int, default=None, help="import only the first N demo patients")
    parser.add_argument("--documents", nargs="+", default=list(DOCUMENTS), help="corpus PDFs to ingest")
    parser.add_argument("--keep", action="store_true",
                        help="keep the results file's other conditions (run quiet and loaded one at a time)")
    args = parser.parse_args(argv)
    results = {
        "benchmark": "progress", "run_at": now_iso(), **git_info(), "machine": machine_info(),
        "target": f"time-left error within ±{TARGET:.0%} at the halfway point of each stage",
        "command": "python -m bench.progress " + " ".join(argv if argv is not None else sys.argv[1:]),
        "conditions": [],
    }
    earlier = json.loads(OUT.read_text(encoding="utf-8"))["conditions"] if args.keep and OUT.is_file() else []
    results["conditions"] = [c for c in earlier if c["condition"] not in args.conditions]
    for condition in args.conditions:
        procs = args.load_procs if condition == "loaded" else 0
        measured = run_condition(condition, procs, args.patients, tuple(args.documents))
        results["conditions"].append({**measured, "run_at": now_iso(), "patients": args.patients or "all"})
        OUT.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for condition in results["conditions"]:
        log(f"{condition['condition']}: {json.dumps(condition['summary'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
