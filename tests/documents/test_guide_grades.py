"""Key recommendations of source guides, read the way the guidelines print their grades: an ACC/AHA table with
numbered classes (ommen-2024-hcm) and a Chinese consensus graded by GRADE (zh-hfpef-consensus-2023), ingested for
real; and the statements a guide shows, each with its own class and level."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.documents.guide import graded_statements, key_recommendations
from workspace_app.models.documents import Chunk
from workspace_app.text.grades import find_recommendation

# The vocabulary a guide's grades are written in, whatever the PDF printed ("2a", "Ⅱa", "强", "中").
CLASSES = {"I", "IIa", "IIb", "III", "III: No Benefit", "III: Harm", "Strong", "Conditional", "GPS"}
LEVELS = {"A", "B", "C", "D", "B-R", "B-NR", "C-LD", "C-EO", None}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Any:
    made = build(tmp_path_factory.mktemp("guide-grades") / "data")
    workspace = made.workspaces.create("Grades")
    # ommen p.13-16: four recommendation tables (COR "1"/"2a"); zh-hfpef p.10-11: statements 8-11 with their
    # "推荐强度：强  证据质量：A" lines.
    for name, first, last in (("ommen-2024-hcm.pdf", 13, 16), ("zh-hfpef-consensus-2023.pdf", 10, 11)):
        assert made.documents.ingest(workspace.id, excerpt(name, first, last)).status == "ready"
    return made


@pytest.mark.parametrize("stem", ["ommen", "zh-hfpef"])
def test_a_guide_of_a_graded_guideline_has_key_recommendations(service: Any, stem: str) -> None:
    document = next(d for d in service.documents.list("Grades") if d.name.startswith(stem))
    guide = service.guides.guides("Grades", [document.id])[document.id]
    assert guide.recommendations, stem
    chunks = service.catalog.get_chunks(service.catalog.document_chunk_ids(document.id)).values()
    flat = " ".join(" ".join(c.text.split()) for c in chunks)
    for recommendation in guide.recommendations:
        assert recommendation.recommendation_class in CLASSES and recommendation.evidence_level in LEVELS
        # The statement as printed, without its cells or grading line: the grade is shown beside it.
        assert find_recommendation(recommendation.text).recommendation_class is None, recommendation.text
        assert " ".join(recommendation.text.split())[:40] in flat


def test_the_hcm_guide_grades_each_statement_with_its_own_row(service: Any) -> None:
    ommen = next(d for d in service.documents.list("Grades") if d.name.startswith("ommen"))
    guide = service.guides.guides("Grades", [ommen.id])[ommen.id]
    graded = [(r.text, (r.recommendation_class, r.evidence_level)) for r in guide.recommendations]

    def grade_of(start: str) -> tuple[str | None, str | None] | None:
        return next((grade for text, grade in graded if text.startswith(start)), None)

    # The rows "1 | B-NR" and "1 | C-LD" of p.13 (the cells stand left of the statement).
    assert grade_of("For patients with HCM or at risk for HCM, shared decision-making") == ("I", "B-NR"), graded
    assert grade_of("In patients with HCM in whom SRT is indicated") == ("I", "C-LD"), graded


HFPEF = (  # zh-hfpef-consensus-2023 p.10, as a chunk reads it (Chinese lines run on)
    "陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。首选袢利尿剂，对袢利尿剂治疗效果不佳的患者可加用噻嗪类利尿剂，"
    "合并低钠血症的患者推荐使用托伐普坦。推荐强度：强  证据质量：A  证据概述：鉴于专门针对HFpEF 患者使用利尿治疗的临床研究"
    "极少，共识制定工作组对相关指南进行了回顾。推荐说明：结合我国以及欧美最新心力衰竭诊治指南中的推荐意见，与HFrEF 类似，"
    "利尿剂缓解HFpEF 患者充血、水肿症状体征的疗效明确。"
)
OMMEN = (  # ommen-2024-hcm p.13, as a chunk reads it: each row's cells end its last line
    "COR LOE RECOMMENDATIONS\n"
    "1. In patients with HCM in whom SRT is indicated, the procedure should be performed at experienced\n"
    "centers (comprehensive or primary HCM centers) with demonstrated excellence in clinical outcomes for these "
    "procedures (Tables 4 and 5).1-3 1 C-LD\n"
    "2. In patients with HCM, consultation with or referral to a comprehensive or primary HCM center is\n"
    "reasonable to aid in complex disease-related management decisions (Table 4).4-14 2a C-LD"
)


def test_a_statement_is_shown_once_with_its_grade_and_without_its_grading() -> None:
    assert graded_statements(HFPEF) == [("推荐有液体潴留的患者使用利尿剂以减轻症状和体征。", find_recommendation("推荐强度：强 证据质量：A"))]
    rows = graded_statements(OMMEN)
    assert [(grade.recommendation_class, grade.evidence_level) for _, grade in rows] == [("I", "C-LD"), ("IIa", "C-LD")]
    assert rows[0][0].startswith("In patients with HCM in whom SRT is indicated")
    assert rows[1][0].endswith("management decisions (Table 4).4-14")


def test_key_recommendations_fill_up_from_a_document_of_one_section() -> None:
    # A consensus whose statements all sit in one section still lists more than one.
    chunks = [
        Chunk("c0", "d", 0, HFPEF, "5.1 HFpEF 诊断相关临床问题", 10, 10, 200, recommendation_class="Strong",
              evidence_level="A"),
        Chunk("c1", "d", 1, "陈述11：可考虑使用盐皮质激素受体拮抗剂（MRA）以降低症状性HFpEF 患者心力衰竭住院风险。"
              "推荐强度：条件  证据质量:B", "5.1 HFpEF 诊断相关临床问题", 11, 11, 60,
              recommendation_class="Conditional", evidence_level="B"),
    ]
    found = key_recommendations(chunks)
    assert [(r.recommendation_class, r.evidence_level) for r in found] == [("Strong", "A"), ("Conditional", "B")]
    assert found[1].text.startswith("可考虑使用盐皮质激素受体拮抗剂")
