"""Answer benchmark: the offline extractive answerer on the guideline dev questions (issue 14, deliverable 7).

Run from the repository root:

    .venv/bin/python -m bench.answers              # all 166 dev rows, mode hybrid -> bench/results/answers.json
    .venv/bin/python -m bench.answers --details    # + one line per question, and every flagged quote
    .venv/bin/python -m bench.answers --mode naive --questions first50   # -> answers-first50.json
    .venv/bin/python -m bench.answers --calibrate  # + the refusal threshold sweep per language

The workspace holds exactly the 5 dev PDFs (the unanswerable questions are only unanswerable there). It is
ingested once into `bench/.cache/answers-<fingerprint>/` (the fingerprint and cache helpers of bench/common/)
and reused while ingestion is unchanged. Every question is asked once with `ask(..., mode=--mode)` (default
hybrid); the figures (bench/answers_metrics.py) are reported for the tuning part, the held-back part (id number
divisible by 3, `bench.common.questions.is_held_back`) and all rows, each per language, per file and per kind
(plus the `hard` rows):
- first-citation page accuracy: the first citation's pages contain a gold page (a refusal counts as a miss);
- any-citation page accuracy: some citation's pages contain a gold page;
- refusal recall on the unanswerable questions, false-refusal rate on the answerable ones;
- fully supported: share of answers whose every sentence carries a verified citation;
- cross-document rows: a gold page of every document cited;
- recommendation rows: the gold answer's class and level stated in the answer text, by the first citation's
  class / level, or either (bench/common/grading.py);
- quote quality over all answers: fragments, reference entries, figure/table titles, abbreviation legends, the
  source's reference markers in the answer text, dropped glyphs (bench/common/quotes.py);
- warm ask latency after the quality pass (bench/answers_latency.py), on the first 50 questions;
- the targets of issue 14, each on tuning / held-back / all.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.answers_latency import latency
from bench.answers_metrics import all_metrics, check_targets, metrics
from bench.answers_report import print_flagged, print_report
from bench.answers_rows import detail_line, evaluate, every_document_cited, fully_supported, on_gold_page
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
)
from bench.common.questions import add_questions_option, is_held_back, load_questions, results_name

KIND = "answers"
DEFAULT_QUESTIONS = "all+xling"
DEFAULT_MODE = "hybrid"
MODES = ("naive", "local", "global", "hybrid")  # workspace_app.retrieval.modes.MODES (not imported: no torch here)
# bench.graph imports these from here.
__all__ = ["build", "every_document_cited", "fully_supported", "metrics", "on_gold_page"]


def build(app: BenchApp) -> dict[str, Any]:
    """Ingest the 5 dev PDFs into the bench workspace."""
    return ingest_sources(app, CachedWorkspace.WORKSPACE, [(p, p.name) for p in dev_inputs()], KIND)


def calibrate(answers: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Refusal sweep: for each language, recall and false refusals if the answerability threshold were t."""
    scores = []
    for q in questions:
        found = answers.explain(CachedWorkspace.WORKSPACE, q["question"]).features
        scores.append({"id": q["id"], "lang": q["lang"], "answerable": q["kind"] != "unanswerable", **found})
    sweep: dict[str, list[dict[str, float]]] = {}
    for lang in ("en", "zh"):
        rows = [s for s in scores if s["lang"] == lang]
        sweep[lang] = []
        for step in range(5, 96, 5):
            t = step / 100
            unanswerable = [r for r in rows if not r["answerable"]]
            answerable = [r for r in rows if r["answerable"]]
            sweep[lang].append({
                "threshold": t,
                "refusal recall": round(sum(r.get("answerable", 0) < t for r in unanswerable) / max(1, len(unanswerable)), 3),
                "false-refusal rate": round(sum(r.get("answerable", 0) < t for r in answerable) / max(1, len(answerable)), 3),
            })
    return {"scores": scores, "sweep": sweep}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.answers", description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="ingest the dev PDFs again")
    parser.add_argument("--mode", choices=MODES, default=DEFAULT_MODE, help=f"query mode of ask (default {DEFAULT_MODE})")
    parser.add_argument("--passes", type=int, default=3, help="latency passes over the first 50 questions (default 3)")
    parser.add_argument("--skip-latency", action="store_true", help="quality figures only (results go to *.partial.json)")
    parser.add_argument("--calibrate", action="store_true", help="print the refusal threshold sweep")
    parser.add_argument("--details", action="store_true", help="print one line per question and every flagged quote")
    parser.add_argument("--out", help="results file (default bench/results/answers.json for --questions all+xling)")
    add_questions_option(parser, DEFAULT_QUESTIONS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write bench/results/answers.json (answers-<set>.json for another question set)."""
    args = parse_args(argv)
    started = time.perf_counter()
    questions = load_questions(args.questions)
    cached = CachedWorkspace(KIND, dev_inputs())
    app = cached.open(build, args.fresh)
    answers = app.answers  # offline: the extractive answerer is what is measured, whatever the environment says
    answers.ask(CachedWorkspace.WORKSPACE, "warm up: what is syncope?", mode=args.mode)
    log(f"[answers] asking {len(questions)} questions in mode {args.mode}")
    rows = evaluate(answers, questions, args.mode, args.questions, app.catalog)
    results: dict[str, Any] = {
        "timestamp": now_iso(), "command": "python -m bench.answers " + " ".join(argv or sys.argv[1:]),
        "mode": args.mode, "question_set": args.questions,
        "split_rule": f"held back = id number divisible by 3 ({sum(is_held_back(q['id']) for q in questions)} of "
        f"{len(questions)} rows; bench.common.questions.is_held_back); tuning = the rest",
        "machine": machine_info(), "git": git_info(), "workspace": cached.summary(), **all_metrics(rows),
    }
    if not args.skip_latency:  # after the quality pass, one ask at a time
        log(f"[answers] latency: {args.passes} passes over the first 50 questions, then 1 without the sentence cache")
        first50 = load_questions("first50")
        results["latency"] = latency(app, first50, args.passes, args.mode)
        results["latency_without_sentence_cache"] = latency(app, first50, 1, args.mode, sentence_cache=False)
    results["targets"] = check_targets(rows, results.get("latency"))
    results.update({"weights": answers.extractive.weights.__dict__, "details": rows})
    if args.calibrate:
        results["calibration"] = calibrate(answers, questions)
        for lang, sweep in results["calibration"]["sweep"].items():
            print(f"\n{lang}: threshold -> refusal recall / false refusals")
            print("  ".join(f"{s['threshold']:.2f}:{s['refusal recall']:.2f}/{s['false-refusal rate']:.2f}" for s in sweep))
    if args.details:
        print("\n".join(detail_line(r) for r in rows))
        print_flagged(rows)
    results["run_s"] = round(time.perf_counter() - started, 1)
    suffix = ".partial.json" if args.skip_latency else ".json"
    out = Path(args.out) if args.out else RESULTS_DIR / results_name("answers", args.questions, suffix, DEFAULT_QUESTIONS)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    print_report(results)
    log(f"results written to {out.resolve().relative_to(REPO) if out.resolve().is_relative_to(REPO) else out} "
        f"in {results['run_s']} s")
    return 0 if all(t["met"] for t in results["targets"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
