"""Suggested questions: a handful per workspace that its sources answer, each checked with our own answerer.

    each ready, included source's guide -> candidates: from its recommendations, by the domain pack's patterns
        (clinical: "For women with atrial fibrillation, warfarin should be used..." -> "What is recommended for
        women with atrial fibrillation?"), and its key topics, the entities its central passages speak of
        ("orthostatic hypotension" -> "What do the sources say about orthostatic hypotension?"): what a source is
        about, never a section's name ("Intended use", "Scope")
    -> per source: asked with the answerer over that source alone in the chat's query mode; kept when the answer is
       not a refusal and cites the source; stored with the source (and mode, and the guide's version)
    -> the workspace's suggestions: the stored parts of its included sources, taken in turn (only as many sources'
       as fill the list). Adding a source checks at most its own questions; removing one checks at most the part of
       the source that takes its place in the list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import Protocol

from workspace_app.documents.guide import GuideService
from workspace_app.domain.pack import no_question
from workspace_app.models.answers import Answer, Turn
from workspace_app.models.documents import Document
from workspace_app.models.guides import SourceGuide, SuggestedQuestion
from workspace_app.retrieval.scope import ScopeCatalog, find_workspace
from workspace_app.storage.base import GuideRepository
from workspace_app.text.language import detect_language

SUGGESTIONS_VERSION = "suggest-v3"
MAX_SUGGESTIONS = 5
PER_SOURCE = 3  # checked questions kept per source
MAX_CHECKS = 8  # answers asked at most per source (each ~0.1-1 s): the rest of its candidates are left
MAX_QUESTION_CHARS = 100


# A question a recommendation answers (its statement, its section), or None: the domain pack's patterns.
RecommendationQuestion = Callable[[str, str], str | None]


class Asker(Protocol):
    """The answerer (`AnswerService.ask`)."""

    def ask(
        self, workspace: str, question: str, history: Sequence[Turn] = (), documents: Sequence[str] | None = None,
        mode: str = "naive",
    ) -> Answer: ...


class SuggestionCatalog(ScopeCatalog, GuideRepository, Protocol):
    """What suggestions read and write in the catalog."""


def candidate_questions(
    document: Document, guide: SourceGuide, recommendation_question: RecommendationQuestion = no_question
) -> list[SuggestedQuestion]:
    """Questions one source's guide suggests, recommendations (asked with the domain pack's patterns) and key
    topics in turn, without repeats or overlong ones."""
    chinese = detect_language(guide.summary or " ".join(guide.topics)) == "zh"
    advice = [(recommendation_question(r.text, r.section), "recommendation") for r in guide.recommendations]
    topics = [(topic_question(t, chinese), "topic") for t in guide.topics]
    drafts = [draft for pair in zip_longest(advice, topics) for draft in pair if draft is not None]
    seen: set[str] = set()
    found = []
    for question, origin in drafts:
        if question and len(question) <= MAX_QUESTION_CHARS and question.lower() not in seen:
            seen.add(question.lower())
            found.append(SuggestedQuestion(question, document.id, document.name, origin))
    return found


def topic_question(topic: str, chinese: bool) -> str:
    """The question about one of a source's key topics, in the source's language."""
    return f"关于{topic}，资料中怎么说？" if chinese else f"What do the sources say about {topic}?"


class SuggestionService:
    """Each workspace's suggested questions: per source, checked with the answerer once and kept."""

    def __init__(
        self, catalog: SuggestionCatalog, guides: GuideService, asker: Asker,
        recommendation_question: RecommendationQuestion = no_question,
    ) -> None:
        self._catalog = catalog
        self._guides = guides
        self._asker = asker
        self._recommendation_question = recommendation_question  # the domain pack's suggestion patterns
        self.parts_checked = 0  # sources whose questions this service checked (the others were stored)

    def stored(self, workspace: str, mode: str = "hybrid") -> list[SuggestedQuestion] | None:
        """The questions already found for the workspace's current sources, or None when some must be found."""
        ws = find_workspace(self._catalog, workspace)
        sources = self._sources(ws.id)
        parts = self._catalog.get_document_suggestions(self._check_keys(sources, mode))
        needed = _needed(sources, parts, MAX_SUGGESTIONS)
        return None if any(d.id not in parts for d in needed) else _in_turn([parts[d.id] for d in needed])[:MAX_SUGGESTIONS]

    def suggest(self, workspace: str, mode: str = "hybrid", limit: int = MAX_SUGGESTIONS) -> list[SuggestedQuestion]:
        """Up to `limit` questions the workspace's included, ready sources answer, one source's in turn with the
        next's. Each source's questions are checked once (over that source) and then read from the catalog; a
        source's are checked only when the sources before it do not fill the list already."""
        ws = find_workspace(self._catalog, workspace)
        sources = self._sources(ws.id)
        keys = self._check_keys(sources, mode)
        parts = self._catalog.get_document_suggestions(keys)
        while missing := [d for d in _needed(sources, parts, limit) if d.id not in parts]:
            document = missing[0]
            guide = self._guides.guides(ws.id, [document.id]).get(document.id)
            parts[document.id] = self._checked(ws.id, document, guide, mode)
            self._catalog.save_document_suggestions(document.id, keys[document.id], parts[document.id])
        return _in_turn([parts[d.id] for d in _needed(sources, parts, limit)])[:limit]

    def answers_it(self, workspace_id: str, question: SuggestedQuestion, documents: Sequence[str], mode: str) -> bool:
        """Whether our answerer answers the question (no refusal) citing the source it came from."""
        answer = self._asker.ask(workspace_id, question.question, documents=list(documents), mode=mode)
        return not answer.refused and any(c.document_id == question.document_id for c in answer.citations)

    def _checked(self, workspace_id: str, document: Document, guide: SourceGuide | None, mode: str) -> list[SuggestedQuestion]:
        """Up to PER_SOURCE of a source's candidates that the source alone answers (MAX_CHECKS asked at most)."""
        self.parts_checked += 1
        candidates = candidate_questions(document, guide, self._recommendation_question) if guide else []
        chosen: list[SuggestedQuestion] = []
        for question in candidates[:MAX_CHECKS]:
            if self.answers_it(workspace_id, question, [document.id], mode):
                chosen.append(question)
                if len(chosen) == PER_SOURCE:
                    break
        return chosen

    def _sources(self, workspace_id: str) -> list[Document]:
        return [d for d in self._catalog.list_documents(workspace_id) if d.status == "ready" and d.included]

    def _check_keys(self, sources: list[Document], mode: str) -> dict[str, str]:
        """Per source, the key of what checks its questions: this code, the guides', the mode, the file."""
        return {
            d.id: hashlib.sha256(f"{SUGGESTIONS_VERSION}|{self._guides.version}|{mode}|{d.sha256}".encode()).hexdigest()[:32]
            for d in sources
        }


def _needed(sources: list[Document], parts: dict[str, list[SuggestedQuestion]], limit: int) -> list[Document]:
    """The sources whose questions make the first `limit` taken in turn: up to and including the `limit`-th whose
    part has a question (a later source's first question comes after those), or to the first whose part is not
    known yet."""
    needed, filled = [], 0
    for document in sources:
        needed.append(document)
        if document.id not in parts:
            break
        filled += bool(parts[document.id])
        if filled == limit:
            break
    return needed


def _in_turn(pools: list[list[SuggestedQuestion]]) -> list[SuggestedQuestion]:
    """One candidate of each source in turn, so several sources get a question before any gets two."""
    merged = []
    for index in range(max((len(p) for p in pools), default=0)):
        merged += [pool[index] for pool in pools if index < len(pool)]
    return merged

