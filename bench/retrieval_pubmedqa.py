"""Retrieval on PubMedQA (part 2 of bench.retrieval).

The 1000 abstracts of `pubmedqa_corpus.jsonl`, each written to `<PMID>.txt` and ingested into its own cached
workspace; the 500 dev queries: Recall@1/5/10 and MRR@10 per method, where a hit is a result whose document
is `<gold_id>.txt`, top_k=10.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import EVAL_DIR, BenchApp, CachedWorkspace, ingest_sources, load_jsonl, log
from bench.retrieval_dev import METHODS, TOP_K, document_hit, first_rank, method_search, rank_metrics


def pubmedqa_inputs() -> list[Path]:
    return [EVAL_DIR / "pubmedqa_corpus.jsonl"]


def build_pubmedqa(app: BenchApp) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-pubmedqa-"))
    try:
        sources = []
        for doc in load_jsonl(EVAL_DIR / "pubmedqa_corpus.jsonl"):
            path = folder / f"{doc['id']}.txt"
            path.write_text(doc["text"], encoding="utf-8")
            sources.append((path, path.name))
        return ingest_sources(app, CachedWorkspace.WORKSPACE, sources, "pubmedqa", every=100)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def eval_pubmedqa(app: BenchApp) -> dict[str, Any]:
    queries = load_jsonl(EVAL_DIR / "pubmedqa_dev_queries.jsonl")
    ranks: dict[str, list[int | None]] = {m: [] for m in METHODS}
    per_query: dict[str, list[int | None]] = {}
    started = time.perf_counter()
    for index, q in enumerate(queries, start=1):
        gold = f"{q['gold_id']}.txt"
        row = []
        for method in METHODS:
            hits = method_search(app, q["question"], method, TOP_K)
            rank = first_rank(hits, document_hit(gold))
            ranks[method].append(rank)
            row.append(rank)
        per_query[q["id"]] = row
        if index % 100 == 0:
            log(f"  pubmedqa: {index}/{len(queries)} queries, {time.perf_counter() - started:.0f} s")
    return {
        "queries": len(queries),
        "eval_s": round(time.perf_counter() - started, 2),
        "metrics": {m: rank_metrics(r, (1, 5, 10), "recall") for m, r in ranks.items()},
        "misses_at_1": {m: [qid for qid, row in per_query.items() if row[i] != 1] for i, m in enumerate(METHODS)},
        "ranks_by_query": {"order": list(METHODS), "ranks": per_query},
    }
