"""Chinese recommendation tables read row by row: the statement, then its class and level, one row a paragraph.

zh-acute-af-ed-2024 sets its recommendations as 推荐意见 | 推荐级别 | 证据级别 with the cells right of a statement
of several lines. Read by position, the cells landed inside the statement's words ("…治疗中稳Ⅰ定血流动力学…").
Expected rows were read off page 6 (rate control, 心室率控制) of the PDF.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.ingest.readers.pdf import parse_pdf
from workspace_app.text.grades import find_recommendation

ZH_ACUTE = "zh-acute-af-ed-2024.pdf"
RATE_CONTROL = [
    ("不论何种类型房颤，心室率控制是急性房颤治疗中稳定血流动力学状态与改善症状的基础 Ⅰ C", "I", "C"),
    ("房颤伴快速心室率且症状明显的患者，首选静脉给药控制心室率 Ⅰ B", "I", "B"),
    ("LVEF ≥40% 的急性房颤，β- 受体阻滞剂、非二氢吡啶类钙通道阻滞剂（地尔硫卓、维拉帕米）作为控制心室率的首选药物 Ⅰ B",
     "I", "B"),
    ("LVEF ＜40% 的急性房颤，可使用洋地黄类药控制心室率 Ⅰ B", "I", "B"),
    ("单一药物治疗无法达到心室率控制目标时，可联合药物治疗 Ⅱa B", "IIa", "B"),
    ("除非特定临床情况，宽松的心率控制可作为急性房颤相对稳定后心室率控制的目标 Ⅱa B", "IIa", "B"),
]


@pytest.fixture(scope="module")
def rate_control_page(excerpt: Callable[[str, int, int], Path]) -> list[Any]:
    path = excerpt(ZH_ACUTE, 6, 6)
    return parse_pdf(path, path.name).paragraphs


@pytest.mark.parametrize(("row", "grade_class", "level"), RATE_CONTROL, ids=[row[:12] for row, _, _ in RATE_CONTROL])
def test_each_rate_control_row_is_a_paragraph_ending_in_its_class_and_level(
    rate_control_page: list[Any], row: str, grade_class: str, level: str
) -> None:
    paragraph = next((p for p in rate_control_page if p.text == row), None)
    assert paragraph is not None, [p.text[:40] for p in rate_control_page]
    found = find_recommendation(paragraph.text)
    assert (found.recommendation_class, found.evidence_level) == (grade_class, level)
    assert paragraph.spans[0].line.recommendation == (grade_class, level)


def test_the_table_header_reads_across(rate_control_page: list[Any]) -> None:
    assert "推荐意见 推荐级别 证据级别" in [p.text for p in rate_control_page]


def test_chunks_carry_the_row_and_its_grading(guidelines: Path, chunk_pdf: Callable[[Path], list[Any]]) -> None:
    chunks = chunk_pdf(guidelines / ZH_ACUTE)
    text = "\n".join(chunk.text for chunk in chunks)
    for broken in ("稳Ⅰ定", "非二氢Ⅰ", "推荐证据级别级别", "首选药物LVEF"):
        assert broken not in text
    row = RATE_CONTROL[2][0]
    holding = [chunk for chunk in chunks if row in chunk.text]
    assert holding and all(chunk.page_start <= 6 <= chunk.page_end for chunk in holding)
    first_row = [chunk for chunk in chunks if chunk.text.startswith(RATE_CONTROL[0][0][:20])]
    assert any(chunk.recommendation == ("I", "C") for chunk in first_row)


def test_a_bold_statement_running_on_in_lower_case_is_text_not_a_heading(excerpt: Callable[[str, int, int], Path]) -> None:
    # eckel-2013-lifestyle p.15: the bold recommendation "4. Advise adults … a. Combine the DASH dietary pattern with
    # lower" goes on with "sodium intake." — read as a heading it left the text and the grading lost its statement.
    path = excerpt("eckel-2013-lifestyle.pdf", 15, 15)
    paragraphs = parse_pdf(path, path.name).paragraphs
    assert not any("Combine the DASH" in p.text for p in paragraphs if p.is_heading)
    assert not any("Combine the DASH" in p.section for p in paragraphs)
    assert any("a. Combine the DASH dietary pattern with lower" in p.text for p in paragraphs if not p.is_heading)


def test_a_captioned_chinese_table_reads_row_by_row(excerpt: Callable[[str, int, int], Path]) -> None:
    # zh-acute-af-ed-2024 p.6, 表8: four columns across both text columns, cells of several lines, superscripts.
    path = excerpt(ZH_ACUTE, 6, 6)
    texts = [p.text for p in parse_pdf(path, path.name).paragraphs]
    assert "药物 静脉给药剂量 常用口服维持剂量 禁忌证" in texts
    metoprolol = next(t for t in texts if t.startswith("酒石酸美托洛尔"))
    assert metoprolol.startswith("酒石酸美托洛尔 2.5~5 mg，5 min 后可重复给药，最大剂量20 mg 25~100 mg/ 次, 2 次/d")
    assert metoprolol.endswith("AHF（伴急性肺淤血/ 肺水肿）、支气管哮喘、COPD 患者禁用。")  # a cell wrapped past the next row
    assert "艾司洛尔 0.5 mg/kg，1 min 内静脉注射，随后0.05~0.3 mg · kg -1 · min -1 维持治疗 无" in texts
    assert any(t.startswith("地尔硫卓 0.25 mg/kg，静推5 min，随后5~15 mg/h 维持 60 mg/ 次，3 次/d") for t in texts)
    # The text after the table is not read into it.
    assert not any(t.startswith("胺碘酮") and "注：" in t for t in texts)


def test_a_grade_table_under_a_caption_keeps_each_rows_strength_and_quality(
    excerpt: Callable[[str, int, int], Path],
) -> None:
    # zh-hfpef-consensus-2023 p.5, 表3: narrow strength and quality columns beside statements of several lines.
    path = excerpt("zh-hfpef-consensus-2023.pdf", 5, 5)
    texts = [p.text for p in parse_pdf(path, path.name).paragraphs]
    assert "对于疑似HFpEF，血清利钠肽水平（BNP 或NT-proBNP）有助于HFpEF 诊断 强 B" in texts
    assert "HFpEF 的初始检查应包括心电图、X 线胸片、经胸超声心动图 强 C" in texts
