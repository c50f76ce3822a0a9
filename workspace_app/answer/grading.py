"""The class of recommendation and level of evidence stated with a quoted sentence.

ACC/AHA recommendation tables put the grading in the cell after the sentence ("I B-NR" on the next line);
older guidelines write it inside the sentence ("(Class I; Level of Evidence A)"). Only what is stated at the
quote counts: a chunk may hold several recommendations with different gradings.
"""

from __future__ import annotations

from workspace_app.models.answers import EvidenceBlock
from workspace_app.ingest.recommendations import Recommendation, find_recommendation


def grading_window(text: str, start: int, quote: str) -> str:
    """The quote and the short line after it, if any."""
    end = start + len(quote) if start >= 0 else 0
    following = text[end : end + 40].lstrip().split("\n")[0]
    return quote + ("\n" + following if len(following) <= 20 else "")


def grading_in(text: str, start: int, quote: str) -> Recommendation:
    """The grading stated at a quote starting at `start` in `text`."""
    return find_recommendation(grading_window(text, start, quote))


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
