"""The grading note an extractive answer adds to a quote, in the words of the grade's own system."""

from __future__ import annotations

from workspace_app.answer.grade_notes import stated_grading
from workspace_app.domain.clinical import CLINICAL
from workspace_app.models.answers import EvidenceBlock
from workspace_app.models.documents import Chunk

GRADES = CLINICAL.grades


def block(text: str) -> EvidenceBlock:
    return EvidenceBlock(1, Chunk("c0", "d", 0, text, "", 1, 1, 60), "source.pdf", 1.0, {})


def test_a_grade_strength_reads_as_a_recommendation_not_a_class() -> None:
    # zh-hfpef-consensus-2023 p.10: statement 8 and the grading line under it, as a chunk reads them.
    text = "陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。推荐强度：强  证据质量：A  证据概述：鉴于专门针对HFpEF。"
    quote = "陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。"
    assert stated_grading(block(text), 0, quote, "zh", GRADES) == "（强推荐，A级证据）"
    assert stated_grading(block(text), 0, quote, "en", GRADES) == " (Strong recommendation, LOE A)"


def test_a_numbered_class_reads_as_its_roman_numeral() -> None:
    # ommen-2024-hcm p.13: the row's cells "2a" / "C-LD" end its last line.
    text = ("In patients with HCM, consultation with or referral to a comprehensive or primary HCM center is\n"
            "reasonable to aid in complex disease-related management decisions (Table 4).4-14 2a C-LD")
    quote = "In patients with HCM, consultation with or referral to a comprehensive or primary HCM center is"
    assert stated_grading(block(text), 0, quote, "en", GRADES) == " (Class IIa, LOE C-LD)"
    assert stated_grading(block(text), 0, quote, "zh", GRADES) == "（Ⅱa类推荐，C-LD级证据）"
