"""bench.answers, warm ask latency: measured after the quality pass, sequentially, one ask at a time.

Every question of the latency set (the first 50 dev questions, whatever `--questions` says) is asked `passes`
times in the chosen mode, after the warm-up ask of bench.answers. The embedder's memo of recent query vectors is
emptied before every ask (a user rarely asks the same question twice). p50 is over all asks, p95 over the
per-question medians (raw p95 recorded too). Hybrid search alone is timed in the same loop, so a slow figure on
a busy machine can be told apart from a slow answer layer; the load average before and after is recorded, and a
run started above `BUSY_LOAD` is reported as taken under load.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from bench.common import BenchApp, CachedWorkspace, percentile

BUSY_LOAD = 1.0  # 1-minute load average (on this 2-CPU machine) above which latency is "taken under load"


def latency(
    app: BenchApp, questions: list[dict[str, Any]], passes: int, mode: str, sentence_cache: bool = True
) -> dict[str, Any]:
    """Ask every question `passes` times; p50 over all asks, p95 over per-question medians.

    With `sentence_cache=False` the evidence sentences are embedded afresh on every ask (the worst case).
    """
    answers, embedder = app.answers, app.embedder
    load_before = [round(x, 2) for x in os.getloadavg()]
    saved_cache = embedder._cache
    if not sentence_cache:
        embedder._cache = None
    per_question: dict[str, list[float]] = {q["id"]: [] for q in questions}
    search_only: dict[str, list[float]] = {q["id"]: [] for q in questions}
    cpu: dict[str, list[float]] = {q["id"]: [] for q in questions}  # process CPU time of this process
    stages: dict[str, list[float]] = {}
    try:
        for _ in range(passes):
            for q in questions:
                # Hybrid search alone, interleaved: on a shared machine it shows what the answer layer adds.
                embedder._recent_queries.clear()
                started = time.perf_counter()
                app.search.search(CachedWorkspace.WORKSPACE, q["question"], answers.evidence.blocks)
                search_only[q["id"]].append((time.perf_counter() - started) * 1000)
                embedder._recent_queries.clear()
                started, cpu_started = time.perf_counter(), time.process_time()
                answer = answers.ask(CachedWorkspace.WORKSPACE, q["question"], mode=mode)
                per_question[q["id"]].append((time.perf_counter() - started) * 1000)
                cpu[q["id"]].append((time.process_time() - cpu_started) * 1000)
                for stage, ms in answer.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
    finally:
        embedder._cache = saved_cache
    return {
        "mode": mode, **summary(per_question, questions), "loadavg_before": load_before,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()], "under_load": load_before[0] > BUSY_LOAD,
        "stages p50/p95 ms": {k: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)] for k, v in stages.items()},
        "cpu ms per ask": _p50_p95(cpu),
        "search only": _p50_p95(search_only),
    }


def summary(per_question: dict[str, list[float]], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Passes, asks, p50, p95 of per-question medians, raw p95, max, and p50/p95 per language."""
    every = [ms for values in per_question.values() for ms in values]
    medians = [statistics.median(values) for values in per_question.values()]
    by_lang = {}
    for lang in ("en", "zh"):
        chosen = [statistics.median(per_question[q["id"]]) for q in questions if q["lang"] == lang]
        by_lang[lang] = {"p50": round(percentile(chosen, 50), 1), "p95": round(percentile(chosen, 95), 1)}
    return {
        "passes": len(every) // max(1, len(per_question)), "asks": len(every), "p50": round(percentile(every, 50), 1),
        "p95 of per-question medians": round(percentile(medians, 95), 1), "p95 raw": round(percentile(every, 95), 1),
        "max": round(max(every), 1), "by_language": by_lang,
    }


def _p50_p95(per_question: dict[str, list[float]]) -> dict[str, float]:
    return {
        "p50": round(percentile([ms for v in per_question.values() for ms in v], 50), 1),
        "p95 of per-question medians": round(percentile([statistics.median(v) for v in per_question.values()], 95), 1),
    }
