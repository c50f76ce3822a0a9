"""Answer benchmark: the offline extractive answerer on the guideline dev questions.

Run from the repository root:

    .venv/bin/python -m bench.answers              # metrics, latency, targets -> bench/results/answers.json
    .venv/bin/python -m bench.answers --calibrate  # + the refusal threshold sweep per language
    .venv/bin/python -m bench.answers --details    # + one line per question

The workspace holds exactly the 5 dev PDFs (the unanswerable questions are only unanswerable there). It is
ingested once into `bench/.cache/answers-<fingerprint>/` (the fingerprint and cache helpers of bench/common/)
and reused while ingestion is unchanged. Metrics, per language and overall (and per file and per kind with
`--questions all|xling|all+xling`; latency always asks the first 50 questions):
- first-citation page accuracy: the first citation's pages contain a gold page (a refusal counts as a miss);
- any-citation page accuracy: some citation's pages contain a gold page;
- refusal recall on the unanswerable questions, false-refusal rate on the answerable ones;
- fully supported: share of answers whose every sentence carries a verified citation;
- ask latency (warm embedder): p50 over all asks, p95 over per-question medians of --passes passes;
- cross-document questions (in `all`): also the share whose citations cover a gold page of every document.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench.common import (
    REPO,
    RESULTS_DIR,
    BenchApp,
    CachedWorkspace,
    dev_inputs,
    git_info,
    ingest_sources,
    log,
    machine_info,
    now_iso,
    percentile,
)
from bench.common.questions import (
    add_questions_option,
    gold_pages,
    grouped_metrics,
    on_gold_span,
    results_name,
    select_questions,
)

KIND = "answers"
TARGETS = {
    "first-citation page accuracy": (">=", 0.80),
    "any-citation page accuracy": (">=", 0.90),
    "refusal recall": (">=", 0.80),
    "false-refusal rate": ("<=", 0.10),
    "answers fully supported": (">=", 1.0),
    "ask p95 ms": ("<", 400.0),
}


def build(app: BenchApp) -> dict[str, Any]:
    """Ingest the 5 dev PDFs into the bench workspace."""
    return ingest_sources(app, CachedWorkspace.WORKSPACE, [(p, p.name) for p in dev_inputs()], KIND)


def on_gold_page(citation: Any, row: dict[str, Any]) -> bool:
    """The citation's document is a gold one and its pages contain a gold page of that document."""
    return on_gold_span(citation.document, citation.page_start, citation.page_end, row)


def every_document_cited(citations: Any, row: dict[str, Any]) -> bool:
    """Every gold document of a cross-document question has a citation on one of its gold pages."""
    return all(
        any(on_gold_page(c, {"doc": doc, "pages": pages}) for c in citations)
        for doc, pages in gold_pages(row)
    )


def fully_supported(answer: Any) -> bool:
    """Grounded, and every sentence (paragraph of the extractive answer) carries a citation marker."""
    return bool(answer.grounded) and all(re.search(r"\[\d+\]", part) for part in answer.text.split("\n\n"))


def evaluate(answers: Any, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per question (the first, measured, pass)."""
    rows = []
    for q in questions:
        answer = answers.ask(CachedWorkspace.WORKSPACE, q["question"])
        answerable = q["kind"] != "unanswerable"
        rows.append({
            "id": q["id"], "lang": q["lang"], "kind": q["kind"], "answerable": answerable, "refused": answer.refused,
            "first": bool(answerable and answer.citations and on_gold_page(answer.citations[0], q)),
            "any": bool(answerable and any(on_gold_page(c, q) for c in answer.citations)),
            "supported": None if answer.refused else fully_supported(answer), "confidence": answer.confidence,
            "citations": [[c.document, c.page_start, c.page_end] for c in answer.citations],
            "gold": [q["doc"], q["pages"]], "ms": answer.timings_ms.get("total", 0.0),
            "answer": answer.text[:300],
        })
        if isinstance(q["doc"], list):
            rows[-1]["all_docs"] = every_document_cited(answer.citations, q)
    return rows


def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's metrics over some rows."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if not r["refused"]]

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 4) if whole else None

    result = {
        "questions": len(rows), "answerable": len(answerable), "unanswerable": len(unanswerable),
        "first-citation page accuracy": share(sum(r["first"] for r in answerable), len(answerable)),
        "any-citation page accuracy": share(sum(r["any"] for r in answerable), len(answerable)),
        "refusal recall": share(sum(r["refused"] for r in unanswerable), len(unanswerable)),
        "false-refusal rate": share(sum(r["refused"] for r in answerable), len(answerable)),
        "answers fully supported": share(sum(bool(r["supported"]) for r in answered), len(answered)),
    }
    cross = [r for r in rows if "all_docs" in r]
    if cross:
        result["every document cited (cross-document)"] = share(sum(r["all_docs"] for r in cross), len(cross))
    return result


def latency(app: BenchApp, questions: list[dict[str, Any]], passes: int, sentence_cache: bool = True) -> dict[str, Any]:
    """Ask every question `passes` times; p50 over all asks, p95 over per-question medians.

    The embedder's memory of recent query vectors is cleared before every ask (a user rarely asks the same
    question twice); with `sentence_cache=False` the evidence sentences are embedded afresh on every ask.
    """
    answers, embedder = app.answers, app.embedder
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
                app.search.search(CachedWorkspace.WORKSPACE, q["question"], answers.evidence_blocks)
                search_only[q["id"]].append((time.perf_counter() - started) * 1000)
                embedder._recent_queries.clear()
                started, cpu_started = time.perf_counter(), time.process_time()
                answer = answers.ask(CachedWorkspace.WORKSPACE, q["question"])
                per_question[q["id"]].append((time.perf_counter() - started) * 1000)
                cpu[q["id"]].append((time.process_time() - cpu_started) * 1000)
                for stage, ms in answer.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
    finally:
        embedder._cache = saved_cache
    every = [ms for values in per_question.values() for ms in values]
    medians = [statistics.median(values) for values in per_question.values()]
    by_lang = {}
    for lang in ("en", "zh"):
        chosen = [statistics.median(per_question[q["id"]]) for q in questions if q["lang"] == lang]
        by_lang[lang] = {"p50": round(percentile(chosen, 50), 1), "p95": round(percentile(chosen, 95), 1)}
    return {
        "passes": passes, "asks": len(every), "p50": round(percentile(every, 50), 1),
        "p95 of per-question medians": round(percentile(medians, 95), 1), "p95 raw": round(percentile(every, 95), 1),
        "max": round(max(every), 1), "by_language": by_lang,
        "stages p50/p95 ms": {k: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)] for k, v in stages.items()},
        "cpu ms per ask": {
            "p50": round(percentile([ms for v in cpu.values() for ms in v], 50), 1),
            "p95 of per-question medians": round(percentile([statistics.median(v) for v in cpu.values()], 95), 1),
        },
        "search only": {
            "p50": round(percentile([ms for v in search_only.values() for ms in v], 50), 1),
            "p95 of per-question medians": round(percentile([statistics.median(v) for v in search_only.values()], 95), 1),
        },
    }


def calibrate(answers: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Refusal sweep: for each language, recall and false refusals if the threshold were t."""
    scores = []
    for q in questions:
        found = answers.evidence_scores(CachedWorkspace.WORKSPACE, q["question"])
        scores.append({"id": q["id"], "lang": q["lang"], "answerable": q["kind"] != "unanswerable", **found})
    sweep: dict[str, list[dict[str, float]]] = {}
    for lang in ("en", "zh"):
        rows = [s for s in scores if s["lang"] == lang]
        sweep[lang] = []
        for step in range(30, 66, 1):
            t = step / 100
            unanswerable = [r for r in rows if not r["answerable"]]
            answerable = [r for r in rows if r["answerable"]]
            sweep[lang].append({
                "threshold": t,
                "refusal recall": round(sum(r.get("best", 0) < t for r in unanswerable) / max(1, len(unanswerable)), 3),
                "false-refusal rate": round(sum(r.get("best", 0) < t for r in answerable) / max(1, len(answerable)), 3),
            })
    return {"scores": scores, "sweep": sweep}


def check_targets(results: dict[str, Any]) -> dict[str, Any]:
    """Each target with the measured value (overall) and whether it is met."""
    overall = results["metrics"]["all"]
    measured = {**overall, "ask p95 ms": results["latency"]["p95 of per-question medians"]}
    checked = {}
    for name, (op, target) in TARGETS.items():
        value = measured.get(name)
        ok = value is not None and (value >= target if op == ">=" else value <= target if op == "<=" else value < target)
        checked[name] = {"target": f"{op} {target}", "value": value, "met": ok}
    return checked


def group_lines(results: dict[str, Any]) -> list[str]:
    """Per file and per kind (a question set other than first50): the metrics as a Markdown table."""
    names = ["first-citation page accuracy", "any-citation page accuracy", "refusal recall", "false-refusal rate",
             "answers fully supported", "every document cited (cross-document)"]
    lines = ["| group | questions | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for grouping, label in (("metrics_by_file", "file"), ("metrics_by_kind", "kind")):
        for group, values in results[grouping].items():
            cells = ["–" if values.get(n) is None else f"{values[n]:.3f}" for n in names]
            lines.append(f"| {label}: {group} | {values['questions']} | " + " | ".join(cells) + " |")
    return lines


def print_report(results: dict[str, Any]) -> None:
    """The tables, to stdout."""
    names = ["first-citation page accuracy", "any-citation page accuracy", "refusal recall", "false-refusal rate",
             "answers fully supported"]
    print("\n## Answers (extractive, dev set, workspace of the 5 dev PDFs)\n")
    print("| metric | all | en | zh |\n|---|---|---|---|")
    for name in names:
        values = [results["metrics"][g][name] for g in ("all", "en", "zh")]
        print(f"| {name} | " + " | ".join("–" if v is None else f"{v:.3f}" for v in values) + " |")
    lat = results["latency"]
    print(f"| ask p50 / p95 ms | {lat['p50']} / {lat['p95 of per-question medians']} | "
          f"{lat['by_language']['en']['p50']} / {lat['by_language']['en']['p95']} | "
          f"{lat['by_language']['zh']['p50']} / {lat['by_language']['zh']['p95']} |")
    search = lat["search only"]
    print(f"| hybrid search alone (same loop), p50 / p95 ms | {search['p50']} / {search['p95 of per-question medians']} | | |")
    answer_layer = {k: v for k, v in lat["stages p50/p95 ms"].items() if k not in ("retrieve", "total")}
    print("| answer-layer stages after retrieval, p50 / p95 ms | "
          + ", ".join(f"{k} {v[0]} / {v[1]}" for k, v in answer_layer.items()) + " | | |")
    cold = results["latency_without_sentence_cache"]
    print(f"| ask p50 / p95 ms, evidence sentences embedded afresh (1 pass) | {cold['p50']} / "
          f"{cold['p95 of per-question medians']} | {cold['by_language']['en']['p50']} / "
          f"{cold['by_language']['en']['p95']} | {cold['by_language']['zh']['p50']} / {cold['by_language']['zh']['p95']} |")
    if "metrics_by_file" in results:
        print("\n" + "\n".join(group_lines(results)))
    print(f"\nload average at start: {results['machine']['loadavg_at_start']} on {results['machine']['cpus_usable']} CPUs")
    print("\n| target | value | met |\n|---|---|---|")
    for name, check in results["targets"].items():
        print(f"| {name} {check['target']} | {check['value']} | {'yes' if check['met'] else 'NO'} |")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.answers", description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="ingest the dev PDFs again")
    parser.add_argument("--passes", type=int, default=3, help="latency passes over the questions (default 3)")
    parser.add_argument("--calibrate", action="store_true", help="print the refusal threshold sweep")
    parser.add_argument("--details", action="store_true", help="print one line per question")
    add_questions_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write bench/results/answers.json (answers-<set>.json for another question set)."""
    args = parse_args(argv)
    started = time.perf_counter()
    sets = select_questions(args.questions)  # latency always asks the first 50 questions (comparable figures)
    questions = sets.questions
    cached = CachedWorkspace(KIND, dev_inputs())
    app = cached.open(build, args.fresh)
    answers = app.answers  # offline: the extractive answerer is what is measured, whatever the environment says
    answers.ask(CachedWorkspace.WORKSPACE, "warm up: what is syncope?")
    rows = evaluate(answers, questions)
    results: dict[str, Any] = {
        "timestamp": now_iso(), "command": "python -m bench.answers " + " ".join(argv or sys.argv[1:]),
        "machine": machine_info(), "git": git_info(), "workspace": cached.summary(),
        "metrics": {g: metrics([r for r in rows if g == "all" or r["lang"] == g]) for g in ("all", "en", "zh")},
    }
    if sets.groups is not None:
        results["question_set"] = args.questions
        by_group = grouped_metrics(rows, sets.groups, metrics)
        results["metrics_by_file"], results["metrics_by_kind"] = by_group["by_file"], by_group["by_kind"]
    results.update({
        "latency": latency(app, sets.latency_questions, args.passes),
        "latency_without_sentence_cache": latency(app, sets.latency_questions, 1, sentence_cache=False),
        "weights": answers.extractive.weights.__dict__, "details": rows,
    })
    results["targets"] = check_targets(results)
    if args.calibrate:
        results["calibration"] = calibrate(answers, questions)
        for lang, sweep in results["calibration"]["sweep"].items():
            print(f"\n{lang}: threshold -> refusal recall / false refusals")
            print("  ".join(f"{s['threshold']:.2f}:{s['refusal recall']:.2f}/{s['false-refusal rate']:.2f}" for s in sweep))
    if args.details:
        for r in rows:
            mark = "refused" if r["refused"] else f"first={int(r['first'])} any={int(r['any'])}"
            print(f"{r['id']} {r['lang']} {r['kind'][:6]:6} {mark:16} {r['ms']:7.1f} ms  gold={r['gold']} cited={r['citations'][:3]}")
    results["run_s"] = round(time.perf_counter() - started, 1)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / results_name("answers", args.questions)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print_report(results)
    log(f"results written to {out.relative_to(REPO)} in {results['run_s']} s")
    return 0 if all(check["met"] for check in results["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
