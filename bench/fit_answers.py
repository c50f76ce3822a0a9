"""Fit the answer scoring models (workspace_app/answer/scoring.py) on the large sets' fit part; report the rest.

    .venv/bin/python -m bench.fit_answers                 # collect, fit, write workspace_app/answer/fitted/*.json
    .venv/bin/python -m bench.fit_answers --report-only   # the held-back figures of the shipped models

For each set of bench.large_sets (COVID-QA, CMRC 2018 dev, PubMedQA) and the guideline dev rows (their tuning
part only; bench.common.questions' held-back rule), every question of the fit part is read by
`app.answers.explain`: the pool of scored candidate sentences with their features, and the question's features.
A candidate is positive when it holds a gold answer (its sentence contains one; for sets without answer spans,
its passage is in the gold document on a gold page). A question is positive when it is answerable (its source is
in the workspace). Logistic models are fitted on these rows, each set weighing the same (answerability twice: for
questions whose best candidate is in their own language, and for those whose best candidate is in the other
one, which XQuAD's cross-language rows teach); the held-back part
of every set is then asked with `app.answers.ask` and reported: first citation on a passage holding the gold
answer, refusal recall, false refusals, and the share of confident answers that are right
(bench/results/fit_answers.json).
"""

from __future__ import annotations

import argparse
import json
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import CACHE_DIR, DEV_DOCS, EVAL_DIR, RESULTS_DIR, CachedWorkspace, git_info, load_jsonl, log
from bench.common.questions import is_held_back
from bench.large_sets import SETS, materialise, workspace

FEATURES = CACHE_DIR / "fit-features.json"
TRANSFER = RESULTS_DIR / "fit_answers_transfer.json"  # the leave-one-set-out figures (--leave-one-out)
CROSS_LANGUAGE_SETS = frozenset({"xquad"})  # every question asked in the other language than its source's
# A cross-language set's questions asked in their sources' own language. With `--rank-across` the ranking learns
# from both (a question's source in its own language half of the time); they teach nothing else.
OWN_LANGUAGE_TWINS = {"xquad": "xquad_own"}
RANKING_ONLY_SETS = frozenset(OWN_LANGUAGE_TWINS.values())
MIN_REGIME_ROWS = 10  # a set with fewer rows of a regime does not take part in fitting its model


def norm(text: str) -> str:
    """NFKC, case-folded, without whitespace (gold answers and passages are compared so)."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def gold_passage(row: dict[str, Any], document: str, pages: tuple[int, int], text: str) -> bool:
    """Whether a passage (its document, page span and text) holds the row's gold answer."""
    if row.get("answers"):
        return document == row["doc"] and any(norm(a) in norm(text) for a in row["answers"])
    if document != row.get("doc"):
        return False
    gold = row.get("pages") or []
    return not gold or any(pages[0] <= p <= pages[1] for p in gold)


def positive(row: dict[str, Any], candidate: Any) -> bool:
    """Whether a candidate sentence answers the row (its own words when the row has answer spans)."""
    chunk = candidate.block.chunk
    if row.get("answers"):
        sentence = norm(candidate.span.text)
        return candidate.block.document_name == row["doc"] and any(
            norm(a) in sentence or (len(norm(a)) > 60 and sentence in norm(a)) for a in row["answers"]
        )
    return gold_passage(row, candidate.block.document_name, (chunk.page_start, chunk.page_end), chunk.text)


def dev_rows() -> list[dict[str, Any]]:
    """The guideline dev rows in the eval format (single-document answerable and unanswerable ones)."""
    rows = []
    for name in ("guidelines_dev.jsonl", "guidelines_dev_more.jsonl", "guidelines_dev_xling.jsonl"):
        for r in load_jsonl(EVAL_DIR / name):
            if r["kind"] == "cross_doc":
                continue
            rows.append({
                "id": r["id"], "question": r["question"], "lang": r["lang"], "set": "dev",
                "answerable": r["kind"] != "unanswerable", "doc": r.get("doc") or None, "pages": r.get("pages") or [],
                "split": "held" if is_held_back(r["id"]) else "fit",
            })
    return rows


def set_rows(names: Iterable[str]) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """(name, rows) for every set asked for."""
    for name in names:
        yield name, dev_rows() if name == "dev" else load_jsonl(materialise(name)[1])


def sets(names: Iterable[str]) -> Iterable[tuple[str, Any, list[dict[str, Any]]]]:
    """(name, opened app, rows) for every set asked for."""
    for name, rows in set_rows(names):
        yield name, workspace(name).app, rows


def collect(app: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each question's scored pool as plain data: every candidate's features, whether its sentence holds a gold
    answer and whether its passage does, and what the answerability model reads besides the pool."""
    read = []
    for row in rows:
        selection = app.answers.explain(CachedWorkspace.WORKSPACE, row["question"])
        pool = [c for c in selection.pool if c.features]
        if not pool:
            read.append({"answerable": int(row["answerable"]), "split": row["split"], "pool": []})
            continue
        chunk = lambda c: (c.block.document_name, (c.block.chunk.page_start, c.block.chunk.page_end), c.block.chunk.text)
        read.append({
            "answerable": int(row["answerable"]), "split": row["split"],
            "evidence": selection.features["evidence_coverage"], "unknown": selection.features["unknown_terms"],
            "zh": bool(selection.features["zh"]),
            "pool": [
                [c.features, int(row["answerable"] and positive(row, c)),
                 int(bool(row["answerable"]) and gold_passage(row, *chunk(c)))]
                for c in pool
            ],
        })
    return read


def rescored(model: Any, question: dict[str, Any]) -> list[tuple[float, dict[str, float], int]]:
    """The question's pool under a sentence model, best first: (probability, features, passage right)."""
    return sorted(((model.probability(f), f, right) for f, _, right in question["pool"]), key=lambda x: -x[0])


def answerable_rows(model: Any, questions: list[dict[str, Any]]) -> list[tuple[dict[str, float], int, int]]:
    """(question features, answerable, lead's passage right) under a sentence model, as the answerer reads them."""
    from workspace_app.answer.scoring import question_features

    rows = []
    for q in questions:
        if q["pool"]:
            pool = rescored(model, q)
            features = question_features([(p, f) for p, f, _ in pool], q["evidence"], int(q["unknown"]), q["zh"])
            rows.append((features, q["answerable"], pool[0][2]))
    return rows


def other_language_pool(
    models: Any, question: dict[str, Any]
) -> tuple[list[tuple[float, dict[str, float], int]], dict[str, float]] | None:
    """A question's candidates in the other language than its lead's (best first) and the features the
    other-language model reads of them, when the lead's own model refuses it (None otherwise or without such
    candidates): the answerer's `_other_language`."""
    from workspace_app.answer.scoring import other_language_side, question_features

    if not question["pool"]:
        return None
    pool = rescored(models.sentence, question)
    evidence, unknown, zh = question["evidence"], int(question["unknown"]), question["zh"]
    p, refuse = models.answerability(question_features([(q, f) for q, f, _ in pool], evidence, unknown, zh))
    side = other_language_side([(q, f) for q, f, _ in pool], evidence, unknown, zh) if p < refuse else None
    if side is None:
        return None
    chosen, features = side
    return [pool[i] for i in chosen], features


def other_language_threshold(by_set: dict[str, list[tuple[float, int]]]) -> float:
    """Where answering from the other language's evidence gains the most (right first citations minus wrong ones
    and answered unanswerable questions) over every set's (P, right) rows, without a loss on any set alone."""
    def gain(rows: list[tuple[float, int]], t: float) -> int:
        return sum(1 if right else -1 for p, right in rows if p >= t)

    steps = [step / 100 for step in range(1, 101)]
    allowed = [t for t in steps if all(gain(rows, t) >= 0 for rows in by_set.values())]
    return max(allowed, key=lambda t: (sum(gain(rows, t) for rows in by_set.values()), t))


def refusal_threshold(answerability: list[tuple[float, int, int]], max_false_refusals: float) -> float:
    """The refusal threshold: most unanswerable rows refused with at most `max_false_refusals` of the answerable
    ones refused, from (P(answerable), answerable, lead right) rows."""
    answerable = [p for p, a, _ in answerability if a]
    unanswerable = [p for p, a, _ in answerability if not a]
    best, refuse = -1.0, 0.5
    for step in range(1, 100):
        t = step / 100
        false = sum(p < t for p in answerable) / max(1, len(answerable))
        recall = sum(p < t for p in unanswerable) / max(1, len(unanswerable))
        if false <= max_false_refusals and recall - false > best:
            best, refuse = recall - false, t
    return refuse


def confident_threshold(correctness: dict[str, list[tuple[float, int]]], precision: float) -> float:
    """The lowest threshold at which every set's rows' leads are right at `precision`, from each set's
    (P(correct), lead right) rows."""
    confident = 0.0
    for rows in correctness.values():
        own = 0.99
        for step in range(1, 100):
            kept = [right for p, right in rows if p >= step / 100]
            if len(kept) < 5 or sum(kept) / len(kept) >= precision:
                own = step / 100
                break
        confident = max(confident, own)
    return confident


def simulate(models: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures of the fitted models on collected questions, without asking again: the lead's passage as the first
    citation (an ask also verifies, covers parts and names sources; the real figures come from `report`)."""
    rows = answerable_rows(models.sentence, questions)
    # (answered, P(correct), answerable, lead right)
    scored = [
        (p >= refuse, models.correct.probability(f), a, right)
        for f, a, right in rows for p, refuse in [models.answerability(f)]
    ]
    if models.other_language is not None:
        # A refused question answered from the other language's evidence: its lead is the best of those.
        others = [other_language_pool(models, q) for q in questions if q["pool"]]
        scored = [
            (True, probability, a, found[0][0][2]) if not kept and probability >= models.other_language_threshold
            else (kept, c, a, right)
            for (kept, c, a, right), found in zip(scored, others, strict=True)
            for probability in [models.other_language.probability(found[1]) if found else 0.0]
        ]
    confident = models.confident_threshold
    ans = [(kept, right) for kept, _, a, right in scored if a]
    una = [kept for kept, _, a, _ in scored if not a]
    sure = [right for kept, c, _, right in scored if kept and c >= confident]
    answered = sum(kept for kept, _, _, _ in scored)
    none = sum(q["answerable"] and not q["pool"] for q in questions)
    return {
        "first_citation": round(sum(right for kept, right in ans if kept) / max(1, len(ans) + none), 3),
        "lead_right_any_threshold": round(sum(right for _, right in ans) / max(1, len(ans) + none), 3),
        "refusal_recall": round(sum(not kept for kept in una) / max(1, len(una)), 3),
        "false_refusals": round((sum(not kept for kept, _ in ans) + none) / max(1, len(ans) + none), 3),
        "confident_right": round(sum(sure) / max(1, len(sure)), 3), "confident_share": round(len(sure) / max(1, answered), 3),
    }


def report(app: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Held-back figures from real asks, judged by the product's own evaluation (workspace-app eval), with the
    share of answerable questions whose search rank 1 holds the gold (what citing search alone would score)."""
    from workspace_app.evaluation.metrics import summarize
    from workspace_app.evaluation.questions import parse_question
    from workspace_app.evaluation.runner import Evaluator

    questions = [parse_question(row, i) for i, row in enumerate(rows, start=1)]
    started = time.perf_counter()
    results = list(Evaluator(app).run(CachedWorkspace.WORKSPACE, questions, mode="hybrid"))
    figures = summarize(results).to_json()["overall"]
    flat = {name: figure["value"] for name, figure in figures.items() if isinstance(figure, dict) and "value" in figure}
    return {"answerable": sum(r.answerable for r in results), "unanswerable": sum(not r.answerable for r in results),
            **flat, "ask_s": round(time.perf_counter() - started, 1)}


def balanced(groups: dict[str, list[Any]]) -> list[Any]:
    """Every set's items repeated up to the largest set's count (so each set weighs the same)."""
    largest = max((len(g) for g in groups.values() if g), default=0)
    return [item for group in groups.values() if group for item in group * max(1, round(largest / len(group)))]


def fit_models(fit: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> Any:
    """The scoring models fitted on collected fit rows (by set)."""
    from workspace_app.answer.scoring import (
        ANSWERABLE_FEATURES,
        SENTENCE_FEATURES,
        ScoringModels,
        fit_logistic,
        fit_ranking,
    )

    # A cross-language set's source is always in the other language: ranking on it alone would teach the model to
    # prefer the other language everywhere. It is ranked only beside its own-language twin (the same questions
    # over the same documents in their own language), and only when asked (`--rank-across`, not shipped: see
    # bench/README.md); the twin teaches nothing else.
    def ranked(name: str) -> bool:
        """Whether the set's answerable pools teach the sentence ranking."""
        if name in CROSS_LANGUAGE_SETS:
            return bool(args.rank_across) and OWN_LANGUAGE_TWINS.get(name) in fit
        return name not in RANKING_ONLY_SETS or bool(args.rank_across)

    pools = [
        ([f for f, _, _ in q["pool"]], [label for _, label, _ in q["pool"]], 1.0 / len(qs))
        for n, qs in fit.items() if ranked(n) for q in qs if q["answerable"]
    ]
    sentence = (ScoringModels.load().sentence if args.keep_sentence
                else fit_ranking(pools, [f for f in SENTENCE_FEATURES if f not in args.without], args.l2))
    by_set = {n: answerable_rows(sentence, qs) for n, qs in fit.items() if n not in RANKING_ONLY_SETS}
    questions = balanced(by_set)
    question_features = [f for f in ANSWERABLE_FEATURES if f not in args.without]

    def regime(across: bool) -> list[tuple[dict[str, float], int, int]]:
        """The fit rows judged by one answerability model (balanced over sets): those whose best candidate
        is in the question's language (not from a cross-language set, where such a lead is the wrong
        article), or those whose best candidate is in the other language."""
        return balanced({
            n: kept for n, rows in by_set.items()
            if across or n not in CROSS_LANGUAGE_SETS
            for kept in [[r for r in rows if bool(r[0]["lead_other_language"]) == across]] if len(kept) >= MIN_REGIME_ROWS
        })

    def answerability(rows: list[tuple[dict[str, float], int, int]], cap: float) -> tuple[Any, float]:
        model = fit_logistic([f for f, _, _ in rows], [a for _, a, _ in rows], question_features)
        return model, refusal_threshold([(model.probability(f), a, r) for f, a, r in rows], cap)

    answerable, refuse = answerability(regime(False), args.max_false_refusals)
    across_rows = regime(True)
    across, refuse_across = answerability(across_rows, args.max_false_refusals_across) if across_rows else (None, 0.5)
    correct = fit_logistic([f for f, _, _ in questions], [right for _, _, right in questions], question_features)
    confident = confident_threshold(
        {n: [(correct.probability(f), r) for f, _, r in rows] for n, rows in by_set.items()}, args.precision
    )
    return with_other_language(ScoringModels(sentence, answerable, correct, refuse, confident, across, refuse_across),
                               fit, question_features)


def with_other_language(models: Any, fit: dict[str, list[dict[str, Any]]], features: list[str]) -> Any:
    """The models with the other-language model fitted against them: over every fit question its lead's model
    refuses that has candidates in the other language, P(the best of those holds the answer) (balanced over sets),
    and the threshold where accepting gains the most without a loss on any set."""
    from workspace_app.answer.scoring import fit_logistic

    by_set = {
        n: [(f, int(q["answerable"] and other[0][2])) for q in qs for found in [other_language_pool(models, q)] if found
            for other, f in [found]]
        for n, qs in fit.items()
    }
    by_set = {n: rows for n, rows in by_set.items() if len(rows) >= MIN_REGIME_ROWS}
    rows = balanced(by_set)
    if not rows or not any(label for _, label in rows):
        return replace(models, other_language=None)
    model = fit_logistic([f for f, _ in rows], [label for _, label in rows], features)
    threshold = other_language_threshold({n: [(model.probability(f), label) for f, label in g] for n, g in by_set.items()})
    return replace(models, other_language=model, other_language_threshold=threshold)


def search_rank1(questions: list[dict[str, Any]]) -> float:
    """Share of the answerable questions whose search rank-1 passage holds the answer (what citing search's first
    passage alone would score; its best-covering sentence when several candidates come from it)."""
    answerable = [q for q in questions if q["answerable"]]
    right = sum(
        max(q["pool"], key=lambda c: (c[0]["fused_rank"], c[0]["coverage"]))[2] for q in answerable if q["pool"]
    )
    return round(right / max(1, len(answerable)), 3)


def leave_one_set_out(read: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> dict[str, Any]:
    """How the fitting transfers to a kind of document it has never seen: for each same-language set, the models
    fitted on the other sets' fit parts, simulated on every row of the set left out, beside citing search's rank 1.
    (Cross-language sets are left in: only they teach the cross-language model.) The held-back figures above
    measure new questions on known kinds of document; these measure a new kind of document, as a user's own PDFs
    are."""
    figures = {}
    for left_out in (n for n in read if n not in CROSS_LANGUAGE_SETS | RANKING_ONLY_SETS):
        log(f"[{left_out}] fitting without it")
        models = fit_models({n: [q for q in qs if q["split"] == "fit"] for n, qs in read.items() if n != left_out}, args)
        figures[left_out] = {
            **simulate(models, read[left_out]), "search_rank1": search_rank1(read[left_out]),
            "answerable_threshold": models.answerable_threshold,
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join((*SETS, "dev")))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--limit", type=int, default=0, help="at most this many rows per set (half of them for the held-back asks), evenly spread (quicker runs)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "fit_answers.json")
    parser.add_argument("--reuse-features", action="store_true", help=f"fit on the rows of the last collection ({FEATURES.name}); sets it lacks are read and added")
    parser.add_argument("--l2", type=float, default=0.01, help="penalty of the sentence model's ranking fit")
    parser.add_argument("--skip-report", action="store_true", help="fit and write the models, but ask nothing")
    parser.add_argument("--dry-run", action="store_true", help="fit and simulate, but neither write the models nor ask")
    parser.add_argument("--max-false-refusals", type=float, default=0.05, help="on the fit part, when choosing the refusal threshold")
    parser.add_argument("--max-false-refusals-across", type=float, default=0.10,
                        help="the same for the cross-language model (the issue's false-refusal target: its evidence "
                        "scores lower whether it answers or not, so a tighter cap refuses almost nothing)")
    parser.add_argument("--keep-shipped", action="store_true",
                        help="keep the shipped sentence, answerability and correctness models; fit only the other-language model against them")
    parser.add_argument("--keep-sentence", action="store_true",
                        help="keep the shipped sentence model; fit the answerability, correctness and other-language models and their thresholds against it")
    parser.add_argument("--confident-only", action="store_true",
                        help="keep every shipped model and threshold but the confident one, chosen again on the stored fit rows (the features move as the answerer changes)")
    parser.add_argument("--precision", type=float, default=0.9, help="of confident answers on the fit part")
    parser.add_argument("--leave-one-out", action="store_true",
                        help="also fit without each same-language set in turn and simulate on it (transfer to a new kind of document)")
    parser.add_argument("--rank-across", action="store_true",
                        help="fit the sentence ranking on the cross-language set and its own-language twin too")
    parser.add_argument("--without", type=lambda text: set(text.split(",")), default=set(),
                        help="features left out of both models (an ablation: does a rule-made feature earn its place?)")
    args = parser.parse_args()
    names = args.sets.split(",")
    opened: list[tuple[str, Any, list[dict[str, Any]]]] = []

    def open_sets() -> list[tuple[str, Any, list[dict[str, Any]]]]:
        """The sets' workspaces, opened on first need (a refit from stored features opens none)."""
        if not opened:
            opened.extend(sets(names))
        return opened

    def app_of(name: str) -> Any:
        """One set's opened app."""
        return next(app for n, app, _ in open_sets() if n == name)

    def cut(rows: list[dict[str, Any]], limit: int = args.limit) -> list[dict[str, Any]]:
        """Every k-th row, to at most `limit` (the rows are in document order: a stride keeps every part of a set)."""
        return rows[:: -(-len(rows) // limit)] if limit and rows else rows

    results: dict[str, Any] = {"sets": names, "dev_documents": list(DEV_DOCS)}
    if not args.report_only:
        stored = json.loads(FEATURES.read_text(encoding="utf-8")) if args.reuse_features and FEATURES.exists() else {}
        read = {name: stored[name] for name in names if name in stored}
        if len(read) < len(names):
            for name, rows in ((n, r) for n, r in set_rows(names) if n not in read):
                log(f"[{name}] reading {len(cut(rows))} questions (fit and held-back parts)")
                read[name] = collect(app_of(name), cut(rows))
            FEATURES.write_text(json.dumps({**stored, **read}), encoding="utf-8")
        fit = {name: [q for q in qs if q["split"] == "fit"] for name, qs in read.items()}
        held = {name: [q for q in qs if q["split"] == "held"] for name, qs in read.items()}
        if args.confident_only:
            from workspace_app.answer.scoring import ScoringModels

            shipped = ScoringModels.load()
            models = replace(shipped, confident_threshold=confident_threshold({
                n: [(shipped.correct.probability(f), right) for f, _, right in answerable_rows(shipped.sentence, qs)]
                for n, qs in fit.items() if n not in RANKING_ONLY_SETS
            }, args.precision))
        elif args.keep_shipped:
            from workspace_app.answer.scoring import ANSWERABLE_FEATURES, ScoringModels

            models = with_other_language(ScoringModels.load(), fit, list(ANSWERABLE_FEATURES))
        else:
            models = fit_models(fit, args)
        if not args.dry_run:
            models.save()
        results.update(
            without=sorted(args.without),
            thresholds={"answerable": models.answerable_threshold, "answerable_across": models.across_threshold,
                        "other_language": models.other_language_threshold, "confident": models.confident_threshold},
            fit_rows={n: {"questions": len(qs), "candidates": sum(len(q["pool"]) for q in qs)} for n, qs in fit.items()},
            simulated={"fit": {n: simulate(models, qs) for n, qs in fit.items()},
                       "held": {n: simulate(models, qs) for n, qs in held.items()}},
            models={"sentence": models.sentence.to_json(), "answerable": models.answerable.to_json(),
                    "correct": models.correct.to_json(),
                    "answerable_across": models.across.to_json() if models.across else None,
                    "other_language": models.other_language.to_json() if models.other_language else None},
        )
        if args.leave_one_out:
            results["leave_one_set_out"] = leave_one_set_out(read, args)
            TRANSFER.write_text(json.dumps({
                "command": "python -m bench.fit_answers --reuse-features --dry-run --leave-one-out", "git": git_info(),
                "without": sorted(args.without), "leave_one_set_out": results["leave_one_set_out"],
            }, indent=1) + "\n", encoding="utf-8")
            print(json.dumps({"leave_one_set_out": results["leave_one_set_out"]}, indent=1))
        print(json.dumps({"thresholds": results["thresholds"], "simulated": results["simulated"]}, indent=1))
        if args.dry_run or args.skip_report:
            return
        for name, app, _ in open_sets():
            app.answers.extractive.models = models
            app.answers.extractive.weights = replace(
                app.answers.extractive.weights, answerable_threshold=None, answerable_across_threshold=None,
                other_language_threshold=None,
            )
            app.answers.confident_threshold = models.confident_threshold
    results["held_back"] = {}
    for name, app, rows in open_sets():
        log(f"[{name}] asking the held-back part")
        results["held_back"][name] = report(app, cut([r for r in rows if r["split"] == "held"], args.limit // 2))
        log(f"[{name}] {results['held_back'][name]}")
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(results["held_back"], indent=1))


if __name__ == "__main__":
    main()
