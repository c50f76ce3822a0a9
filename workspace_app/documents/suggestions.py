"""Suggested questions: a handful per workspace that its sources answer, each checked with our own answerer.

    each ready, included source's guide -> candidates: from its recommendations, by the domain pack's patterns
        (clinical: "For women with atrial fibrillation, warfarin should be used..." -> "What is recommended for
        women with atrial fibrillation?"), and its section headings ("Syncope in athletes" -> "What do the sources
        say about syncope in athletes?")
    -> taken in turn from each source -> asked with the answerer in the chat's query mode; offered only when the
       answer is not a refusal and cites the source the question came from
    -> stored with the set of sources (and mode) they were checked against; recomputed when that set changes
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Protocol

from storage.base import GuideRepository
from workspace_app.documents.guide import GuideService
from workspace_app.domain.pack import no_question
from workspace_app.models.answers import Answer, Turn
from workspace_app.models.documents import Document
from workspace_app.models.guides import SourceGuide, SuggestedQuestion
from workspace_app.retrieval.scope import ScopeCatalog, find_workspace
from workspace_app.text.cjk import has_cjk
from workspace_app.text.language import detect_language
from workspace_app.text.sentences import leaves_clause_open

SUGGESTIONS_VERSION = "suggest-v2"
MAX_SUGGESTIONS = 5
MAX_CHECKS = 16  # answers asked at most per workspace (each ~0.1-1 s): the rest of the candidates are left
_ACRONYM = re.compile(r"^[A-Z0-9]{2,}")
_TITLE_LIKE = re.compile(r"guideline|consensus|statement|scientific|update|共识|指南|声明|\d{4}$", re.IGNORECASE)
_DANGLING = re.compile(r"[-–—:：,，]$")
# How a guideline was made, not what it says: nobody asks their sources about these.
_PROCESS = re.compile(
    r"\b(?:review|approval|committee|panel|work(?:ing)? group|members?|reviewers?|ownership|speakers|bureau|"
    r"literature search|search yield|inclusion|exclusion criteria|selection of|scope|organi[sz]ation|"
    r"CQ-based|approach|rationale|class of recommendation|level of evidence|evidence statements?)\b"
    r"|\breferences?\b|参考文献|撰写|成员|执笔|专家组|工作组|推荐意见$",
    re.IGNORECASE,
)
# A table row or figure label read as a heading: counts ("N = 8,678,060"), footnote marks inside; or a table's own
# title, which its rows are read under ("Table 5. Summary of Recommendations …: Recommendations NHLBI Grade …").
_TABLE_LABEL = re.compile(r"\bN\s*=|\d{1,3}(?:,\d{3})+|\d{4,}|\*\s*\S|^(?:TABLE|Table|FIGURE|Figure)\s+\d+")
# A clinical question's or section's label before its title: "CQ2—Sodium and Potassium", "S4.1: Syncope".
_LABEL = re.compile(r"^[A-Z]{1,4}\d+(?:\.\d+)*\s*[—–:-]\s*(?=\S)")
_RECOMMENDATIONS_FOR = re.compile(r"^recommendations?\s+(?:for|on)\s+(?P<what>.+)$", re.IGNORECASE)
_SMALL_WORDS = frozenset("and or of the for in with to a an on at by vs".split())
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
    """Questions one source's guide suggests, recommendations first (asked with the domain pack's patterns),
    without repeats or overlong ones."""
    drafts = [(recommendation_question(r.text, r.section), "recommendation") for r in guide.recommendations]
    drafts += [(heading_question(h), "heading") for h in guide.headings]
    seen: set[str] = set()
    found = []
    for question, origin in drafts:
        if question and len(question) <= MAX_QUESTION_CHARS and question.lower() not in seen:
            seen.add(question.lower())
            found.append(SuggestedQuestion(question, document.id, document.name, origin))
    return found


def heading_question(heading: str) -> str | None:
    """A question a section answers, from its title; None for a cut-off title, the document's own title, how the
    guideline was made, a table row or a sentence read as a heading."""
    title = _LABEL.sub("", _unfused(heading.strip().rstrip("?？*†‡ ")))
    if (_TITLE_LIKE.search(title) or _DANGLING.search(title) or leaves_clause_open(title.lower()) or _PROCESS.search(title)
            or _TABLE_LABEL.search(title)):
        return None
    if detect_language(title) == "zh":
        return f"关于{title}，资料中怎么说？"
    words = title.split()
    if len(words) < 2:
        return None
    recommended = _RECOMMENDATIONS_FOR.match(title)
    if recommended:
        return f"What is recommended for {_plain_case(recommended['what'])}?"
    return f"What do the sources say about {_lower_first(_plain_case(title))}?"


def _unfused(title: str) -> str:
    """A Chinese heading without the body text run into it ("症状与体征 心悸是房颤的主要症状，…" -> "症状与体征") and
    without the spaces of a letter-spaced one ("参 考 文 献" -> "参考文献")."""
    if not has_cjk(title):
        return title
    parts = title.split()
    if len(parts) > 2 and all(len(part) == 1 for part in parts):
        return "".join(parts)
    head = parts[0] if parts else title
    if len(parts) > 1 and len(head) >= 4 and has_cjk(head[-1]):
        return head
    return title


def _plain_case(title: str) -> str:
    """Title Case or ALL CAPS in sentence case, acronyms kept: "AEROBIC EXERCISE TRAINING AND BP" -> "aerobic
    exercise training and BP"."""
    words = title.split()
    if all(w.isupper() for w in words if any(c.isalpha() for c in w)):
        return " ".join(w if len(w) <= 3 and w.lower() not in _SMALL_WORDS else w.lower() for w in words)
    if sum(w[:1].isupper() for w in words) * 2 > len(words):
        return " ".join(w if _ACRONYM.match(w) else w.lower() for w in words)
    return title


class SuggestionService:
    """Each workspace's suggested questions, checked with the answerer and kept until its sources change."""

    def __init__(
        self, catalog: SuggestionCatalog, guides: GuideService, asker: Asker,
        recommendation_question: RecommendationQuestion = no_question,
    ) -> None:
        self._catalog = catalog
        self._guides = guides
        self._asker = asker
        self._recommendation_question = recommendation_question  # the domain pack's suggestion patterns

    def stored(self, workspace: str, mode: str = "hybrid") -> list[SuggestedQuestion] | None:
        """The questions already found for the workspace's current sources, or None when they must be found."""
        ws = find_workspace(self._catalog, workspace)
        return self._catalog.get_suggestions(ws.id, self._sources_key(self._sources(ws.id), mode))

    def suggest(self, workspace: str, mode: str = "hybrid", limit: int = MAX_SUGGESTIONS) -> list[SuggestedQuestion]:
        """Up to `limit` questions the workspace's included, ready sources answer (checked once, then stored)."""
        ws = find_workspace(self._catalog, workspace)
        sources = self._sources(ws.id)
        key = self._sources_key(sources, mode)
        stored = self._catalog.get_suggestions(ws.id, key)
        if stored is not None:
            return stored[:limit]
        guides = self._guides.guides(ws.id, [d.id for d in sources])
        pools = [candidate_questions(d, guides[d.id], self._recommendation_question) for d in sources if d.id in guides]
        chosen = self._checked(ws.id, [d.id for d in sources], _in_turn(pools), mode, limit)
        self._catalog.save_suggestions(ws.id, key, chosen)
        return chosen

    def answers_it(self, workspace_id: str, question: SuggestedQuestion, documents: Sequence[str], mode: str) -> bool:
        """Whether our answerer answers the question (no refusal) citing the source it came from."""
        answer = self._asker.ask(workspace_id, question.question, documents=list(documents), mode=mode)
        return not answer.refused and any(c.document_id == question.document_id for c in answer.citations)

    def _checked(
        self, workspace_id: str, documents: list[str], candidates: list[SuggestedQuestion], mode: str, limit: int
    ) -> list[SuggestedQuestion]:
        chosen: list[SuggestedQuestion] = []
        for question in candidates[:MAX_CHECKS]:
            if self.answers_it(workspace_id, question, documents, mode):
                chosen.append(question)
                if len(chosen) == limit:
                    break
        return chosen

    def _sources(self, workspace_id: str) -> list[Document]:
        return [d for d in self._catalog.list_documents(workspace_id) if d.status == "ready" and d.included]

    def _sources_key(self, sources: list[Document], mode: str) -> str:
        parts = [SUGGESTIONS_VERSION, self._guides.version, mode, *sorted(f"{d.id}:{d.sha256}" for d in sources)]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def _in_turn(pools: list[list[SuggestedQuestion]]) -> list[SuggestedQuestion]:
    """One candidate of each source in turn, so several sources get a question before any gets two."""
    merged = []
    for index in range(max((len(p) for p in pools), default=0)):
        merged += [pool[index] for pool in pools if index < len(pool)]
    return merged


def _lower_first(text: str) -> str:
    return text if _ACRONYM.match(text) else text[:1].lower() + text[1:]
