"""Recommendation grades read off the real PDFs as they print them: ACC/AHA COR/LOE tables (numbered classes since
2024) and the grading lines of a Chinese consensus, through the parser and the chunks a citation quotes from.

Expected rows were read off the pages with pymupdf (`page.get_text()`): ommen-2024-hcm p.13, grundy-2018-cholesterol
p.17, zh-hfpef-consensus-2023 p.6.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.ingest.readers.pdf import parse_pdf
from workspace_app.text.grades import find_recommendation, grading_in
from workspace_app.text.sentences import split_sentences

OMMEN_ROWS = [  # ommen-2024-hcm p.13: the cells "1" / "B-NR" stand left of the statement, level with its middle
    ("1. For patients with HCM or at risk for HCM, shared decision-making is recommended", "concerns.1-5 1 B-NR",
     ("I", "B-NR")),
    ("1. In patients with HCM in whom SRT is indicated, the procedure should be performed",
     "(Tables 4 and 5).1-3 1 C-LD", ("I", "C-LD")),
    ("2. In patients with HCM, consultation with or referral to a comprehensive or primary HCM center",
     "(Table 4).4-14 2a C-LD", ("IIa", "C-LD")),
]


@pytest.fixture(scope="module")
def ommen_page(excerpt: Callable[[str, int, int], Path]) -> list[Any]:
    path = excerpt("ommen-2024-hcm.pdf", 13, 13)
    return parse_pdf(path, path.name).paragraphs


@pytest.mark.parametrize(("start", "end", "grade"), OMMEN_ROWS, ids=["shared-decisions", "srt-centers", "referral"])
def test_a_numbered_class_row_is_graded_and_ends_in_its_cells(
    ommen_page: list[Any], start: str, end: str, grade: tuple[str, str]
) -> None:
    first = next(i for i, p in enumerate(ommen_page) if p.text.startswith(start))
    row = ommen_page[first : first + 2]  # the statement's first line is a paragraph of its own (a longer line)
    assert row[-1].text.endswith(end), [p.text[-40:] for p in row]
    lines = [span.line for paragraph in row for span in paragraph.spans]
    assert {line.recommendation for line in lines} == {grade}
    assert find_recommendation(row[-1].text) == find_recommendation(end)
    # No cell is left on its own (the "1" of the first row stood near the top, where page numbers are read).
    assert not [p.text for p in ommen_page if p.text in ("1", "2a", "B-NR", "C-LD")]


def test_cells_level_with_a_statement_no_longer_cut_it(
    excerpt: Callable[[str, int, int], Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    # grundy-2018 p.17: "I" / "A" stand level with the gap between the statement's two lines; read by position they
    # fell between them ("…10-year ASCVD risk," "I A" "moderate-intensity statin therapy is indicated").
    chunks = chunk_pdf(excerpt("grundy-2018-cholesterol.pdf", 17, 17))
    text = next(c.text for c in chunks if "regardless of estimated 10-year ASCVD risk" in c.text)
    assert "risk,\nI A\n" not in text
    sentence = next(s for s in split_sentences(text) if "regardless of estimated 10-year ASCVD risk" in s.text)
    assert "moderate-intensity statin therapy is indicated" in sentence.text
    assert grading_in(text, sentence.start, sentence.text) == find_recommendation("I A")
    reasonable = next(s for s in split_sentences(text) if "it is reasonable to assess the 10-year risk" in s.text)
    assert grading_in(text, reasonable.start, reasonable.text) == find_recommendation("IIa B-NR")


def test_a_chinese_grading_line_is_text_and_grades_its_statement(
    excerpt: Callable[[str, int, int], Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    # zh-hfpef-consensus-2023 p.6: "推荐强度：强  证据质量：B" in bold under statement 2 was read as a heading: it left
    # the text (and named the sections after it), so nothing was graded.
    path = excerpt("zh-hfpef-consensus-2023.pdf", 6, 6)
    paragraphs = parse_pdf(path, path.name).paragraphs
    assert not [p.text for p in paragraphs if p.is_heading and "推荐强度" in p.text]
    assert not [p.section for p in paragraphs if "推荐强度" in p.section]
    chunks = chunk_pdf(path)
    text = next(c.text for c in chunks if "有助于诊断HFpEF" in c.text)
    statement = next(s for s in split_sentences(text) if "有助于诊断HFpEF" in s.text)
    found = grading_in(text, statement.start, statement.text)
    assert (found.recommendation_class, found.evidence_level) == ("Strong", "B")
    # The evidence summary under the grading ("证据概述：…") states no recommendation of its own.
    summary = next(c.text for c in chunks if c.text.startswith("推荐强度：强") and "证据概述" in c.text)
    sentences = split_sentences(summary)[1:]
    assert sentences and all(grading_in(summary, s.start, s.text).recommendation_class is None for s in sentences)
