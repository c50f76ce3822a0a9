"""Search latency and ingestion cost on all 13 PDFs (parts 3 and 4 of bench.retrieval).

Latency: the 13-PDF workspace, embedder loaded and warmed, hybrid, top_k=10, wall time of `search` (query
embedding included: both embedders' recent-query memos are emptied before every timed search); every one of the
50 first dev questions in 3 passes, p50 and p95 over the per-query medians. Ingestion: the figures recorded
while that workspace was built (fresh data dir, empty embedding cache), or `fresh_ingest_timing`.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import (
    BenchApp,
    CachedWorkspace,
    all_inputs,
    bench_settings,
    forget_recent_queries,
    ingest_sources,
    log,
    open_app,
    percentile,
    query_embedders,
    warm,
)
from bench.retrieval_dev import TOP_K

LATENCY_PASSES = 3


def build_all(app: BenchApp) -> dict[str, Any]:
    return ingest_sources(
        app, CachedWorkspace.WORKSPACE, [(p, p.name) for p in all_inputs()], "all13", measure_pure=True
    )


def eval_latency(app: BenchApp, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Hybrid search latency over the 13-PDF workspace: per-query median of 3 passes, then p50/p95.

    Every pass repeats the same 50 questions, so the embedders' recent-query memos (workspace_app.embedding.embedder;
    the main embedder's and, since the cross-language index, the multilingual one's) are emptied before each timed
    search: the figure includes embedding the query, as a new question would.
    """
    warm(app)
    for q in questions[:5]:
        app.search.search(CachedWorkspace.WORKSPACE, q["question"], top_k=TOP_K)
    samples: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    cleared = False
    for _ in range(LATENCY_PASSES):
        for q in questions:
            forgotten = [forget_recent_queries(embedder) for embedder in query_embedders(app)]  # every one, always
            cleared = all(forgotten)
            started = time.perf_counter()
            result = app.search.search(CachedWorkspace.WORKSPACE, q["question"], top_k=TOP_K)
            samples[q["id"]].append((time.perf_counter() - started) * 1000)
            for stage, ms in result.timings_ms.items():
                stages[q["id"]][stage].append(ms)
    medians = [statistics.median(v) for v in samples.values()]
    embed_p50 = statistics.median(
        statistics.median(per["embed_query"]) for per in stages.values() if "embed_query" in per
    )
    if embed_p50 < 1.0:
        log(f"  !! latency: query embedding took {embed_p50:.2f} ms at p50: it looks cached, the figures understate")
    every = [ms for v in samples.values() for ms in v]
    stage_names = sorted({s for per in stages.values() for s in per})
    stage_p50 = {
        s: round(statistics.median([statistics.median(per[s]) for per in stages.values() if s in per]), 2)
        for s in stage_names
    }
    return {
        "method": "hybrid",
        "top_k": TOP_K,
        "queries": len(medians),
        "passes": LATENCY_PASSES,
        "p50_ms": round(statistics.median(medians), 2),
        "p95_ms": round(percentile(medians, 95), 2),
        "max_ms": round(max(medians), 2),
        "raw_p95_ms_all_samples": round(percentile(every, 95), 2),
        "stage_p50_ms": stage_p50,
        "recent_query_memo_cleared": cleared,
        "per_query_median_ms": {qid: round(statistics.median(v), 2) for qid, v in samples.items()},
    }


def latency_with_one_thread(app: BenchApp, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The same latency run with torch limited to one thread (not what the app does today: a what-if).

    On a small shared machine, two intra-op threads for a single short query stall whenever another process
    takes one of the cores; one thread does not wait for a partner.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        found = eval_latency(app, questions)
    finally:
        torch.set_num_threads(before)
    return {k: found[k] for k in ("p50_ms", "p95_ms", "max_ms", "stage_p50_ms")}


def fresh_ingest_timing() -> dict[str, Any]:
    """Ingest the 13 PDFs into a brand-new temporary data dir (empty embedding cache)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-fresh-ingest-"))
    try:
        app = open_app(bench_settings(folder))
        log(f"[fresh-ingest] ingesting the 13 PDFs into {folder}")
        record = build_all(app)
        app.close()
        return record
    finally:
        shutil.rmtree(folder, ignore_errors=True)
