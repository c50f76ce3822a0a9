"""The grading note an extractive answer adds to a quoted sentence: " (Class I, LOE B-NR)".

ACC/AHA recommendation tables put the grading in the cell after the sentence ("I B-NR" on the next line);
older guidelines write it inside the sentence ("(Class I; Level of Evidence A)"). Only what is stated at the
quote counts (`workspace_app.text.grades.grading_in`), and the note is added only when the quote itself does
not already show it.
"""

from __future__ import annotations

from workspace_app.models.answers import EvidenceBlock
from workspace_app.text.grades import find_recommendation, grading_in


def stated_grading(block: EvidenceBlock, start: int, quote: str) -> str:
    """' (Class I, LOE B-NR)' when the cell after the quote states a grading the quote itself does not show."""
    found = grading_in(block.chunk.text, start, quote)
    if not found.recommendation_class and not found.evidence_level:
        return ""
    if find_recommendation(quote) == found:
        return ""
    parts = [f"Class {found.recommendation_class}"] if found.recommendation_class else []
    parts += [f"LOE {found.evidence_level}"] if found.evidence_level else []
    return f" ({', '.join(parts)})"
