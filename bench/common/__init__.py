"""The small library the benchmarks share, by concern:

- `paths`: where the corpus, the eval files, the cache and the results are; jsonl/json, timestamps, percentiles;
- `run_info`: git commit and machine facts recorded in every results file;
- `app`: `open_app`, the one place that builds the application (everything a benchmark uses of it);
- `fingerprint`: when a cached ingested workspace is still valid;
- `workspaces`: ingesting with timers, and the cached workspaces under bench/.cache;
- `questions`: the dev question sets (`--questions`), gold pages, metrics per file and per kind.
"""

from bench.common.app import BenchApp, bench_settings, open_app, query_embedders
from bench.common.paths import (
    CACHE_DIR,
    CORPUS_DIR,
    DEMO_DIR,
    DEV_DOCS,
    EVAL_DIR,
    REPO,
    RESULTS_DIR,
    all_inputs,
    compact_json,
    dev_inputs,
    load_jsonl,
    log,
    now_iso,
    percentile,
)
from bench.common.run_info import git_info, machine_info
from bench.common.workspaces import (
    CachedWorkspace,
    MemoizedQueries,
    forget_recent_queries,
    ingest_sources,
    measure_corpus,
    warm,
)

__all__ = [
    "CACHE_DIR",
    "CORPUS_DIR",
    "DEMO_DIR",
    "DEV_DOCS",
    "EVAL_DIR",
    "REPO",
    "RESULTS_DIR",
    "BenchApp",
    "CachedWorkspace",
    "MemoizedQueries",
    "all_inputs",
    "bench_settings",
    "compact_json",
    "dev_inputs",
    "forget_recent_queries",
    "git_info",
    "ingest_sources",
    "load_jsonl",
    "log",
    "machine_info",
    "measure_corpus",
    "now_iso",
    "open_app",
    "percentile",
    "query_embedders",
    "warm",
]
