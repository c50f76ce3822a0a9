"""What counts as a right passage: gold pages of gold documents, gold answer strings (normalised), or both."""

from __future__ import annotations

from workspace_app.evaluation.gold import Gold, GoldSpan, Passage, normalized

TEXT = "Adults who need BP lowering should consume\nno more than 2,400 mg of sodium/day."


def passage(document: str = "a.pdf", start: int = 3, end: int = 3, text: str = TEXT) -> Passage:
    return Passage(document, start, end, text)


def test_normalisation_is_nfkc_casefold_and_no_whitespace() -> None:
    assert normalized("ＩＮＲ 2.0\u3000to\n3.0 ﬁ") == "inr2.0to3.0fi"
    assert normalized("STRASSE") == normalized("straße")


def test_a_span_needs_the_document_and_an_overlapping_page() -> None:
    gold = Gold(spans=(GoldSpan("a.pdf", (4, 9)),))
    assert gold.matches(passage(start=3, end=4)) and gold.matches(passage(start=9, end=10))
    assert not gold.matches(passage(start=10, end=12))
    assert not gold.matches(passage(start=1, end=3))
    assert not gold.matches(passage(document="b.pdf", start=4, end=4))
    assert Gold(spans=(GoldSpan("a.pdf"),)).matches(passage(start=40, end=41)), "no pages: any page counts"


def test_answers_are_found_in_the_passage_after_normalisation() -> None:
    assert Gold(answers=("no more than 2,400 MG",)).matches(passage())
    assert Gold(answers=("1,500 mg", "2, 400mg of sodium")).matches(passage())
    assert not Gold(answers=("1,500 mg",)).matches(passage())


def test_with_documents_and_answers_both_must_hold() -> None:
    gold = Gold(spans=(GoldSpan("a.pdf", (3,)),), answers=("2,400 mg",))
    assert gold.matches(passage())
    assert not gold.matches(passage(document="b.pdf"))
    assert not gold.matches(passage(text="Sodium intake should be reduced."))
    assert not Gold().matches(passage()), "no gold: nothing is right"


def test_every_document_must_be_cited_on_a_gold_page() -> None:
    gold = Gold(spans=(GoldSpan("a.pdf", (3,)), GoldSpan("b.pdf", (7,))))
    assert gold.cites_every_document([passage(), passage(document="b.pdf", start=6, end=7)])
    assert not gold.cites_every_document([passage(), passage(document="b.pdf", start=8, end=8)])
    assert not gold.cites_every_document([passage()])
    assert not Gold().cites_every_document([passage()])
