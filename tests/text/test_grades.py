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
