"""bench.answers, the figures: metrics over any rows, per split / language / file / kind, and the issue-14 targets.

`metrics` works on the records of `bench.answers_rows.evaluate` (and on bench.graph's, which carry fewer fields:
a figure whose fields are missing is left out). Shares are None when no row qualifies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.common.questions import HARD, SPLITS, XLING

ALL = "all"
GROUP_SPLITS = (*SPLITS, ALL)
LANGS = ("en", "zh")
CHIP_COUNTERS = ("citations with a grading", "grading not stated at the quote", "grading unlike the quote's")
QUOTE_COUNTERS = {
    "fragment quotes": "fragment", "reference-entry quotes": "reference entry",
    "figure/table title quotes": "figure/table title", "abbreviation-legend quotes": "abbreviation legend",
}


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's metrics over some rows."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if not r["refused"]]
    result: dict[str, Any] = {
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
        result["every document cited, count"] = f"{sum(r['all_docs'] for r in cross)} of {len(cross)}"
    graded = [r["recommendation"] for r in rows if "recommendation" in r]
    if graded:
        result["recommendation rows"] = len(graded)
        result["class and level stated"] = share(sum(g["stated"] for g in graded), len(graded))
        result["class and level stated (answer text)"] = share(sum(g["stated in text"] for g in graded), len(graded))
        result["class and level stated (first citation)"] = share(
            sum(g["stated by first citation"] for g in graded), len(graded))
    if any("quality" in r for r in rows):
        result.update(quote_counters(rows))
    return result


def quote_counters(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Quote-quality counts over the answered rows: quotes flagged per detector, markers and glyphs in answers."""
    checked = [r["quality"] for r in rows if "quality" in r]
    counts = {"answers checked": len(checked), "quotes checked": sum(q["quotes"] for q in checked)}
    for name, flag in QUOTE_COUNTERS.items():
        counts[name] = sum(flag in f["flags"] for q in checked for f in q["flagged"])
    counts["answers with a flagged quote"] = sum(bool(q["flagged"]) for q in checked)
    counts["source reference markers"] = sum(len(q["source markers"]) for q in checked)
    counts["answers with source markers"] = sum(bool(q["source markers"]) for q in checked)
    counts["dropped glyphs"] = sum(len(q["dropped glyphs"]) for q in checked)
    counts["suspected dropped symbols"] = sum(len(q["suspected dropped symbols"]) for q in checked)
    kinds = [k for r in rows for k in r.get("cited_chunk_kinds", [])]
    counts["quotes from reference-list chunks"] = kinds.count("references")
    counts["quotes from contents chunks"] = kinds.count("contents")
    chips = [r["chips"] for r in rows if "chips" in r]
    for name in CHIP_COUNTERS:
        counts[name] = sum(c[name] for c in chips)
    return counts


def in_split(rows: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return rows if split == ALL else [r for r in rows if r["split"] == split]


def by_language(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """{'all': ..., 'en': ..., 'zh': ...} (a language without rows is left out)."""
    out = {ALL: metrics(rows)}
    for lang in LANGS:
        chosen = [r for r in rows if r["lang"] == lang]
        if chosen:
            out[lang] = metrics(chosen)
    return out


def grouped(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], list[str]]) -> dict[str, Any]:
    """`by_language` of the rows of each group (`key` names the groups a row belongs to)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for name in key(row):
            groups.setdefault(name, []).append(row)
    return {name: by_language(chosen) for name, chosen in groups.items()}


def all_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure for tuning / held-back / all: overall, per file and per kind (plus `hard`), each by language."""
    out: dict[str, Any] = {"metrics": {}, "metrics_by_file": {}, "metrics_by_kind": {}}
    for split in GROUP_SPLITS:
        chosen = in_split(rows, split)
        out["metrics"][split] = by_language(chosen)
        out["metrics_by_file"][split] = grouped(chosen, lambda r: [r["file"]])
        out["metrics_by_kind"][split] = grouped(chosen, lambda r: [r["kind"]] + ([HARD] if r["hard"] else []))
    return out


# The targets of issue 14 (dev set, extractive answerer, the 5 dev PDFs). Each names the rows it is judged on.

def _dev(r: dict[str, Any]) -> bool:
    return r["file"] != XLING


def _single(r: dict[str, Any]) -> bool:
    """A dev row of one document (the issue's "80 answerable rows" leave the cross-document ones out)."""
    return _dev(r) and r["kind"] != "cross_doc"


def _answered(r: dict[str, Any]) -> bool:
    return not r["refused"]


@dataclass(frozen=True)
class Target:
    """A target: the rows it is judged on, the metric, the comparison."""

    name: str
    rows: Callable[[dict[str, Any]], bool]
    metric: str
    op: str
    goal: float


TARGETS = (
    Target("first citation on a gold page (80 answerable dev rows)", lambda r: _single(r) and r["answerable"],
           "first-citation page accuracy", ">=", 0.85),
    Target("first citation on a gold page (hard dev rows)", lambda r: _dev(r) and r["hard"],
           "first-citation page accuracy", ">=", 0.75),
    *(Target(f"refusal recall (dev unanswerable{', ' + lang if lang else ''})",
             lambda r, lang=lang: _single(r) and not r["answerable"] and (not lang or r["lang"] == lang),
             "refusal recall", ">=", 0.85)
      for lang in ("", *LANGS)),
    *(Target(f"false-refusal rate (80 answerable dev rows{', ' + lang if lang else ''})",
             lambda r, lang=lang: _single(r) and r["answerable"] and (not lang or r["lang"] == lang),
             "false-refusal rate", "<=", 0.05)
      for lang in ("", *LANGS)),
    Target("recommendation rows: class and level stated (text or first citation)",
           lambda r: r["kind"] == "recommendation", "class and level stated", ">=", 0.85),
    Target("cross-language: first citation on a gold page", lambda r: r["file"] == XLING and r["answerable"],
           "first-citation page accuracy", ">=", 0.70),
    Target("cross-language: false-refusal rate", lambda r: r["file"] == XLING and r["answerable"],
           "false-refusal rate", "<=", 0.10),
    Target("cross-document: a gold page of each document cited (>= 4 of 5)", lambda r: r["kind"] == "cross_doc",
           "every document cited (cross-document)", ">=", 0.80),
    Target("fragment quotes in answers", _answered, "fragment quotes", "<=", 0),
    Target("reference-entry quotes in answers", _answered, "reference-entry quotes", "<=", 0),
    Target("dropped glyphs in answers", _answered, "dropped glyphs", "<=", 0),
)
LATENCY_TARGET = Target("warm ask p95 ms (p95 of per-question medians)", lambda r: True, "ask p95 ms", "<", 400.0)


def met(value: float | None, op: str, goal: float) -> bool | None:
    if value is None:
        return None
    return value >= goal if op == ">=" else value <= goal if op == "<=" else value < goal


def check_targets(rows: list[dict[str, Any]], latency: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each target with its value on tuning / held-back / all and whether each meets it ('met' = on all rows)."""
    checked = []
    for target in TARGETS:
        values = {}
        for split in GROUP_SPLITS:
            chosen = [r for r in in_split(rows, split) if target.rows(r)]
            values[split] = metrics(chosen).get(target.metric) if chosen else None
        checked.append({
            "target": target.name, "goal": f"{target.op} {target.goal}", "values": values,
            "rows": sum(target.rows(r) for r in rows),  # the rows the target is judged on (its denominator)
            "met_by_split": {s: met(v, target.op, target.goal) for s, v in values.items()},
            "met": bool(met(values[ALL], target.op, target.goal)),
        })
    if latency is not None:
        value = latency["p95 of per-question medians"]
        checked.append({
            "target": LATENCY_TARGET.name, "goal": f"{LATENCY_TARGET.op} {LATENCY_TARGET.goal}",
            "values": {ALL: value}, "rows": latency["asks"], "met_by_split": {ALL: met(value, "<", 400.0)},
            "met": bool(met(value, "<", 400.0)),
        })
    return checked
