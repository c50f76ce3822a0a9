"""Retrieval benchmark: guideline dev set, PubMedQA, search latency and ingestion cost in one run.

Run from the repository root:

    .venv/bin/python -m bench.retrieval                 # everything (first run ~20 min, later ~2 min)
    .venv/bin/python -m bench.retrieval --only-dev      # guideline dev set only (seconds with a cached ingest)
    .venv/bin/python -m bench.retrieval --only-dev --misses   # + the questions hybrid misses at @5
    .venv/bin/python -m bench.retrieval --only-dev --questions all   # the enlarged dev set, per file and kind
    .venv/bin/python -m bench.retrieval --only-dev --catalog-url postgresql://...   # keyword search on PostgreSQL

The parts live in bench/retrieval_dev.py (1), bench/retrieval_pubmedqa.py (2), bench/retrieval_latency.py (3, 4)
and bench/retrieval_report.py (tables). Ingested workspaces live in `bench/.cache/<kind>-<fingerprint>/` (one
data dir each; bench/common/workspaces.py). The fingerprint (bench/common/fingerprint.py) hashes the directories
of ingestion code, the ingest and embedding settings, library versions and the input files. A re-run with
unchanged ingestion reuses the data dir; `--fresh` rebuilds it. This is a measurement tool: it monkeypatches the
embedder and pipeline stages with timers while it ingests (nothing is changed in behaviour).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    CACHE_DIR,
    REPO,
    RESULTS_DIR,
    CachedWorkspace,
    MemoizedQueries,
    all_inputs,
    compact_json,
    dev_inputs,
    git_info,
    log,
    machine_info,
    now_iso,
    warm,
)
from bench.common.app import keywords_on_postgres, load_app_modules
from bench.common.fingerprint import embedding_fingerprint
from bench.common.questions import add_questions_option, results_name, select_questions
from bench.retrieval_dev import METHODS, build_dev, eval_dev, print_misses
from bench.retrieval_latency import build_all, eval_latency, fresh_ingest_timing, latency_with_one_thread
from bench.retrieval_pubmedqa import build_pubmedqa, eval_pubmedqa, pubmedqa_inputs
from bench.retrieval_report import markdown_report, print_report

TARGETS = {
    "dev hybrid page-hit@5": (">=", 0.95),
    "dev hybrid page-hit@1": (">=", 0.75),
    "dev hybrid zh page-hit@5": (">=", 0.875),
    "pubmedqa hybrid R@1": (">=", 0.98),
    "search p95 ms (hybrid, 13 PDFs)": ("<", 50.0),
    "ingestion wall / pure embedding": ("<=", 1.25),
}


def check_targets(results: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, float | None] = {}
    dev = results.get("dev", {}).get("metrics", {}).get("hybrid")
    if dev:
        values["dev hybrid page-hit@5"] = dev["all"]["hit@5"]
        values["dev hybrid page-hit@1"] = dev["all"]["hit@1"]
        values["dev hybrid zh page-hit@5"] = dev["zh"].get("hit@5")
    pub = results.get("pubmedqa", {}).get("metrics", {}).get("hybrid")
    if pub:
        values["pubmedqa hybrid R@1"] = pub["recall@1"]
    if results.get("latency"):
        values["search p95 ms (hybrid, 13 PDFs)"] = results["latency"]["p95_ms"]
    ingestion = results.get("ingestion") or {}
    if ingestion.get("wall_over_pure") is not None:
        values["ingestion wall / pure embedding"] = ingestion["wall_over_pure"]
    out = {}
    for name, (op, target) in TARGETS.items():
        value = values.get(name)
        ok = None if value is None else {">=": value >= target, "<": value < target, "<=": value <= target}[op]
        out[name] = {"value": value, "target": f"{op} {target}", "met": ok}
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", action="store_true", help="re-ingest every workspace this run uses")
    parser.add_argument(
        "--fresh-ingest-timing",
        action="store_true",
        help="time ingestion of the 13 PDFs into a new temporary data dir (empty embedding cache)",
    )
    parser.add_argument("--skip-pubmedqa", action="store_true", help="skip the PubMedQA benchmark")
    parser.add_argument("--skip-latency", action="store_true", help="skip the 13-PDF latency benchmark")
    parser.add_argument("--only-dev", action="store_true", help="only the guideline dev set (fast iteration)")
    parser.add_argument("--misses", action="store_true", help="print the dev questions missed (with snippets)")
    parser.add_argument("--misses-method", choices=sorted(METHODS), default="hybrid")
    parser.add_argument("--misses-k", type=int, default=5)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results JSON (default bench/results/retrieval.json for a full run, "
        "bench/results/retrieval.partial.json when something is skipped; retrieval-<set>[.partial].json "
        "for a --questions set other than first50)",
    )
    add_questions_option(parser)
    parser.add_argument(
        "--catalog-url",
        default="",
        help="a postgresql:// URL: keyword search (and the chunk reads of ranking) run on a PostgreSQL catalog "
        "holding a copy of the dev workspace (only with --only-dev; workspaces of the same ids there are replaced)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        nargs="?",
        const=RESULTS_DIR / "retrieval.json",
        default=None,
        metavar="RESULTS_JSON",
        help="print the README tables from a results JSON and exit (no run)",
    )
    args = parser.parse_args(argv)
    if args.only_dev:
        args.skip_pubmedqa = args.skip_latency = True
    if args.catalog_url and not args.only_dev:
        parser.error("--catalog-url needs --only-dev (the other parts run on the SQLite catalog)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.chdir(REPO)
    if args.markdown:
        print(markdown_report(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return 0
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    run_started = time.perf_counter()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    sets = select_questions(args.questions)  # latency always runs the first 50 questions (comparable figures)
    questions, latency_questions, groups = sets.questions, sets.latency_questions, sets.groups
    misses_text = ""
    full = not (args.skip_pubmedqa or args.skip_latency)
    results: dict[str, Any] = {
        "timestamp": now_iso(),
        "command": "python -m bench.retrieval " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine_info(),
        "git": git_info(),
    }
    if groups is not None:
        results["question_set"] = args.questions

    # Fingerprint every workspace now, right after the app modules are imported: the code in memory is the
    # code the fingerprints describe, even if someone edits the core while this run is going.
    load_app_modules()

    dev_ws = CachedWorkspace("dev", dev_inputs())
    pub_ws = None if args.skip_pubmedqa else CachedWorkspace("pubmedqa", pubmedqa_inputs())
    all_ws = None if args.skip_latency else CachedWorkspace("all13", all_inputs(), share_embedding_cache=False)
    current = f"embeddings-{embedding_fingerprint()}.sqlite"
    for stale in CACHE_DIR.glob("embeddings-*.sqlite*"):
        if not stale.name.startswith(current):  # also its -wal / -shm files
            stale.unlink(missing_ok=True)
    app = dev_ws.open(build_dev, args.fresh)
    results["catalog"] = "sqlite"
    if args.catalog_url:
        log("[dev] copying the catalog to PostgreSQL")
        keywords_on_postgres(app, args.catalog_url)
        results["catalog"] = "postgresql"
    results["settings"] = app.settings.model_dump(mode="json", exclude={"llm", "storage"})
    results["ingest_fingerprint"] = dev_ws.fingerprint_parts["code"]
    warm(app)
    log("[dev] evaluating")
    with MemoizedQueries(app):
        dev = eval_dev(app, questions, groups)
        results["dev"] = {"workspace": dev_ws.summary(), **dev}
        if args.misses:
            with contextlib.redirect_stdout(io.StringIO()) as buffer:
                print_misses(app, questions, dev, args.misses_method, args.misses_k)
            misses_text = buffer.getvalue()

    if pub_ws is not None:
        app = pub_ws.open(build_pubmedqa, args.fresh)
        warm(app)
        log("[pubmedqa] evaluating")
        with MemoizedQueries(app):
            results["pubmedqa"] = {"workspace": pub_ws.summary(), **eval_pubmedqa(app)}

    ingestion: dict[str, Any] | None = None
    if all_ws is not None:
        app = all_ws.open(build_all, args.fresh)
        log("[latency] measuring")
        results["latency"] = {"workspace": all_ws.summary(), **eval_latency(app, latency_questions)}
        results["latency"]["what_if_torch_threads_1"] = latency_with_one_thread(app, latency_questions)
        log("[dev on all 13 PDFs] evaluating (comparable with the PEERS.md baselines)")
        with MemoizedQueries(app):
            results["dev_all13"] = {"workspace": all_ws.summary(), **eval_dev(app, questions, groups)}
        ingestion = {
            **all_ws.meta["ingest"],
            "source": "cached-workspace build (fresh data dir, empty embedding cache)",
            "measured_this_run": all_ws.built_now,
        }
    if args.fresh_ingest_timing:
        ingestion = {
            **fresh_ingest_timing(),
            "source": "--fresh-ingest-timing (temporary data dir)",
            "measured_this_run": True,
        }
    if ingestion is not None:
        results["ingestion"] = ingestion

    results["targets"] = check_targets(results)
    results["run_s"] = round(time.perf_counter() - run_started, 1)
    results["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out = args.out or RESULTS_DIR / results_name("retrieval", args.questions, ".json" if full else ".partial.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(compact_json(results), encoding="utf-8")
    print_report(results)
    print(misses_text, end="")
    print(f"\nresults: {out.relative_to(REPO) if out.is_relative_to(REPO) else out} ({results['run_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
