"""What counts as a right passage: on a gold page of a gold document, and/or holding one of the gold answers."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass


def normalized(text: str) -> str:
    """Text as gold answers are compared: NFKC, casefolded, every whitespace character removed."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class Passage:
    """A cited or retrieved passage as the gold judges it: its document's name, its pages and its full text."""

    document: str
    page_start: int
    page_end: int
    text: str


@dataclass(frozen=True)
class GoldSpan:
    """A gold document and the 1-based pages of it that state the answer (none: any page of it counts)."""

    document: str
    pages: tuple[int, ...] = ()

    def covers(self, passage: Passage) -> bool:
        """Whether the passage is in this document and its pages include a gold page."""
        if passage.document != self.document:
            return False
        return not self.pages or any(passage.page_start <= page <= passage.page_end for page in self.pages)


@dataclass(frozen=True)
class Gold:
    """A question's gold: documents with pages (`spans`), answer strings (`answers`), or both (then both must
    hold for a passage to be right)."""

    spans: tuple[GoldSpan, ...] = ()
    answers: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether there is nothing to judge a passage by."""
        return not self.spans and not self.answers

    def matches(self, passage: Passage) -> bool:
        """Whether the passage is right: on a gold span (when spans are given) and holding a gold answer (when
        answers are given)."""
        if self.empty:
            return False
        on_span = not self.spans or any(span.covers(passage) for span in self.spans)
        return on_span and self._holds_answer(passage)

    def cites_every_document(self, passages: Iterable[Passage]) -> bool:
        """Whether every gold document has a passage on one of its gold pages (cross-document questions)."""
        cited = list(passages)
        return bool(self.spans) and all(any(span.covers(p) for p in cited) for span in self.spans)

    def _holds_answer(self, passage: Passage) -> bool:
        if not self.answers:
            return True
        text = normalized(passage.text)
        return any(normalized(answer) in text for answer in self.answers)
