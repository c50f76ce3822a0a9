"""Gradings in gold answers and answers (bench/common/grading.py), and the held-back split of the dev rows."""

from __future__ import annotations

import pytest

from bench.common.grading import Grading, cited_grading, find_gradings, states_all
from bench.common.questions import HELD_BACK, TUNING, is_held_back, question_number, split_of


@pytest.mark.parametrize("text, expected", [
    ("Class I, Level of Evidence B-NR.", [("I", "B-NR")]),
    ("No. Routine cardiac imaging is not useful: Class III (No Benefit), LOE B-NR.", [("III", "B-NR")]),
    ("5%–6% of calories; ACC/AHA COR I, LOE A (NHLBI Grade A, strong).", [("I", "A")]),
    ("Up to 12 months (Class I, LOE A) or up to 3 years (Class I, LOE B).", [("I", "A"), ("I", "B")]),
    ("NHLBI Grade: A (strong); ACC/AHA COR: I, LOE: A Rationale", [("I", "A")]),
    ("Ⅰ类推荐，C级证据。", [("I", "C")]),
    ("Ⅱa类推荐，证据水平B-R（屈昔多巴可能有益）。", [("IIa", "B-R")]),
    ("ACC/AHA Ⅰ类推荐，证据级别A", [("I", "A")]),
    ("（Ⅱb，B）", [("IIb", "B")]),
    ("Tilt-table testing can be useful (218,219). IIa B-NR", [("IIa", "B-NR")]),
    ("We suggest this (weak recommendation, low-quality evidence).", [("weak", "low")]),
    ("Moderate-quality evidence supports a strong recommendation for statins.", [("strong", "moderate")]),
])
def test_gradings_are_read(text: str, expected: list[tuple[str, str]]) -> None:
    assert find_gradings(text) == [Grading(c, level) for c, level in expected]


@pytest.mark.parametrize("text", [
    "Recurrent VVS with inadequate response to salt and fluid.",
    "Class I antiarrhythmic drugs can unmask the Brugada pattern.",
    "A level of evidence was assigned to each recommendation.",
    "心室率控制是急性房颤治疗的基础。",
])
def test_text_without_grading(text: str) -> None:
    assert find_gradings(text) == []


def test_stated_means_every_gold_grading() -> None:
    gold = find_gradings("Up to 12 months (Class I, LOE A) or up to 3 years (Class I, LOE B).")
    assert states_all(gold, find_gradings("β-Blockers for 12 mo (Class I; Level of Evidence A) or 3 y (Class I; Level of Evidence B)"))
    assert not states_all(gold, find_gradings("β-Blockers for 12 mo (Class I; Level of Evidence A)"))
    assert not states_all([], [Grading("I", "A")])
    assert cited_grading("Ⅱa", "b-nr") == Grading("IIa", "B-NR") and cited_grading("I", None) is None


@pytest.mark.parametrize("question_id, number, held", [
    ("gdev-051", 51, True), ("gdev-x004", 4, False), ("gdev-003", 3, True), ("gdev-x099", 99, True),
    ("gdev-125", 125, False),
])
def test_held_back_rows_have_an_id_number_divisible_by_3(question_id: str, number: int, held: bool) -> None:
    assert question_number(question_id) == number
    assert is_held_back(question_id) is held
    assert split_of(question_id) == (HELD_BACK if held else TUNING)
