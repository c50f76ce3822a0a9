"""One question's outcome in an evaluation run: plain data the metrics are computed from, one JSON line each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EvalResult:
    """How the workspace did on one question: refused or not, whether its citations and search hits were right.

    The judged fields (`first_right`, `any_right`, `search_hit1`, `search_hit5`) are None on unanswerable
    questions; `all_cited` is None except on cross-document ones. `support` is the answer's support level when
    the answerer gives one (e.g. "confident"), else None."""

    id: str
    question: str
    lang: str
    answerable: bool
    refused: bool
    first_right: bool | None
    any_right: bool | None
    search_hit1: bool | None
    search_hit5: bool | None
    first_document: str | None
    first_pages: tuple[int, int] | None
    confidence: float
    elapsed_ms: float
    split: str | None = None
    kind: str | None = None
    all_cited: bool | None = None
    support: str | None = None

    @property
    def right(self) -> bool:
        """Whether the answer is right as a whole: a refusal for an unanswerable question; for a cross-document
        one every document cited on a gold page; else the first citation right."""
        if not self.answerable:
            return self.refused
        if self.refused:
            return False
        return bool(self.all_cited) if self.all_cited is not None else bool(self.first_right)

    def to_json(self) -> dict[str, Any]:
        """The row's JSON shape (`workspace-app eval --rows`)."""
        return {
            "id": self.id, "question": self.question, "lang": self.lang, "answerable": self.answerable,
            "refused": self.refused, "right": self.right, "first_right": self.first_right,
            "any_right": self.any_right, "all_cited": self.all_cited, "search_hit1": self.search_hit1,
            "search_hit5": self.search_hit5, "first_document": self.first_document,
            "first_pages": list(self.first_pages) if self.first_pages else None,
            "confidence": round(self.confidence, 4), "support": self.support,
            "elapsed_ms": round(self.elapsed_ms, 1), "split": self.split, "kind": self.kind,
        }
