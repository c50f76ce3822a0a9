"""The guideline dev questions: which files a run uses, where their gold pages are, and metrics per group.

`--questions` of bench.answers, bench.graph and bench.retrieval picks one of `QUESTION_SETS` (default `first50`,
the set every earlier result was measured on; bench.answers defaults to `all+xling`). Cross-document rows
(`kind: "cross_doc"`) name several gold documents: `gold_pages` returns one (document, pages) pair per document
for every row.

Held-back split (`split_of`): a row whose id number is divisible by 3 (gdev-051 -> 51, gdev-x004 -> 4) is
HELD BACK; the rest is the TUNING part. Tune thresholds and rules on the tuning part only and report the
held-back part beside it: a method that only fits the rows it was tuned on shows up as a gap between the two.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.common.paths import EVAL_DIR, load_jsonl

FIRST = "guidelines_dev.jsonl"
MORE = "guidelines_dev_more.jsonl"
XLING = "guidelines_dev_xling.jsonl"
QUESTION_SETS: dict[str, tuple[str, ...]] = {
    "first50": (FIRST,),
    "all": (FIRST, MORE),
    "xling": (XLING,),
    "all+xling": (FIRST, MORE, XLING),
}
DEFAULT_SET = "first50"
HARD = "hard"  # the group of rows marked `"hard": true`, reported next to the kinds
TUNING, HELD_BACK = "tuning", "held-back"
SPLITS = (TUNING, HELD_BACK)


def question_number(question_id: str) -> int:
    """The number in a question id: 'gdev-051' -> 51, 'gdev-x004' -> 4."""
    found = re.search(r"(\d+)$", question_id)
    if found is None:
        raise ValueError(f"no number in question id {question_id!r}")
    return int(found.group(1))


def is_held_back(question_id: str) -> bool:
    """Whether a row belongs to the held-back part: its id number is divisible by 3 (one row in three).

    The rule depends on the id only, so it is the same in every benchmark and for every file (a cross-language
    row `gdev-x051` is held back like its source `gdev-051`). Calibrate on the rows where this is False.
    """
    return question_number(question_id) % 3 == 0


def split_of(question_id: str) -> str:
    """`HELD_BACK` ('held-back') or `TUNING` ('tuning') for a question id (see `is_held_back`)."""
    return HELD_BACK if is_held_back(question_id) else TUNING


def add_questions_option(parser: Any, default: str = DEFAULT_SET) -> None:
    """The `--questions` option, the same in every benchmark that reads the dev questions."""
    parser.add_argument(
        "--questions",
        choices=list(QUESTION_SETS),
        default=default,
        help=f"dev questions (default {default}): first50 = guidelines_dev.jsonl (comparable with earlier results); "
        "all = + guidelines_dev_more.jsonl; xling = guidelines_dev_xling.jsonl; all+xling = all three. "
        "Other than first50, metrics are also reported per file and per kind",
    )


@dataclass(frozen=True)
class QuestionSet:
    """The questions a run evaluates, the ones its latency passes ask (always the first 50, so latency figures
    stay comparable), and the per-file / per-kind groups (None for the default set: nothing new is reported)."""

    name: str
    questions: list[dict[str, Any]]
    latency_questions: list[dict[str, Any]]
    groups: dict[str, dict[str, list[str]]] | None


def select_questions(name: str = DEFAULT_SET) -> QuestionSet:
    questions = load_questions(name)
    groups = None if name == DEFAULT_SET else question_groups(questions, name)
    return QuestionSet(name, questions, load_questions(DEFAULT_SET), groups)


def load_questions(name: str = DEFAULT_SET) -> list[dict[str, Any]]:
    """The rows of a question set, in file order."""
    return [row for file in QUESTION_SETS[name] for row in load_jsonl(EVAL_DIR / file)]


def file_of_ids(name: str) -> dict[str, str]:
    """Question id -> the file it comes from (ids are unique across the three files)."""
    return {row["id"]: file for file in QUESTION_SETS[name] for row in load_jsonl(EVAL_DIR / file)}


def results_name(stem: str, name: str, suffix: str = ".json", default: str = DEFAULT_SET) -> str:
    """`answers.json` for the benchmark's default set, `answers-all-xling.json` for all+xling otherwise.

    A run on another set than the default never overwrites the default file (bench.answers passes
    `default="all+xling"`, so its `--questions first50` goes to `answers-first50.json`).
    """
    return f"{stem}{suffix}" if name == default else f"{stem}-{name.replace('+', '-')}{suffix}"


def gold_pages(row: dict[str, Any]) -> list[tuple[str, list[int]]]:
    """(document, gold pages) per gold document: one pair, or one per document of a cross-document row."""
    if isinstance(row["doc"], list):
        by_doc = row.get("pages_by_doc") or dict(zip(row["doc"], row["pages"], strict=True))
        return [(doc, list(by_doc[doc])) for doc in row["doc"]]
    return [(row["doc"], list(row["pages"]))]


def gold_documents(row: dict[str, Any]) -> list[str]:
    return [doc for doc, _ in gold_pages(row)]


def on_gold_span(document: str, page_start: int, page_end: int, row: dict[str, Any]) -> bool:
    """A span of `document` that contains a gold page of that document."""
    return any(document == doc and any(page_start <= p <= page_end for p in pages) for doc, pages in gold_pages(row))


def question_groups(questions: Sequence[dict[str, Any]], name: str) -> dict[str, dict[str, list[str]]]:
    """Question ids per file and per kind (plus `hard`), for the per-group metrics of a larger set."""
    files = file_of_ids(name)
    by_file: dict[str, list[str]] = {}
    by_kind: dict[str, list[str]] = {}
    for q in questions:
        by_file.setdefault(files.get(q["id"], "?"), []).append(q["id"])
        by_kind.setdefault(q["kind"], []).append(q["id"])
        if q.get("hard"):
            by_kind.setdefault(HARD, []).append(q["id"])
    return {"by_file": by_file, "by_kind": by_kind}


def grouped_metrics(
    rows: Sequence[dict[str, Any]],
    groups: dict[str, dict[str, list[str]]],
    summarize: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """`summarize` over the rows of each file and each kind: {"by_file": {file: ...}, "by_kind": {kind: ...}}."""
    out: dict[str, dict[str, Any]] = {}
    for grouping, members in groups.items():
        out[grouping] = {}
        for group, ids in members.items():
            wanted = set(ids)
            chosen = [r for r in rows if r["id"] in wanted]
            if chosen:
                out[grouping][group] = summarize(chosen)
    return out
