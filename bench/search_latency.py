"""Search latency of this checkout against another one, on the same 13-PDF workspace and the same machine load.

    .venv/bin/python -m bench.search_latency --build                  # ingest the 13 PDFs into --data-dir once
    .venv/bin/python -m bench.search_latency --baseline /tmp/base     # before/after, alternating, 3 rounds

A shared 2-core machine's load swings within minutes, so one run of each side says little. Each round runs
`bench.retrieval_latency.eval_latency` (50 dev questions x 3 passes, query-embedding memos emptied before every
search) once for each side in its own process, the order alternating between rounds; a side's figures are the
median over rounds of its p50 and p95, and every round is recorded with the load average around it. The
baseline is a plain copy of another commit's tree (`git archive COMMIT | tar -x -C DIR`): its `workspace_app/`
and `storage/` run, measured by this checkout's bench code. Both sides also rank every question of
`--identity-questions` once: the results file says whether their top-10 chunk ids and scores are identical.
The data dir is a plain ingested workspace outside the fingerprinted caches (`bench/.cache/latency13` by
default), so no code change here ever re-ingests it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import CACHE_DIR, REPO, RESULTS_DIR, CachedWorkspace, all_inputs, log, machine_info, now_iso
from bench.common.questions import select_questions

DEFAULT_DATA_DIR = CACHE_DIR / "latency13"
IDENTITY_TOP_K = 10


def measure(data_dir: Path, identity_questions: str) -> dict[str, Any]:
    """Latency of the code on `sys.path` over the workspace in `data_dir`, and its top-10 for every question."""
    from bench.common import bench_settings, open_app
    from bench.retrieval_latency import eval_latency

    app = open_app(bench_settings(data_dir))
    loads = [os.getloadavg()[0]]
    latency = eval_latency(app, select_questions("first50").latency_questions)
    loads.append(os.getloadavg()[0])
    ranked = {}
    for q in select_questions(identity_questions).questions:
        result = app.search.search(CachedWorkspace.WORKSPACE, q["question"], top_k=IDENTITY_TOP_K)
        ranked[q["id"]] = [[hit.chunk.id, hit.score] for hit in result.hits]
    app.close()
    return {"latency": latency, "loadavg_1min_before_after": loads, "ranked": ranked}


def code_tree(baseline: Path, folder: Path) -> Path:
    """A folder whose packages are the baseline's, but for `bench` (this checkout's, which does the measuring)."""
    for entry in baseline.iterdir():
        if entry.name != "bench":
            (folder / entry.name).symlink_to(entry.resolve())
    (folder / "bench").symlink_to(REPO / "bench")
    return folder


def run_side(tree: Path, data_dir: Path, identity_questions: str) -> dict[str, Any]:
    """One measurement in a fresh process with `tree` first on its path."""
    command = [sys.executable, "-m", "bench.search_latency", "--child", "--data-dir", str(data_dir),
               "--identity-questions", identity_questions]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout))


def compare(baseline: Path, data_dir: Path, rounds: int, identity_questions: str) -> dict[str, Any]:
    """Alternate baseline and current for `rounds` rounds; the per-round figures and their medians."""
    sides: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
    ranked: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as folder:
        trees = {"baseline": code_tree(baseline, Path(folder)), "current": REPO}
        for index in range(rounds):
            order = ("baseline", "current") if index % 2 == 0 else ("current", "baseline")
            for side in order:
                log(f"[search-latency] round {index + 1}/{rounds}: {side}")
                found = run_side(trees[side], data_dir, identity_questions)
                ranked[side] = found.pop("ranked")
                sides[side].append(_round_record(found))
                log(f"  p50 {found['latency']['p50_ms']} ms, p95 {found['latency']['p95_ms']} ms, "
                    f"load {found['loadavg_1min_before_after']}")
    return {side: _summary(records) for side, records in sides.items()} | {"identical_results": _identity(ranked)}


def _round_record(found: dict[str, Any]) -> dict[str, Any]:
    latency = found["latency"]
    keep = ("p50_ms", "p95_ms", "max_ms", "raw_p95_ms_all_samples", "stage_p50_ms")
    return {**{k: latency[k] for k in keep}, "loadavg_1min_before_after": found["loadavg_1min_before_after"]}


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "p50_ms_median_of_rounds": round(statistics.median(r["p50_ms"] for r in records), 2),
        "p95_ms_median_of_rounds": round(statistics.median(r["p95_ms"] for r in records), 2),
        "rounds": records,
    }


def _identity(ranked: dict[str, dict[str, list[list[Any]]]]) -> dict[str, Any]:
    """Whether both sides returned the same chunks in the same order (and how far apart their scores are)."""
    before, after = ranked["baseline"], ranked["current"]
    same_ids = [qid for qid in before if [c for c, _ in before[qid]] == [c for c, _ in after.get(qid, [])]]
    gaps = [abs(a[1] - b[1]) for qid in same_ids for a, b in zip(before[qid], after[qid], strict=True)]
    return {
        "questions": len(before),
        "same_top10_ids_in_order": len(same_ids),
        "differing": sorted(set(before) - set(same_ids)),
        "max_score_difference": max(gaps, default=0.0),
    }


def build(data_dir: Path) -> None:
    """Ingest the 13 corpus PDFs into `data_dir` (once; ~15-40 min on 2 busy cores)."""
    from bench.common import bench_settings, ingest_sources, open_app

    app = open_app(bench_settings(data_dir))
    record = ingest_sources(app, CachedWorkspace.WORKSPACE, [(p, p.name) for p in all_inputs()], "latency13")
    (data_dir / "bench-meta.json").write_text(json.dumps({"ingest": record}, indent=2))
    app.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="the ingested 13-PDF data dir")
    parser.add_argument("--build", action="store_true", help="ingest the 13 PDFs into --data-dir and exit")
    parser.add_argument("--baseline", type=Path, help="a copy of the tree to compare against (git archive)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of baseline + current (default 3)")
    parser.add_argument("--identity-questions", default="all+xling", help="question set ranked by both sides")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "search-latency.json", help="results file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build:
        build(args.data_dir)
        return 0
    if args.child:
        print(json.dumps(measure(args.data_dir, args.identity_questions)))
        return 0
    if args.baseline is None:
        parser.error("--baseline is required (or --build)")
    started = machine_info()
    results = compare(args.baseline, args.data_dir, args.rounds, args.identity_questions)
    results = {
        "measured_at": now_iso(), "command": " ".join(["python -m bench.search_latency", *(argv or sys.argv[1:])]),
        "machine": started, "loadavg_at_end": [round(x, 2) for x in os.getloadavg()], **results,
    }
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    for side in ("baseline", "current"):
        print(f"{side}: p50 {results[side]['p50_ms_median_of_rounds']} ms, p95 {results[side]['p95_ms_median_of_rounds']} ms")
    print(f"identical results: {results['identical_results']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
