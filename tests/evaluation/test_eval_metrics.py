"""The figures from hand-made results: which rows each counts, refusals as misses, languages, splits, the support
level, and the table."""

from __future__ import annotations

from typing import Any

from workspace_app.evaluation.metrics import (
    Figure,
    any_citation_accuracy,
    confident_answers_right,
    cross_document_all_cited,
    false_refusals,
    first_citation_accuracy,
    refusal_recall,
    search_hit_at_1,
    search_hit_at_5,
    summarize,
)
from workspace_app.evaluation.report import render_table
from workspace_app.evaluation.results import EvalResult


def row(id: str, lang: str = "en", *, answerable: bool = True, refused: bool = False, first: bool = False,
        any_: bool = False, hit1: bool = False, hit5: bool = False, **more: Any) -> EvalResult:
    judged = answerable or None
    return EvalResult(
        id=id, question=f"question {id}", lang=lang, answerable=answerable, refused=refused,
        first_right=first if judged else None, any_right=any_ if judged else None,
        search_hit1=hit1 if judged else None, search_hit5=hit5 if judged else None,
        first_document=None if refused else "a.pdf", first_pages=None if refused else (3, 4),
        confidence=0.5, elapsed_ms=12.0, **more,
    )


RESULTS = [
    row("1", first=True, any_=True, hit1=True, hit5=True, split="tuning"),
    row("2", any_=True, hit5=True, split="held-back"),
    row("3", refused=True, hit5=True, split="tuning"),
    row("4", "zh", first=True, any_=True, hit1=True, hit5=True),
    row("5", answerable=False, refused=True, split="tuning"),
    row("6", "zh", answerable=False),
    row("7", first=True, any_=True, kind="cross_doc", all_cited=False),
    # A refused answer's judgements never count as right, whatever was recorded.
    row("8", "zh", refused=True, first=True, any_=True, kind="cross_doc", all_cited=True),
]


def test_each_figure_counts_its_own_rows() -> None:
    assert first_citation_accuracy(RESULTS) == Figure(3, 6)
    assert any_citation_accuracy(RESULTS) == Figure(4, 6)
    assert refusal_recall(RESULTS) == Figure(1, 2)
    assert false_refusals(RESULTS) == Figure(2, 6)
    assert search_hit_at_1(RESULTS) == Figure(2, 6)
    assert search_hit_at_5(RESULTS) == Figure(4, 6)
    assert cross_document_all_cited(RESULTS) == Figure(0, 2)
    assert Figure(3, 6).value == 0.5 and Figure(0, 0).value is None


def test_rows_are_right_as_a_whole_by_their_kind() -> None:
    assert [r.right for r in RESULTS] == [True, False, False, True, True, False, False, False]


def test_confident_answers_right_only_when_answers_carry_a_support_level() -> None:
    assert confident_answers_right(RESULTS) is None
    graded = [
        row("a", first=True, support="confident"), row("b", support="confident"),
        row("c", answerable=False, support="confident"),  # answered an unanswerable question: wrong
        row("d", first=True, support="partial"), row("e", refused=True, first=True, support="confident"),
    ]
    assert confident_answers_right(graded) == Figure(1, 3)
    assert summarize(graded).overall.figures["confident_right"] == Figure(1, 3)
    assert "confident_right" not in summarize(RESULTS).overall.figures


def test_summary_by_language_and_split_with_counts() -> None:
    summary = summarize(RESULTS, by_split=True)
    assert (summary.overall.questions, summary.overall.answerable) == (8, 6)
    assert sorted(summary.by_lang) == ["en", "zh"]
    zh = summary.by_lang["zh"]
    assert (zh.questions, zh.answerable) == (3, 2)
    assert zh.figures["first_citation"] == Figure(1, 2) and zh.figures["refusal_recall"] == Figure(0, 1)
    assert summary.by_split["tuning"].figures["first_citation"] == Figure(1, 2)
    assert summary.by_split["held-back"].figures["any_citation"] == Figure(1, 1)
    assert sorted(summary.by_split) == ["held-back", "tuning"], "rows without a split are in none"
    assert summarize(RESULTS).by_split == {}
    data = summary.to_json()
    assert data["overall"]["first_citation"] == {"value": 0.5, "right": 3, "of": 6}
    assert data["by_lang"]["en"]["unanswerable"] == 1
    assert data["by_lang"]["en"]["cross_doc_all_cited"] == {"value": 0.0, "right": 0, "of": 1}
    assert data["by_split"]["held-back"]["refusal_recall"] == {"value": None, "right": 0, "of": 0}


def test_the_table_has_a_column_per_group_and_a_row_per_figure() -> None:
    table = render_table(summarize(RESULTS, by_split=True))
    lines = table.splitlines()
    assert lines[0].split() == ["all", "en", "zh", "split=held-back", "split=tuning"]
    first = next(line for line in lines if line.startswith("first citation right"))
    assert first.split()[3:6] == ["0.500", "(3/6)", "0.500"]
    refusals = next(line for line in lines if line.startswith("unanswerable refused"))
    assert refusals.split()[-3:] == ["-", "1.000", "(1/1)"], "no unanswerable row held back: '-'"


def test_a_row_as_json() -> None:
    data = RESULTS[0].to_json()
    assert data["first_right"] is True and data["right"] is True and data["first_pages"] == [3, 4]
    assert data["split"] == "tuning" and data["all_cited"] is None and data["support"] is None
    assert RESULTS[4].to_json()["first_right"] is None, "unanswerable rows are not judged by citations"
