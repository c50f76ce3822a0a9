"""The sentences the extractive answerer weighs: how a candidate is read before it is scored."""

from __future__ import annotations

from typing import Any

from workspace_app.answer.extractive import ExtractiveAnswerer
from workspace_app.domain.clinical import CLINICAL
from workspace_app.models.answers import EvidenceBlock
from workspace_app.models.documents import Chunk
from workspace_app.text.terms import Coverage, content_terms

# A definitions table as the syncope guideline prints it: the term on one line, what it is on the next.
GLOSSARY = (
    "• Classic OH\nA sustained reduction of systolic BP of ≥20 mm Hg within 3 min of assuming upright posture.\n"
    "• Delayed OH\nA sustained reduction of systolic BP of ≥20 mm Hg that takes >3 min of upright posture to develop.\n"
)


def candidates(question: str, text: str) -> dict[str, Any]:
    chunk = Chunk("c1", "d1", 0, text, "Orthostatic hypotension", 8, 8, 60)
    block = EvidenceBlock(1, chunk, "syncope.pdf", 1.0, {})
    # Reading candidates embeds nothing; the clinical pack's grammar says which sentences are graded.
    answerer = ExtractiveAnswerer(embedder=None, grades=CLINICAL.grades, cues=CLINICAL.cues)  # type: ignore[arg-type]
    coverage = Coverage(content_terms(question, drop_question_words=True), {})
    return {c.span.text: c for c in answerer._candidates(question, [block], "en", coverage)}


def test_a_glossary_entry_is_read_with_its_term() -> None:
    found = candidates("How is delayed OH defined?", GLOSSARY)
    delayed = next(c for text, c in found.items() if "takes >3 min" in text)
    classic = next(c for text, c in found.items() if "within 3 min" in text)
    assert delayed.defining and delayed.label == "Delayed OH" and delayed.coverage > classic.coverage  # "Delayed OH: A sustained reduction …"
    assert "Delayed OH" not in delayed.span.text  # the quote stays the sentence as printed


def test_a_sentence_after_a_full_sentence_is_read_alone() -> None:
    found = candidates("How is delayed OH defined?", "Delayed OH is common in older adults. A reduction of blood pressure follows standing in many.")
    assert not next(c for text, c in found.items() if text.startswith("A reduction")).label


def test_a_statement_that_states_its_grade_is_read_as_graded() -> None:
    text = (
        "LDL-C lowering drug therapy is recommended in women with CHD (Class I; Level of Evidence A). "
        "Each recommendation was assigned both a strength of recommendation (Class I, IIa, IIb, or III) and a "
        "Level of Evidence (A, B, or C)."
    )
    strength = candidates("How strong is the recommendation for LDL-C lowering drug therapy in women with CHD?", text)
    assert next(c for t, c in strength.items() if t.startswith("LDL-C")).graded
    assert not any(c.graded for c in candidates("What is LDL-C lowering drug therapy?", text).values())
    # Asked what the grades mean, a graded statement gets no boost: it is not what is asked.
    defined = candidates("How are classes of recommendation and levels of evidence defined?", text)
    assert not any(c.graded for c in defined.values())