"""Drafting suggested questions from a guide: what a reader would ask, never a title fragment, the guideline's
own making, a table row, a heading fused with its text, or a subject-less question (the kinds a new user met)."""

from __future__ import annotations

import pytest

from workspace_app.documents.guide import extractive_summary, recommendation_sentence, section_headings
from workspace_app.documents.suggestions import heading_question
from workspace_app.domain.clinical_suggestions import recommendation_question
from workspace_app.models.documents import Chunk


@pytest.mark.parametrize(
    ("heading", "question"),
    [
        ("Orthostatic hypotension (OH)", "What do the sources say about orthostatic hypotension (OH)?"),
        ("AEROBIC EXERCISE TRAINING AND BP", "What do the sources say about aerobic exercise training and BP?"),
        ("CQ2—Sodium and Potassium", "What do the sources say about sodium and potassium?"),
        ("Recommendation for History and Physical Examination", "What is recommended for history and physical examination?"),
        ("症状与体征 心悸是房颤的主要症状，其他常见症状", "关于症状与体征，资料中怎么说？"),
        ("合并ACS 或经皮冠状动脉介入患者的抗栓治疗", "关于合并ACS 或经皮冠状动脉介入患者的抗栓治疗，资料中怎么说？"),
    ],
)
def test_a_section_title_becomes_a_plain_question(heading: str, question: str) -> None:
    assert heading_question(heading) == question


@pytest.mark.parametrize(
    "heading",
    [
        "Evidence Review and Evidence Review Committees", "Document Review and Approval", "Selection of Expert Panel",
        "Class of Recommendation and Level of Evidence", "Ownership/Speakers Partnership/ Personal Bureau",
        "Literature Search Yield", "撰写成员", "参 考 文 献", "Dyads (beneficiaries with ≥2 comorbidities; N=19,139,696)",
        "Ischemic Heart Disease* (N = 8,678,060)", "Rationale: Reducing saturated fat intake lowers both",
        "CQ1—Dietary Patterns and", "General Evaluation of Patients With", "OVERARCHING RECOMMENDATIONS FOR",
        "Resting ECG in Patients With Documented or", "急性心房颤动中国急诊管理指南（2024）", "Benefit",
        "Table 5. Summary of Recommendations for Lifestyle Management",  # a table's title: its rows' section
    ],
)
def test_what_no_reader_asks_about_is_not_offered(heading: str) -> None:
    assert heading_question(heading) is None


def test_a_recommendation_becomes_a_question_about_its_population_or_subject() -> None:
    assert recommendation_question(
        "For women with chronic or paroxysmal atrial fibrillation, warfarin should be used to maintain the INR."
    ) == "What is recommended for women with chronic or paroxysmal atrial fibrillation?"
    assert recommendation_question(
        "Aspirin therapy (75–325 mg/d) should be used in women with CHD unless contraindicated (Class I; Level A)."
    ) == "When is aspirin therapy recommended?", "a population after the advice is not cut out of the sentence"
    assert recommendation_question(
        "Aspirin 75–325 mg should be used in women with chronic or paroxysmal atrial fibrillation with a "
        "contraindication to warfarin."
    ) == "When is aspirin recommended?", "nor is its dose"
    assert recommendation_question(
        "Pharmacotherapy is indicated when blood pressure is ≥140/90 mm Hg.", "Blood pressure: pharmacotherapy"
    ) == "When is pharmacotherapy recommended for blood pressure?", "a bare subject gets its section's topic"
    assert recommendation_question("Acute water ingestion is recommended for temporary relief.") == (
        "When is acute water ingestion recommended?"
    )
    assert recommendation_question("非瓣膜性房颤的血栓栓塞风险评估首选CHA2DS2-VASc-60 评分 Ⅰ A") == "非瓣膜性房颤的血栓栓塞风险评估首选什么？"
    assert recommendation_question("ACS 行PCI 的房颤患者，若出血风险高于血栓风险，建议三联方案≤1 周；") == "对于ACS 行PCI 的房颤患者，推荐什么？"
    assert recommendation_question("See Online Data Supplement 1.") is None


def chunk(ordinal: int, section: str, page: int) -> Chunk:
    return Chunk(f"c{ordinal}", "d", ordinal, "Text.", section, page, page, 10)


def test_the_documents_own_title_is_not_one_of_its_sections() -> None:
    chunks = [
        chunk(0, "", 1), chunk(1, "AHA/ACC/HHS Strategies to Enhance", 1), chunk(2, "AHA/ACC/HHS Strategies to Enhance", 1),
        chunk(2, "Comorbidities in Medicare beneficiaries", 2), chunk(3, "Shared decision making", 3),
    ]
    assert section_headings(chunks) == ("Comorbidities in Medicare beneficiaries", "Shared decision making")
    assert section_headings([chunk(0, "Syncope in athletes", 4)]) == ("Syncope in athletes",)
    assert section_headings([chunk(0, "", 1), chunk(1, "Syncope in athletes", 2)]) == ("Syncope in athletes",)


def test_a_guide_shows_the_sources_text_without_its_reference_markers() -> None:
    text = ("A detailed history and physical examination should be performed in patients with syncope (58–66). "
            "急性房颤是急诊最常见问题之一，包括两方面含义[2-3]；其二是新发房颤［6‑7］。")
    chunks = [Chunk("c0", "d", 0, text, "Introduction", 2, 2, 60)]
    summary = extractive_summary(chunks)
    assert summary and "(58–66)" not in summary and "[2-3]" not in summary and "［6‑7］" not in summary
    advice = "A detailed history and physical examination should be performed in patients with syncope (58–66)."
    assert recommendation_sentence(advice) == advice.replace(" (58–66)", "")
