"""Class of recommendation and level of evidence: on texts as the real guidelines print them, and on ingested chunks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from workspace_app.text.grades import find_recommendation, grading_in

# Each text is copied from a chunk or from the page text of the named guideline.
STATED = [
    pytest.param(  # shen-2017 p.11, recommendation table: text cell, then "COR LOE" cells
        "COR LOE RECOMMENDATION\nIn the initial evaluation of patients with syncope, a resting 12-lead "
        "electrocardiogram (ECG) is useful (76).\nI B-NR\nSee Online Data Supplement 2.",
        "I", "B-NR", id="acc-table-I-B-NR",
    ),
    pytest.param(  # shen-2017 p.11
        "Use of risk stratification scores may be reasonable in the management of patients with syncope\n"
        "IIb B-NR\n(67,68,72,73,75,87,89,100,101).",
        "IIb", "B-NR", id="acc-table-IIb-B-NR",
    ),
    pytest.param(  # shen-2017, EPS in an affected family member
        "larization pattern in the affected family member (358,359).\nIII: Harm\nB-NR\nEPS should not",
        "III: Harm", "B-NR", id="acc-table-III-harm",
    ),
    pytest.param(  # mosca-2011 p.10
        "Women should be advised not to smoke and to avoid environmental tobacco smoke. Provide counseling at each "
        "encounter, nicotine replacement, and other pharmacotherapy as indicated in conjunction with a behavioral "
        "program or formal smoking cessation program (Class I; Level of Evidence B).",
        "I", "B", id="prose-class-I-level-B",
    ),
    pytest.param(  # mosca-2011 p.3
        "Hormone therapy and selective estrogen-receptor modulators (SERMs) should not be used for the primary or "
        "secondary prevention of CVD (Class III, Level of Evidence A).",
        "III", "A", id="prose-comma",
    ),
    pytest.param(  # mosca-2011 p.10
        "Consumption of omega-3 fatty acids in the form of fish or in capsule form (e.g., EPA 1800 mg/d) may be "
        "considered in "
        "women with hypercholesterolemia and/or hypertriglyceridemia for primary and secondary prevention "
        "(Class IIb; Level of Evidence B).",
        "IIb", "B", id="prose-IIb",
    ),
    pytest.param(  # tracy-2012
        "have ischemic heart disease, are in sinus rhythm, and have a LBBB with a QRS duration \x01150 ms "
        "(Class IIb; LOE: C) (546,547)",
        "IIb", "C", id="prose-LOE-colon",
    ),
    pytest.param(  # zh-acute-af-ed-2024 p.2, page text of a recommendation table row
        "推荐意见\n推荐级别\n证据级别\n急性房颤应首先重点评估患者的血流动力学与器官功能状态，必要时给予相应\n支持治疗\nⅠ\nC",
        "I", "C", id="zh-table-cells",
    ),
    pytest.param(  # zh-acute-af-ed-2024 p.2, the same kind of row as a chunk reads it
        "识别与评估急性房颤的病因或诱因是管理房颤的重要内容推荐级别Ⅰ证据级别C",
        "I", "C", id="zh-table-chunk",
    ),
    pytest.param(  # zh-acute-af-ed-2024 p.2, a chunk where both headers come before the cells
        "急性房颤应首先重点评估患者的血流动力学与器官功能状态，必要时给予相应支持治疗推荐级别证据级别Ⅰ C",
        "I", "C", id="zh-table-headers-first",
    ),
    pytest.param(  # eckel-2013-lifestyle p.15, the grading line under a recommendation
        "NHLBI Grade: A (strong); ACC/AHA COR: I, LOE: A", "I", "A", id="prose-COR-colon",
    ),
    pytest.param("推荐使用NOAC（Ⅱa类推荐，B级证据）", "IIa", "B", id="zh-class-and-level-words"),
    pytest.param("首选静脉给药控制心室率（Ⅰ，A）", "I", "A", id="zh-pair"),
    pytest.param(  # zh-dapt-chd-consensus-2021, figure legend
        "bid为每天2次；绿色箭头为Ⅰ类推荐，黄色箭头为Ⅱb类推荐", "I", None, id="zh-class-only",
    ),
    # ACC/AHA tables since 2024 number their classes: 1, 2a, 2b, 3: No Benefit, 3: Harm.
    pytest.param("1\nB-NR", "I", "B-NR", id="acc-numbered-cells"),  # ommen-2024 p.13, the page text of a row's cells
    pytest.param(  # ommen-2024 p.13, a row as a chunk reads it: the cells end the statement's last line
        "2. In patients with HCM, consultation with or referral to a comprehensive or primary HCM center is\n"
        "reasonable to aid in complex disease-related management decisions (Table 4).4-14 2a C-LD",
        "IIa", "C-LD", id="acc-numbered-row-end",
    ),
    pytest.param("3: No benefit\nB-NR", "III: No Benefit", "B-NR", id="acc-numbered-no-benefit"),
    pytest.param("3: Harm C-EO", "III: Harm", "C-EO", id="acc-numbered-harm"),
    # zh-hfpef-consensus-2023 grades by GRADE: strength 强 / 条件 / GPS, quality A-D.
    pytest.param(  # zh-hfpef-consensus-2023 p.6, the grading line under statement 2
        "但上述诊断阈值的灵敏度和特异度均有限，必须综合其他临床特征解读。\n推荐强度：强  证据质量：B  \n证据概述：共识制定工作组",
        "Strong", "B", id="zh-grade-strength-and-quality",
    ),
    pytest.param(  # zh-hfpef-consensus-2023 p.11, an ASCII colon; Chinese text runs on after the letter in a chunk
        "在启动治疗和随访时密切监测血钾、肾功能。推荐强度：条件  证据质量:B证据概述：共识制定工作组",
        "Conditional", "B", id="zh-grade-conditional",
    ),
    pytest.param("推荐强度：GPS", "GPS", None, id="zh-grade-good-practice"),  # zh-hfpef-consensus-2023 p.6
    pytest.param("推荐强度：强  证据质量：中", "Strong", "B", id="zh-grade-quality-word"),
    pytest.param(  # zh-hfpef-consensus-2023 p.5, 表3 as a row reads: statement, strength, quality
        "对于疑似HFpEF，血清利钠肽水平（BNP 或NT-proBNP）有助于HFpEF 诊断 强 B", "Strong", "B", id="zh-grade-table-row",
    ),
    pytest.param(  # zh-hfpef-consensus-2023 p.5, a good practice statement's row has no quality
        "推荐评估潜在的病因、危险因素与合并症，尤其需要排查特定病因 GPS -", "GPS", None, id="zh-grade-table-gps",
    ),
    pytest.param(  # zh-dapt-chd-consensus-2021 p.15, a table header read between two rows
        "与OAC合用时，P2Y12受体抑制剂选择氯吡格雷是合理的推荐级别Ⅰ证据水平A建议接受冠状动脉支架置入的患者",
        "I", "A", id="zh-labels-run-on",
    ),
    pytest.param("（推荐级别Ⅱa，证据水平B）", "IIa", "B", id="zh-labels-in-brackets"),
    pytest.param(  # tracy-2012 p.11: statements listed under a class line, each ending with its level
        "CLASS IIa\n1. Permanent pacemaker implantation is reasonable for persistent third-degree AV block with an "
        "escape rate greater than 40 bpm in asymptomatic adult patients without cardiomegaly. (Level of Evidence: C) "
        "(59,63,64,76,82,85)",
        "IIa", "C", id="prose-level-under-class-line",
    ),
]


@pytest.mark.parametrize(("text", "klass", "level"), STATED)
def test_class_and_level_are_read(text: str, klass: str | None, level: str | None) -> None:
    found = find_recommendation(text)
    assert (found.recommendation_class, found.evidence_level) == (klass, level)


NOT_STATED = [
    pytest.param(  # arnett-2014 p.1 letter-spaced journal name: "...R I C A N..." is not "Class I, Level C"
        "J O U R N A L O F T H E A M E R I C A N C O L L E G E O F C A R D I O L O G Y\n"
        "ª 2 0 1 4 B Y T H E A M E R I C A N H E A R T A S S O C I A T I O N , I N C .",
        id="letter-spaced-journal-name",
    ),
    pytest.param(
        "CPGs are essential tools for optimizing care for patients with cardiovascular conditions.", id="prose",
    ),
    pytest.param("Sarasin (74) 2003\n175\n30 (17%)\nInpatient arrhythmia Yes", id="table-numbers"),
    pytest.param("阵发性房颤（paroxysmal AF）：指持续时间<7 d 的房颤，常≤48 h，可自行终止或干预后终止", id="zh-prose"),
    pytest.param(  # tracy-2012 p.4, the methods: a list of classes and levels defines them, it grades nothing
        "†For comparative effectiveness recommendations (Class I and IIa; Level of Evidence A and B only), studies",
        id="prose-list-of-grades",
    ),
    pytest.param("推荐等级及证据水平说明分别见表1和2。", id="zh-labels-without-grades"),  # zh-dapt-chd-consensus-2021 p.2
    pytest.param("In stage 1 the patient is followed up yearly; in stage 2a every 6 months.", id="numbers-in-prose"),
]


@pytest.mark.parametrize("text", NOT_STATED)
def test_text_without_a_recommendation_has_neither(text: str) -> None:
    found = find_recommendation(text)
    assert (found.recommendation_class, found.evidence_level) == (None, None)


@pytest.fixture(scope="module")
def syncope_chunks(
    tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]
) -> Iterator[list[Any]]:
    """Stored chunks of pages 10-12 of the 2017 syncope guideline (three recommendation tables)."""
    service = build(tmp_path_factory.mktemp("recommendations") / "data")
    service.workspaces.create("rec")
    report = service.documents.ingest("rec", excerpt("shen-2017-syncope.pdf", 10, 12), "shen-p10-12.pdf")
    assert report.status == "ready", report
    ids = service.catalog.document_chunk_ids(report.document_id)
    found = service.catalog.get_chunks(ids)
    yield [found[chunk_id] for chunk_id in ids]


def test_ingested_recommendation_chunks_carry_class_and_level(syncope_chunks: list[Any]) -> None:
    tagged = [c for c in syncope_chunks if c.recommendation_class]
    assert len(tagged) >= 3
    assert {(c.recommendation_class, c.evidence_level) for c in tagged} >= {("I", "B-NR"), ("IIb", "B-NR")}
    untagged = [c for c in syncope_chunks if "Older age (>60 y)" in c.text]
    assert untagged and all(c.recommendation_class is None for c in untagged)


@pytest.mark.parametrize(
    ("statement", "klass", "level"),
    [
        ("a resting 12-lead electrocardiogram (ECG) is useful", "I", "B-NR"),
        ("Evaluation of the cause and assessment for the short- and long-term morbidity", "I", "B-NR"),
        ("Use of risk stratification scores may be reasonable", "IIb", "B-NR"),
        ("A detailed history and physical examination should be performed in patients with syncope", "I", "B-NR"),
    ],
)
def test_a_recommendation_and_its_class_share_a_chunk(
    syncope_chunks: list[Any], statement: str, klass: str, level: str
) -> None:
    holding = [c for c in syncope_chunks if statement in " ".join(c.text.split())]
    assert holding, statement
    assert any((c.recommendation_class, c.evidence_level) == (klass, level) for c in holding), [
        (c.recommendation_class, c.evidence_level, c.text[:80]) for c in holding
    ]


def test_a_grading_line_under_a_statement_belongs_to_it() -> None:
    # eckel-2013-lifestyle p.15: the statement, then its grading on a line of its own, then the rationale.
    text = (
        "Advise adults who would benefit from BP lowering to: a. Combine the DASH dietary pattern with lower\n"
        "sodium intake.\nNHLBI Grade: A (strong); ACC/AHA COR: I, LOE: A\nRationale: Both a healthy dietary pattern."
    )
    quote = "Advise adults who would benefit from BP lowering to: a. Combine the DASH dietary pattern with lower sodium intake."
    found = grading_in(text, 0, quote)
    assert (found.recommendation_class, found.evidence_level) == ("I", "A")
    prose = "Sodium should be reduced.\nThe class of this recommendation was debated at length by the panel."
    assert grading_in(prose, 0, "Sodium should be reduced.").recommendation_class is None


# Citations read the grading at their quote (`grading_in`): a recommendation's own, also for a sentence before its
# last, and never the next recommendation's.
HFPEF_STATEMENTS = (  # zh-hfpef-consensus-2023 p.10, statements 8 and 9 as a chunk reads them (Chinese runs on)
    "陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。首选袢利尿剂，对袢利尿剂治疗效果不佳的患者可加用噻嗪类利尿剂，"
    "合并低钠血症的患者推荐使用托伐普坦。推荐强度：强  证据质量：A  证据概述：鉴于专门针对HFpEF 患者使用利尿治疗的临床研究"
    "极少。推荐说明：结合我国以及欧美最新心力衰竭诊治指南中的推荐意见，利尿剂缓解HFpEF 患者充血、水肿症状体征的疗效明确。"
    "陈述9：推荐使用钠- 葡萄糖共转运蛋白2抑制剂（SGLT2i）降低心力衰竭住院或心血管死亡复合终点事件风险。"
    "推荐强度：强  证据质量：B"
)


@pytest.mark.parametrize(
    ("quote", "klass", "level"),
    [
        ("陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。", "Strong", "A"),
        ("合并低钠血症的患者推荐使用托伐普坦。", "Strong", "A"),
        ("利尿剂缓解HFpEF 患者充血、水肿症状体征的疗效明确。", None, None),  # the explanation, not statement 9
        ("陈述9：推荐使用钠- 葡萄糖共转运蛋白2抑制剂（SGLT2i）降低心力衰竭住院或心血管死亡复合终点事件风险。", "Strong", "B"),
    ],
)
def test_a_chinese_statement_is_graded_by_the_line_under_it(quote: str, klass: str | None, level: str | None) -> None:
    found = grading_in(HFPEF_STATEMENTS, HFPEF_STATEMENTS.index(quote), quote)
    assert (found.recommendation_class, found.evidence_level) == (klass, level)


def test_an_acc_row_grades_each_of_its_sentences_and_not_the_text_around_it() -> None:
    # grundy-2018 p.17 as a chunk reads it: the cells end each row's last line.
    text = (
        "COR LOE RECOMMENDATIONS\n"
        "1. In adults 40 to 75 years of age with diabetes mellitus, regardless of estimated 10-year ASCVD risk,\n"
        "moderate-intensity statin therapy is indicated (S4.3-1—S4.3-9). I A\n"
        "2. In adults 40 to 75 years of age with diabetes mellitus and an LDL-C level of 70 to 189 mg/dL (1.7 to 4.8\n"
        "mmol/L), it is reasonable to assess the 10-year risk of a first ASCVD event by using the race and sex-\n"
        "specific PCE to help stratify ASCVD risk (S4.3-10, S4.3-11). IIa B-NR\n"
        "Synopsis\nDiabetes mellitus increases ASCVD risk. Statins are recommended for such patients."
    )
    first = "1. In adults 40 to 75 years of age with diabetes mellitus, regardless of estimated 10-year ASCVD risk,"
    second = "2. In adults 40 to 75 years of age with diabetes mellitus and an LDL-C level of 70 to 189 mg/dL"
    synopsis = "Statins are recommended for such patients."
    assert grading_in(text, text.index(first), first) == find_recommendation("I A")
    assert grading_in(text, text.index(second), second) == find_recommendation("IIa B-NR")
    assert grading_in(text, text.index(synopsis), synopsis).recommendation_class is None


def test_a_chinese_table_row_does_not_lend_its_grade_to_the_line_above() -> None:
    # zh-hfpef-consensus-2023 p.5, 表3: a group header, then rows that end in their strength and quality.
    text = "HFpEF 诊断相关临床问题\n当前或既往有心力衰竭症状是HFpEF 诊断的必要条件，非充分条件，HFpEF 和HFrEF 临床表现相似 GPS -"
    assert grading_in(text, 0, "HFpEF 诊断相关临床问题").recommendation_class is None
    row = text.split("\n")[1]
    assert grading_in(text, text.index(row), row).recommendation_class == "GPS"


def test_statements_under_a_class_line_take_their_own_level() -> None:
    # tracy-2012 p.22: the level closes a statement of two sentences; the next statement has another.
    text = (
        "CLASS I\n1. Permanent pacemaker implantation is indicated for advanced second- or third-degree AV block "
        "associated with symptomatic bradycardia. (Level of Evidence: C) 2. Permanent pacemaker implantation is "
        "indicated for SND with correlation of symptoms during age-inappropriate bradycardia. The definition of "
        "bradycardia varies with the patient’s age and expected heart rate. (Level of Evidence: B) (53,86,253,257)"
    )
    second = "Permanent pacemaker implantation is indicated for SND with correlation of symptoms"
    found = grading_in(text, text.index(second), second + " during age-inappropriate bradycardia.")
    assert (found.recommendation_class, found.evidence_level) == ("I", "B")
    first = "Permanent pacemaker implantation is indicated for advanced second- or third-degree AV block"
    assert grading_in(text, text.index(first), first).evidence_level == "C"


def test_the_text_supporting_a_row_takes_no_grade_from_the_next_row() -> None:
    # shen-2017 p.33 as a chunk reads it: a row, its supportive text, then (in the next chunk) the next row's statement
    # and cells. The supportive text is not graded, neither by its own row nor by the next.
    text = (
        "Beta blockers might be reasonable in patients 42 years of age or older with recurrent VVS (390–393). IIb B-NR\n"
        "See Online Data Supplements 25 and 26.\n"
        "RCTs on the efficacy and effectiveness of beta blockers for the prevention of syncope have been negative "
        "(64,390–393). However, in a meta-analysis of a prespecified, prestratified substudy of POST I and a large "
        "observational study, an age-dependent benefit of beta blockers among patients ≥42 years of age was found.\n"
        "In patients with recurrent VVS, a selective serotonin reuptake inhibitor might be reasonable (393,401,402). "
        "IIb C-LD"
    )
    statement = "Beta blockers might be reasonable in patients 42 years of age or older with recurrent VVS (390–393)."
    assert grading_in(text, 0, statement) == find_recommendation("IIb B-NR")
    negative = "RCTs on the efficacy and effectiveness of beta blockers for the prevention of syncope have been negative"
    for supporting in (negative + " (64,390–393).", "However, in a meta-analysis of a prespecified"):
        assert grading_in(text, text.index(supporting), supporting).recommendation_class is None


def test_a_row_running_on_into_the_next_is_graded_by_its_own_cells() -> None:
    # zh-acute-af-ed-2024 p.9 as a chunk reads it: the rows run on, each ending in its cells ("I B" then "Ⅰ A").
    text = (
        "除非紧急抢救，房颤持续时间不明或≥48 h，在复律前应充分抗凝3 周，或根据情况使用负荷量抗凝药物后转复；复律后，所有"
        "患者抗凝治疗4 周 I B适合口服抗凝药的NVAF 患者，推荐使用NOAC Ⅰ A"
    )
    quote = "除非紧急抢救，房颤持续时间不明或≥48 h，在复律前应充分抗凝3 周，或根据情况使用负荷量抗凝药物后转复；"
    assert grading_in(text, 0, quote) == find_recommendation("I B")
    second = "适合口服抗凝药的NVAF 患者，推荐使用NOAC"
    assert grading_in(text, text.index(second), second) == find_recommendation("Ⅰ A")


def test_a_row_quoted_with_its_cells_keeps_them_whatever_follows() -> None:
    # zh-acute-af-ed-2024 p.9: a row quoted whole, then the next row with other cells.
    text = "急性房颤患者CHA2DS2-VASc-60 评分血栓栓塞风险高、或拟复律的患者均应接受抗凝药物治疗 I A\n新诊断房颤但未抗凝治疗的患者 I B"
    quote = text.split("\n")[0]
    assert grading_in(text, 0, quote) == find_recommendation("I A")
