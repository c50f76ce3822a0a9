"""The evaluation run: each question asked and searched in a workspace, its citations and hits judged by the gold."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from workspace_app.evaluation.gold import Passage
from workspace_app.evaluation.questions import EvalQuestion
from workspace_app.evaluation.results import EvalResult
from workspace_app.models.answers import Answer, Citation

if TYPE_CHECKING:
    from workspace_app.app import App

SEARCH_TOP_K = 5  # hit@1 and hit@5 are read from one search
Progress = Callable[[int, int], None]  # (questions done, questions in all)


class Evaluator:
    """Runs questions against a workspace through the App: answers and search, as a user gets them."""

    def __init__(self, app: App) -> None:
        self.app = app

    def run(
        self, workspace: str, questions: Sequence[EvalQuestion], mode: str = "hybrid",
        documents: Sequence[str] | None = None, progress: Progress | None = None,
    ) -> Iterator[EvalResult]:
        """Each question's result in file order; `documents` (names or ids) limits answers and search to them."""
        self.app.workspaces.get(workspace)  # an unknown workspace fails before the first question
        for done, question in enumerate(questions, 1):
            result = self.evaluate(workspace, question, mode, documents)
            if progress is not None:
                progress(done, len(questions))
            yield result

    def evaluate(
        self, workspace: str, question: EvalQuestion, mode: str = "hybrid", documents: Sequence[str] | None = None
    ) -> EvalResult:
        """Ask one question, search it (answerable ones), and judge the first citation, every citation and the
        search's top hits by its gold."""
        started = time.perf_counter()
        answer = self.app.answers.ask(workspace, question.question, documents=documents, mode=mode)
        elapsed_ms = (time.perf_counter() - started) * 1000
        first = answer.citations[0] if answer.citations else None
        result = EvalResult(
            id=question.id, question=question.question, lang=question.lang, answerable=question.answerable,
            refused=answer.refused, first_right=None, any_right=None, search_hit1=None, search_hit5=None,
            first_document=first.document if first else None,
            first_pages=(first.page_start, first.page_end) if first else None, confidence=answer.confidence,
            elapsed_ms=elapsed_ms, split=question.split, kind=question.kind, support=_support(answer),
        )
        if not question.answerable:
            return result
        return self._judged(result, question, answer, self._hits(workspace, question, documents))

    def unknown_documents(self, workspace: str, questions: Sequence[EvalQuestion]) -> list[str]:
        """Gold document names that no document of the workspace has (a typo there makes every answer wrong)."""
        names = {document.name for document in self.app.documents.list(workspace)}
        gold = {span.document for question in questions for span in question.gold.spans}
        return sorted(gold - names)

    def _judged(
        self, result: EvalResult, question: EvalQuestion, answer: Answer, hits: list[Passage]
    ) -> EvalResult:
        gold = question.gold
        cited = [] if answer.refused else self._cited(answer.citations)
        return replace(
            result, first_right=bool(cited) and gold.matches(cited[0]), any_right=any(gold.matches(p) for p in cited),
            search_hit1=bool(hits) and gold.matches(hits[0]), search_hit5=any(gold.matches(p) for p in hits),
            all_cited=gold.cites_every_document(cited) if question.cross_doc else None,
        )

    def _cited(self, citations: Sequence[Citation]) -> list[Passage]:
        """The cited passages with their chunks' full text (the quote when a chunk is gone)."""
        chunks = self.app.catalog.get_chunks([c.chunk_id for c in citations])
        return [
            Passage(c.document, c.page_start, c.page_end, chunks[c.chunk_id].text if c.chunk_id in chunks else c.quote)
            for c in citations
        ]

    def _hits(self, workspace: str, question: EvalQuestion, documents: Sequence[str] | None) -> list[Passage]:
        found = self.app.search.search(workspace, question.question, SEARCH_TOP_K, documents)
        return [
            Passage(hit.document_name, hit.chunk.page_start, hit.chunk.page_end, hit.chunk.text)
            for hit in found.hits[:SEARCH_TOP_K]
        ]


def _support(answer: Answer) -> str | None:
    # Answers carry a support level only once the answerer grades its own support; until then there is none.
    support = getattr(answer, "support", None)
    return None if support is None else str(support)
