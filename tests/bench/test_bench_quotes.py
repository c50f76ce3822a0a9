"""The quote-quality detectors of the answer benchmark (bench/common/quotes.py): each flags its positives only."""

from __future__ import annotations

import pytest

from bench.common.quotes import (
    GLYPH_MARKER,
    answer_quality,
    dropped_glyphs,
    is_abbreviation_legend,
    is_figure_or_table_title,
    is_fragment,
    is_reference_entry,
    source_reference_markers,
    suspected_dropped_symbols,
    without_answer_markers,
)

COMPLETE = [
    "Droxidopa can be beneficial in patients with syncope due to neurogenic OH (380,468–471).",
    ("Women should be advised to engage in muscle-strengthening activities that involve all major muscle groups "
    "performed on 2 d/wk (Class I; Level of Evidence B)"),
    "β-Blockers should be used for up to 12 mo in all women after MI or ACS.",
    "hsCRP is not recommended for routine screening.",
    "e.g., brisk walking on most days of the week.",
    "血流动力学不稳定、发作时间＜48 h 的急性房颤，可直接电复律；",
    "阵发性房颤（paroxysmal AF）：指持续时间<7 d 的房颤，常≤48 h，可自行终止或干预后终止。",
    "1) a history of syncope; 2) structural heart disease",
    "The population was limited to beneficiaries enrolled in Medicare (both Parts A and B) during 2012.",
    "Aspirin can be useful (Class IIa; Level of Evidence B) and may be reasonable for women (Class IIb; LOE B).",
    "Recommendations for the initial evaluation include:",
    "OH 1 month VVS, no syncope in prior year (698) No restriction",
    "NVAF 合并轻度或中度急性缺血性脑卒中患者，卒中后48 h 内启动抗凝治疗 Ⅰ A",
    "Combine the DASH dietary pattern with lower sodium intake. COR I, LOE A",
]


@pytest.mark.parametrize("quote", [
    "Intake of trans fat has been shown to be harmful and",
    "week, lasting on average 40 minutes per session, and involving moderate- to vigorous-intensity activity.",
    "be greater for LDL-C than HDL-C, reducing saturated fat intake has a beneficial effect on the lipid profile.",
    "The effect of sodium reduction on blood pressure is larger in older adults, in blacks,",
    "moderate-",
    "洋地黄类药物（去表8 心室率控制常用药物及用法药物β 受体阻滞剂酒石酸美托洛尔2.5~5 mg",
    "B次/min）或宽松心室率控制（静息心率<110 次/min）。",
    "，是起效最快的复律药物。",
    "The recommendation applies to adults with",
])
def test_fragments_are_flagged(quote: str) -> None:
    assert is_fragment(quote)


@pytest.mark.parametrize("quote", COMPLETE)
def test_complete_sentences_list_items_and_table_rows_are_not_fragments(quote: str) -> None:
    assert not is_fragment(quote)


@pytest.mark.parametrize("quote", [
    "Shen WK, Sheldon RS, Benditt DG, et al. 2017 ACC/AHA/HRS guideline for the evaluation and management of syncope.",
    "Circulation. 2017;136:e60–122.",
    "Mosca L, Benjamin EJ, Berra K. Effectiveness-based guidelines. J Am Coll Cardiol. 2011;57(12):1404-23.",
    "doi:10.1016/j.jacc.2017.03.003",
    "Available at: http://www.nhlbi.nih.gov/guidelines. PMID: 21325087",
    "王五, 张三. 心房颤动诊治指南[J]. 中华心血管病杂志, 2020, 48(3): 123-130.",
    "Brignole M et al. Eur Heart J 2018.",
])
def test_reference_entries_are_flagged(quote: str) -> None:
    assert is_reference_entry(quote)


@pytest.mark.parametrize("quote", [
    *COMPLETE,
    "In a meta-analysis of 5 RCTs, midodrine reduced syncope recurrence by 43% (381).",
    "Class I, LOE B-NR",
    "In 2013, the ACC and AHA released 4 guidelines.",
    "近期一项基于中国社区的多中心前瞻性队列研究报告了中国社区60 岁以上人群的房颤发病率[26-28]。",
])
def test_sentences_are_not_reference_entries(quote: str) -> None:
    assert not is_reference_entry(quote)


@pytest.mark.parametrize("quote", [
    "Figure 3. Algorithm for the evaluation of syncope",
    "Table 2 Recommendations for Reduction of Sodium Intake",
    "TABLE 5: Dietary patterns",
    "Avoidance of Private Driving After an Episode of Syncope: Suggested Symptom-Free Waiting Times TABLE 10",
    "表8 心室率控制常用药物及用法",
])
def test_figure_and_table_titles_are_flagged(quote: str) -> None:
    assert is_figure_or_table_title(quote)


@pytest.mark.parametrize("quote", [
    *COMPLETE,
    "Table 2 shows the recommendations for sodium intake in adults.",
    "The results are summarized in Table 10.",
])
def test_sentences_are_not_titles(quote: str) -> None:
    assert not is_figure_or_table_title(quote)


@pytest.mark.parametrize("quote", [
    "CVD indicates cardiovascular disease; DASH, Dietary Approaches to Stop Hypertension; CHD, coronary heart disease;",
    "AVB, atrioventricular block; BBB, bundle-branch block; BP, blood pressure; ECG, electrocardiogram.",
    "POTS ¼ postural tachycardia syndrome",
    "注：LVEF ：左心室射血分数",
    "HFrEF：射血分数降低的心力衰竭；",
])
def test_abbreviation_legends_are_flagged(quote: str) -> None:
    assert is_abbreviation_legend(quote)


@pytest.mark.parametrize("quote", [*COMPLETE, "HFrEF：首选β受体阻滞剂；", "CHA2DS2-VASc：评分≥2分的男性推荐抗凝"])
def test_sentences_are_not_legends(quote: str) -> None:
    assert not is_abbreviation_legend(quote)


def test_our_trailing_markers_are_removed_and_the_sources_kept() -> None:
    text = ("A resting ECG is useful (76). (Class I, LOE B-NR) [1]\n\n"
            "TEE 可准确评价心脏形态[26-28]，有益于指导治疗[12][2]。\n\n"
            "Tilt-table testing can be useful [3] (not verified against the cited source)")
    stripped = without_answer_markers(text, 3)
    assert "[1]" not in stripped and "[2]" not in stripped and "[3]" not in stripped
    assert "[12]" in stripped and "[26-28]" in stripped
    assert source_reference_markers(stripped) == ["(76)", "[26-28]", "[12]"]


@pytest.mark.parametrize("text, expected", [
    ("is harmful (S4.5-33).", ["(S4.5-33)"]),
    ("is harmful (S4.5-33, S4.5-34).", ["(S4.5-33, S4.5-34)"]),
    ("指南推荐［6‑7］。", ["［6‑7］"]),
    ("as shown [12,13] before", ["[12,13]"]),
    ("have been negative (64,390–393).", ["(64,390–393)"]),
    ("in women.¹²", ["¹²"]),
])
def test_source_reference_markers_are_found(text: str, expected: list[str]) -> None:
    assert source_reference_markers(text) == expected


@pytest.mark.parametrize("text", [
    "Three steps: (1) history, (2) examination.",
    "a body surface area of 1.73 m² (68%) in 2010 (n=30)",
    "Aspirin (81 mg daily or 100 mg every other day) (Class IIa, LOE B)",
])
def test_numbers_in_prose_are_not_source_markers(text: str) -> None:
    assert source_reference_markers(text) == []


def test_dropped_glyphs() -> None:
    assert dropped_glyphs(f"LDL-C \x03100 mg/dL, \ufffd-blockers, LVEF {GLYPH_MARKER}40%") == ["\x03", "\ufffd", GLYPH_MARKER]
    assert dropped_glyphs("LDL-C <100 mg/dL\n\tβ-blockers ≤40%") == []


def test_suspected_dropped_symbols() -> None:
    assert len(suspected_dropped_symbols("low risk for stroke ( 1%/y or high risk). -Blockers should be used")) == 2
    assert suspected_dropped_symbols("low risk (<1%/y). β-Blockers and non-HDL-C, moderate- to vigorous-intensity") == []


def test_answer_quality_counts_one_answer() -> None:
    found = answer_quality(
        "Intake of trans fat has been shown to be harmful and [1]\n\nShen WK, Sheldon RS, et al. (S4.5-33) [2]",
        ["Intake of trans fat has been shown to be harmful and", "Shen WK, Sheldon RS, et al. (S4.5-33)"],
    )
    assert found["quotes"] == 2
    assert [f["flags"] for f in found["flagged"]] == [["fragment"], ["reference entry"]]
    assert found["source markers"] == ["(S4.5-33)"] and found["dropped glyphs"] == []


def test_a_quote_shown_in_the_answer_is_not_counted_twice() -> None:
    quote = "Warfarin unless at low risk for stroke ( 1%/y or high risk of bleeding) (Class I; Level of Evidence A)."
    answer = "Warfarin unless at low risk for stroke ( 1%/y or high risk of bleeding) (Class I; Level of Evidence A) [1]."
    assert len(answer_quality(answer, [quote])["suspected dropped symbols"]) == 1
    assert len(answer_quality("Another sentence [1].", [quote])["suspected dropped symbols"]) == 1
