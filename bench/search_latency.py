"""Search latency of this checkout against another one, on the same 13-PDF workspace and the same machine load.

    .venv/bin/python -m bench.search_latency --build                  # ingest the 13 PDFs into --data-dir once
    .venv/bin/python -m bench.search_latency --baseline /tmp/base     # before/after, alternating, 3 rounds

A shared 2-core machine's load swings within minutes, so one run of each side says little. Each round runs
`bench.retrieval_latency.eval_latency` (50 dev questions x 3 passes, query-embedding memos emptied before every
search) once for each side in its own process, the order alternating between rounds; a side's figures are the
median over rounds of its p50 and p95, and every round is recorded with the load average around it. The
baseline is a plain copy of another commit's tree (`git archive COMMIT | tar -x -C DIR`): its `workspace_app/`
(with a top-level `storage/` before it moved inside) runs, measured by this checkout's bench code. Then both retrievers rank every question of
`--identity-questions` in this process (`same_results`): are their top-10 chunk ids and ranks identical?
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


def measure(data_dir: Path) -> dict[str, Any]:
    """Latency of the code on `sys.path` over the workspace in `data_dir`."""
    from bench.common import bench_settings, open_app
    from bench.retrieval_latency import eval_latency

    app = open_app(bench_settings(data_dir))
    loads = [os.getloadavg()[0]]
    latency = eval_latency(app, select_questions("first50").latency_questions)
    loads.append(os.getloadavg()[0])
    app.close()
    return {"latency": latency, "loadavg_1min_before_after": loads}


def same_results(data_dir: Path, baseline: Path, questions: str) -> dict[str, Any]:
    """The baseline's retriever (`workspace_app/retrieval/hybrid.py` of its tree, query vectors computed its way: the
    model's own threads) and this checkout's, on the same stores in this process, for every question: are the
    top-10 chunk ids and per-method ranks the same? One process, because Chroma's HNSW answers the same vector with
    slightly different neighbours in different processes (seen with the baseline against itself), which would
    blur the comparison."""
    import importlib.util

    import numpy as np

    from bench.common import bench_settings, open_app

    spec = importlib.util.spec_from_file_location("baseline_hybrid", baseline / "workspace_app/retrieval/hybrid.py")
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["baseline_hybrid"] = old  # dataclasses look their module up
    spec.loader.exec_module(old)

    class ModelThreadsQuery:
        """The baseline's `embed_query`: one `encode` call with the model's own threads (no memo)."""

        def __init__(self, embedder: Any) -> None:
            self.embedder = embedder

        def embed_query(self, text: str) -> Any:
            key = self.embedder._settings.query_prefix + text
            vector = self.embedder.model.encode([key], normalize_embeddings=True, convert_to_numpy=True,
                                                show_progress_bar=False)[0]
            return np.asarray(vector, dtype=np.float32)

    app = open_app(bench_settings(data_dir))
    new = app.search._retriever
    xl = new._crosslingual
    before = old.HybridRetriever(
        ModelThreadsQuery(new._embedder), new._vectors, new._chunks, new._settings, new._reranker, new.translator,
        old.CrossLanguageIndex(ModelThreadsQuery(xl.embedder), xl.vectors) if xl else None,
    )
    workspace = app.catalog.find_workspace(CachedWorkspace.WORKSPACE).id

    def ranked(retriever: Any, question: str) -> list[tuple[str, float, dict[str, int | None]]]:
        return [(x.chunk.id, x.score, x.ranks) for x in retriever.search(workspace, question, IDENTITY_TOP_K, None)[0]]

    rows = select_questions(questions).questions
    differing, gaps, exact = [], [0.0], 0
    for row in rows:
        a, b = ranked(before, row["question"]), ranked(new, row["question"])
        exact += a == b
        if [(x[0], x[2]) for x in a] != [(x[0], x[2]) for x in b]:
            differing.append(row["id"])
        else:
            gaps += [abs(x[1] - y[1]) for x, y in zip(a, b, strict=True)]
    app.close()
    return {"questions": len(rows), "same_top10_ids_and_ranks": len(rows) - len(differing), "bit_identical": exact,
            "max_score_difference": max(gaps), "differing": differing}


def code_tree(baseline: Path, folder: Path) -> Path:
    """A folder whose packages are the baseline's, but for `bench` (this checkout's, which does the measuring)."""
    for entry in baseline.iterdir():
        if entry.name != "bench":
            (folder / entry.name).symlink_to(entry.resolve())
    (folder / "bench").symlink_to(REPO / "bench")
    return folder


def run_side(tree: Path, data_dir: Path) -> dict[str, Any]:
    """One measurement in a fresh process with `tree` first on its path."""
    command = [sys.executable, "-m", "bench.search_latency", "--child", "--data-dir", str(data_dir)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout))


def compare(baseline: Path, data_dir: Path, rounds: int) -> dict[str, Any]:
    """Alternate baseline and current for `rounds` rounds; the per-round figures and their medians."""
    sides: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as folder:
        trees = {"baseline": code_tree(baseline, Path(folder)), "current": REPO}
        for index in range(rounds):
            order = ("baseline", "current") if index % 2 == 0 else ("current", "baseline")
            for side in order:
                log(f"[search-latency] round {index + 1}/{rounds}: {side}")
                found = run_side(trees[side], data_dir)
                sides[side].append(_round_record(found))
                log(f"  p50 {found['latency']['p50_ms']} ms, p95 {found['latency']['p95_ms']} ms, "
                    f"load {found['loadavg_1min_before_after']}")
    return {side: _summary(records) for side, records in sides.items()}


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
    parser.add_argument("--rounds", type=int, default=3, help="rounds of baseline + current (default 3; 0: only the results check)")
    parser.add_argument("--identity-questions", default="all+xling", help="question set ranked by both sides")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "search-latency.json", help="results file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build:
        build(args.data_dir)
        return 0
    if args.child:
        print(json.dumps(measure(args.data_dir)))
        return 0
    if args.baseline is None:
        parser.error("--baseline is required (or --build)")
    started = machine_info()
    results = compare(args.baseline, args.data_dir, args.rounds) if args.rounds else {}
    log("[search-latency] same results? (both retrievers in this process)")
    results["identical_results"] = same_results(args.data_dir, args.baseline, args.identity_questions)
    results = {
        "measured_at": now_iso(), "command": " ".join(["python -m bench.search_latency", *(argv or sys.argv[1:])]),
        "machine": started, "loadavg_at_end": [round(x, 2) for x in os.getloadavg()], **results,
    }
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    for side in ("baseline", "current") if args.rounds else ():
        print(f"{side}: p50 {results[side]['p50_ms_median_of_rounds']} ms, p95 {results[side]['p95_ms_median_of_rounds']} ms")
    print(f"identical results: {results['identical_results']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
