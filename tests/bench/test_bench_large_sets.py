"""The measured large sets' small rules (bench/large_sets.py, bench/large_eval.py), without their data: the
FinanceBench subset and gold pages, and the eval rows grouped by a question field."""

from __future__ import annotations

import pytest

from bench.large_eval import grouped, result_of
from bench.large_sets import (
    FINANCEBENCH_MIN_QUESTIONS,
    MEASURED,
    REMOVED,
    SETS,
    bucket,
    financebench_subset,
    gold_pages,
)


def test_gold_pages_count_from_one() -> None:
    evidence = [{"evidence_page_num": 0}, {"evidence_page_num": 59}, {"evidence_page_num": 59}]
    assert gold_pages(evidence) == [1, 60]


def named_in(buckets: set[int], count: int) -> list[str]:
    """`count` document names whose bucket is in `buckets`."""
    names = (f"doc-{i}.pdf" for i in range(1000))
    return [n for n in names if bucket(n) in buckets][:count]


def test_subset_keeps_documents_with_enough_questions_and_leaves_out_buckets_0_and_1() -> None:
    kept_buckets = set(range(10)) - REMOVED
    many, few = named_in(kept_buckets, 2), named_in(kept_buckets, 3)[2:]
    removed, absent = named_in(REMOVED, 2), named_in(kept_buckets, 4)[3:]
    counts = {**{d: FINANCEBENCH_MIN_QUESTIONS for d in many}, **{d: 1 for d in few}, removed[0]: 1,
              removed[1]: 5, **{d: 9 for d in absent}}
    available = set(counts) - set(absent)
    kept, left_out = financebench_subset(counts, available)
    assert kept == sorted(many)
    assert left_out == sorted(removed)  # whatever their question counts: removal costs no ingestion


def test_measured_sets_are_not_fitted() -> None:
    assert not set(MEASURED) & set(SETS)


def row(question_id: str, answerable: bool, refused: bool, first_right: bool | None) -> dict[str, object]:
    """An `eval --rows` line."""
    return {"id": question_id, "question": "q", "lang": "en", "answerable": answerable, "refused": refused,
            "right": False, "first_right": first_right, "any_right": first_right, "all_cited": None,
            "search_hit1": first_right, "search_hit5": first_right, "first_document": None, "first_pages": [3, 4],
            "confidence": 0.5, "support": None, "elapsed_ms": 1.0, "split": "fit", "kind": None}


def test_rows_read_back_as_results() -> None:
    result = result_of(row("a", True, False, True))
    assert result.first_pages == (3, 4) and result.right


@pytest.mark.parametrize("field", ["question_type"])
def test_figures_grouped_by_a_question_field(field: str) -> None:
    questions = [{"id": "a", field: "x"}, {"id": "b", field: "x"}, {"id": "c", field: "y"}]
    rows = [row("a", True, False, True), row("b", True, True, False), row("c", False, True, None)]
    groups = grouped(rows, questions, field)
    assert groups["x"]["first_citation"] == {"value": 0.5, "right": 1, "of": 2}
    assert groups["x"]["false_refusals"]["value"] == 0.5
    assert groups["y"]["refusal_recall"] == {"value": 1.0, "right": 1, "of": 1}
