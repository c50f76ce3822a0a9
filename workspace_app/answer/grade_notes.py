"""The grading note an extractive answer adds to a quoted sentence: " (Class I, LOE B-NR)", " (Strong recommendation,
LOE B)".

ACC/AHA recommendation tables put the grading in the cell after the sentence ("I B-NR" on the next line);
older guidelines write it inside the sentence ("(Class I; Level of Evidence A)"). Only what is stated at the
quote counts (the domain pack's `GradeGrammar.grading_in`), and the note is added only when the quote itself does
not already show it.
"""

from __future__ import annotations

from workspace_app.domain import GradeGrammar
from workspace_app.models.answers import EvidenceBlock


def stated_grading(block: EvidenceBlock, start: int, quote: str, language: str, grades: GradeGrammar) -> str:
    """' (Class I, LOE B-NR)' ('（Ⅰ类推荐，B级证据）' in Chinese) when the cell after the quote states a grading
    the quote itself does not show (read with the domain pack's grammar)."""
    found = grades.grading_in(block.chunk.text, start, quote)
    if not found.recommendation_class and not found.evidence_level:
        return ""
    if grades.find_recommendation(quote) == found:
        return ""
    if language == "zh":
        parts = [_zh_class(found.recommendation_class)] if found.recommendation_class else []
        parts += [f"{found.evidence_level}级证据"] if found.evidence_level else []
        return f"（{'，'.join(parts)}）"
    parts = [grades.describe_class(found.recommendation_class)] if found.recommendation_class else []
    parts += [f"LOE {found.evidence_level}"] if found.evidence_level else []
    return f" ({', '.join(parts)})"


# GRADE strengths as Chinese consensus statements print them.
_ZH_STRENGTHS = {"Strong": "强推荐", "Conditional": "条件推荐", "GPS": "专家意见和经验形成的推荐（GPS）"}


def _zh_class(value: str) -> str:
    """'IIa' -> 'Ⅱa类推荐', 'Strong' -> '强推荐'."""
    return _ZH_STRENGTHS.get(value) or f"{_roman(value)}类推荐"


def _roman(value: str) -> str:
    """'IIa' -> 'Ⅱa' (Chinese guidelines write the class with Roman numeral characters)."""
    for latin, roman in (("III", "Ⅲ"), ("II", "Ⅱ"), ("I", "Ⅰ")):
        if value.startswith(latin):
            return roman + value[len(latin):]
    return value
