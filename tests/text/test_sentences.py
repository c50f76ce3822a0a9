"""Sentence spans of evidence text: where a line break ends a sentence and where it does not."""

from __future__ import annotations

import pytest

from workspace_app.text.sentences import is_caption, leaves_clause_open, split_sentences


def texts(text: str) -> list[str]:
    return [span.text for span in split_sentences(text)]


def test_a_decimal_number_wrapped_onto_the_next_line_stays_in_its_sentence() -> None:
    # zh-acute-af-ed-2024 p.10, a narrow column: "1.5~2.0" is printed as "1.5~2." and "0" on the next line.
    row = "INR 目标范围一般在2.0~3.0 之间（>65 岁NVAF 患者也可考虑在1.5~2.\n0 之间）。一般3~5 d 监测一次INR。"
    assert texts(row) == ["INR 目标范围一般在2.0~3.0 之间（>65 岁NVAF 患者也可考虑在1.5~2. 0 之间）。", "一般3~5 d 监测一次INR。"]
    assert texts("The dose was 2.\n5 mg daily.") == ["The dose was 2. 5 mg daily."]


def test_a_year_or_a_numbered_item_still_ends_the_sentence() -> None:
    assert texts("Events fell in 2017.\n3 patients died.") == ["Events fell in 2017.", "3 patients died."]
    assert texts("It was published in 2012.\n2. The next item.") == ["It was published in 2012.", "2.", "The next item."]
    assert texts("Use it in stable patients. 3 trials support it.") == ["Use it in stable patients.", "3 trials support it."]


@pytest.mark.parametrize(
    ("line", "open_"),
    [("Exercise electrocardiographic testing in patients with", True), ("dietary patterns and", True),
     ("is more likely than", True), ("Syncope in athletes", False), ("the risk of stroke.", False)],
)
def test_a_line_ending_on_a_function_word_leaves_its_clause_open(line: str, open_: bool) -> None:
    """The one rule sentence joining and cut-off section titles share: "… with" goes on in the next line."""
    assert leaves_clause_open(line) is open_


@pytest.mark.parametrize(
    ("sentence", "caption"),
    [("Table 3. Statin intensity", True), ("表1 推荐类别与证据水平", True), ("Fig. 2 Algorithm", True),
     ("Tables of risk are shown.", False), ("Figure-of-eight sutures were used.", False)],
)
def test_a_caption_is_a_table_or_figure_label_and_its_number(sentence: str, caption: bool) -> None:
    """One caption rule for guides (a caption is no recommendation) and graph reports (nor a sentence to quote)."""
    assert is_caption(sentence) is caption
