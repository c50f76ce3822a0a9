"""What may be quoted: whole sentences, list items and table rows; never reference entries, captions or fragments."""

from __future__ import annotations

from workspace_app.answer.quotes import is_caption, is_fragment, is_reference_entry, quotable
from workspace_app.text.sentences import split_sentences
from workspace_app.text.source_markers import without_source_markers


def spans_of(text: str) -> dict[str, object]:
    return {span.text: span for span in split_sentences(text)}


def test_a_sentence_cut_by_the_chunk_end_is_a_fragment() -> None:
    text = "Trans fat should be avoided.\nIntake of trans fat has been shown to be harmful and"
    spans = split_sentences(text)
    assert not is_fragment(text, spans[0], "en")
    assert is_fragment(text, spans[-1], "en")


def test_a_sentence_starting_mid_way_is_a_fragment_but_a_list_item_is_not() -> None:
    text = "estimated reductions in risk of about 1,000 mg/d. Sodium should be reduced."
    first = split_sentences(text)[0]
    assert is_fragment(text, first, "en")
    item = "• reduce sodium intake to 2,400 mg/d."
    assert not is_fragment(item, split_sentences(item)[0], "en")


def test_a_table_row_without_full_stop_is_whole() -> None:
    text = "In the initial evaluation of patients with syncope, a resting 12-lead ECG is useful\nI B-NR\nSee Data Supplement 2."
    row = split_sentences(text)[0]
    assert quotable(text, row, "en")


def test_a_row_ending_in_level_a_is_whole_even_at_the_chunk_end() -> None:
    # zh-acute-af-ed-2024 page 14: the level "A" is not the article "a", and the last row ends the chunk.
    text = (
        "有适应证的急性缺血性脑卒中患者，需予再灌注治疗 Ⅰ A\nNVAF 合并轻度或中度急性缺血性脑卒中患者，卒中后48 h 内启动"
        "抗凝治疗 Ⅰ A房颤合并缺血性脑卒中或TIA的患者，有条件的首选NOAC Ⅰ A"
    )
    spans = split_sentences(text)
    assert len(spans) == 3 and all(quotable(text, span, "zh") for span in spans)
    english = "Combine the DASH dietary pattern with lower sodium intake, COR I, LOE A\nNext row."
    assert quotable(english, split_sentences(english)[0], "en")
    cut = "Aspirin should be taken as a\nNext row."
    assert is_fragment(cut, split_sentences(cut)[0], "en")


def test_chinese_sentences() -> None:
    text = "COPD 合并急性房颤的心室率控制首选NDCC。对于COPD合并房颤药物控制心室率无效的患者，可考虑"
    spans = split_sentences(text)
    assert not is_fragment(text, spans[0], "zh") and is_fragment(text, spans[1], "zh")


def test_chinese_recommendation_rows_are_separate_sentences() -> None:
    # zh-acute-af-ed-2024 page 6: rows end in their class and level cells, sometimes run straight into the next.
    text = (
        "控制是急性房颤治疗中稳定血流动力学状态与改善症状的基础 Ⅰ C房颤伴快速心室率且症状明显的患者，首选静脉给药控制"
        "心室率 Ⅰ B\nLVEF ≥40% 的急性房颤，首选药物 Ⅱa B\n建议（Ⅰ类推荐，C级证据）。"
    )
    assert [s.text for s in split_sentences(text)] == [
        "控制是急性房颤治疗中稳定血流动力学状态与改善症状的基础 Ⅰ C",
        "房颤伴快速心室率且症状明显的患者，首选静脉给药控制心室率 Ⅰ B",
        "LVEF ≥40% 的急性房颤，首选药物 Ⅱa B",
        "建议（Ⅰ类推荐，C级证据）。",
    ]


def test_chinese_table_rows_on_their_own_lines_are_separate_sentences() -> None:
    # zh-acute-af-ed-2024 p.6, 表8 rows as a chunk holds them (ingest/captioned_tables.py).
    text = "药物 静脉给药剂量 常用口服维持剂量 禁忌证\n琥珀酸美托洛尔 无 23.75~190 mg/ 次，1 次/d\n艾司洛尔 0.5 mg/kg，1 min 内静脉注射"
    assert [s.text for s in split_sentences(text)] == [
        "药物 静脉给药剂量 常用口服维持剂量 禁忌证", "琥珀酸美托洛尔 无 23.75~190 mg/ 次，1 次/d", "艾司洛尔 0.5 mg/kg，1 min 内静脉注射",
    ]


def test_a_bracket_left_open_marks_a_cut_or_interleaved_sentence() -> None:
    text = "有研究表明，在房颤伴射血分数降低的心衰（heart急性房颤伴快速心室率且症状[62-64]。下一句。"
    assert is_fragment(text, split_sentences(text)[0], "zh")
    listed = "Patients should 1) drink water and 2) add salt (about 6 g/d)."
    assert not is_fragment(listed, split_sentences(listed)[0], "en")


def test_reference_entries_and_captions() -> None:
    assert is_reference_entry("Shen WK, Sheldon RS, Benditt DG, et al. Circulation. 2017;136:e60–122.")
    assert is_reference_entry("Your Guide to Lowering Your Blood Pressure With DASH (http://www.nhlbi.nih.gov/dash.pdf)")
    assert not is_reference_entry("Aspirin is not recommended in women under 65 years of age.")
    # zh-acute-af-ed-2024 p.1: the author block (e-mail, DOI) glued to the first sentence of the text.
    assert is_reference_entry("吕传柱，四川省人民医院，Email:lvchuanzhu677@126.com DOI:10.3760/cma.j.issn.1671-0282.2024.08.003心房颤动是最常见的心律失常。")
    assert is_reference_entry("本指南采用ESC的政策（http://www.escardio.org/guidelines），见表1。")
    assert is_caption("Figure 3. Syncope evaluation algorithm")
    # arnett-2014 sets a table's label after its title.
    assert is_caption("The 10 Most Common Comorbidities for 4 Index Cardiovascular Conditions: 2012 Data (13) TABLE 1")
    assert not is_caption("The 10 most common comorbidities are listed in Table 1.")
    assert is_caption("表 8 急性房颤心室率控制的常用药物")
    assert is_caption("CVD indicates cardiovascular disease; DASH, Dietary Approaches to Stop Hypertension.")
    assert is_caption("HF = heart failure")
    # zh-acute-af-ed-2024 p.7: a table's key, "ABBR：its long form；", is no answer; a row saying what to do is.
    assert is_caption("HFrEF: 射血分数降低的心力衰竭；") and is_caption("INR ：国际标准化比值；")
    assert not is_caption("HFrEF：首选β受体阻滞剂；")
    assert not is_caption("This indicates that the risk of recurrence is high in older adults.")
    assert is_caption("2.2. Epidemiology and Demographics . . . . . . e45")
    assert not is_caption("Tables and figures summarise the evidence for each recommendation.")
    # A table's header row is no answer ("How are classes of recommendation defined?" quoted mosca's Table 3
    # header); its data rows are.
    assert is_caption("Class I Class IIa Strength of Recommendation")
    assert is_caption("Classification and Level of Evidence Classification")
    assert not is_caption("Hypertension 1 (81.3) 1 (85.6) 1 (84.5) 1 (89.0)")
    assert not is_caption("Cough syncope, untreated Not fit to drive")
    assert not is_caption("Statins Reduce LDL-C In Women.")
    assert is_caption("KEY WORDS: syncope, tilt-table testing, pacemaker")
    assert is_caption("AVOIDANCE OF PRIVATE DRIVING AFTER AN EPISODE OF SYNCOPE")


def test_source_markers_leave_the_answer_text() -> None:
    assert without_source_markers("Tilt testing at 70 degrees is useful (S4.5-33).") == "Tilt testing at 70 degrees is useful."
    assert without_source_markers("frailty, which add (671,681,682), and falls") == "frailty, which add, and falls"
    assert without_source_markers("静脉洋地黄类药物是首选[65-66]，胺碘酮也可用于心室率控制［71‑73］。") == "静脉洋地黄类药物是首选，胺碘酮也可用于心室率控制。"
    # Numbers that are content stay: enumerations, ranges, doses.
    for kept in ("Use (1) salt and (2) fluid.", "INR (2.0–3.0) is the target.", "Aspirin (81 mg) daily."):
        assert without_source_markers(kept) == kept
