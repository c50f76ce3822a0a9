"""One plan per ask: what the question is, once, before any evidence is gathered.

    question (made standalone) -> language, what it wants (a grade, a definition, a dose, a duration, a number)
                               -> its parts (two or more separate questions, or none), each with the source it
                                  names and what it asks of it
                               -> the sources the whole question names
                               -> the evidence tools it calls (seed 003's planner): `passages` (the search over the
                                  documents' passages, always), `graph` (the entity graph's rankings, in the graph
                                  modes), `figures` (the figure search, when the question asks to see a figure)

The evidence (evidence.py: passages and graph), the figure tool (figures.py), the reading (reading.py) and the
answerers read the plan; none splits or names the question again. Questions about one patient are planned by the
patient answers (patients/crosslevel.py), whose guideline level asks through this plan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workspace_app.answer.answerability import asks_definition, asks_grading, names_a_subject, question_parts, wanted
from workspace_app.answer.document_names import without_document_names
from workspace_app.answer.figures import asks_for_figure, figure_query
from workspace_app.domain import QuestionCues
from workspace_app.retrieval.scope import Scope
from workspace_app.text.language import detect_language


@dataclass(frozen=True)
class PlanPart:
    """One of a question's separate questions."""

    text: str
    naming: tuple[str, ...]  # the scope's documents the part names
    # What it asks of the source it names: without the words naming it (they match the source's title pages, not
    # its answer), and with the part before it when it names no subject of its own ("… and does the Chinese AF
    # guideline allow a lower range?").
    asked: str
    parts: tuple[str, ...] = ()  # what it asks, in parts, when that is itself two questions (a borrowed subject's)

    @property
    def named(self) -> str | None:
        """The one source the part names, if it names exactly one."""
        return self.naming[0] if len(self.naming) == 1 else None


@dataclass(frozen=True)
class ToolCall:
    """One evidence tool the plan calls, with what it asks that tool."""

    tool: str  # "passages", "graph" or "figures"
    query: str


@dataclass(frozen=True)
class QuestionPlan:
    """A question read once: its language, what it wants, its parts and the sources it names."""

    question: str  # as asked
    standalone: str  # a follow-up made to stand alone (the question itself otherwise)
    language: str
    mode: str
    scope: Scope
    wants: str | None  # "grade", "definition", "dose", "duration", "number" or None
    parts: tuple[PlanPart, ...]  # two or more, or none
    sources: tuple[str, ...]  # the documents the whole question names
    calls: tuple[ToolCall, ...] = ()  # the evidence tools it calls

    @property
    def tools(self) -> tuple[str, ...]:
        """The names of the tools the plan calls."""
        return tuple(call.tool for call in self.calls)

    def call(self, tool: str) -> ToolCall | None:
        """The plan's call of one tool, if it calls it."""
        return next((call for call in self.calls if call.tool == tool), None)

    @property
    def part_texts(self) -> tuple[str, ...]:
        return tuple(part.text for part in self.parts)

    @property
    def in_parts(self) -> bool:
        """Whether each part gets its own evidence: it is two or more questions and no part names several sources."""
        return len(self.parts) > 1 and all(len(part.naming) <= 1 for part in self.parts)

    @property
    def by_part(self) -> bool:
        """Whether it is answered one part at a time whatever its evidence: some part names one source (each part
        is then answered in the source it names). A question whose parts name none is answered part by part when
        their evidence is in different sources (`Evidence.apart`)."""
        return self.in_parts and any(part.named for part in self.parts)


class Planner:
    """Plans questions against a scope: `named` gives the scope's documents a text names (QuestionReader.named);
    `cues`, the domain pack's question cues (what asks for an amount)."""

    def __init__(self, named: Callable[[str, Scope], Sequence[str]], cues: QuestionCues | None = None) -> None:
        self._named = named
        self._cues = cues or QuestionCues()

    def plan(self, question: str, scope: Scope, mode: str, standalone: str | None = None) -> QuestionPlan:
        asked = standalone or question
        return QuestionPlan(
            question=question, standalone=asked, language=detect_language(question), mode=mode, scope=scope,
            wants=_wants(asked, self._cues), parts=self._parts(asked, scope), sources=tuple(self._named(asked, scope)),
            calls=tool_calls(asked, mode),
        )

    def _parts(self, question: str, scope: Scope) -> tuple[PlanPart, ...]:
        texts = question_parts(question)
        if len(texts) < 2:
            return ()
        parts = []
        previous = ""
        for text in texts:
            own = without_document_names(text)
            asked, previous = (own if names_a_subject(own) else f"{previous} {own}".strip()), own
            own_parts = question_parts(asked)
            parts.append(PlanPart(text, tuple(self._named(text, scope)), asked, tuple(own_parts) if len(own_parts) > 1 else ()))
        return tuple(parts)


def _wants(question: str, cues: QuestionCues) -> str | None:
    if asks_definition(question):
        return "definition"
    if asks_grading(question, cues):
        return "grade"
    return wanted(question, cues)


def tool_calls(question: str, mode: str) -> tuple[ToolCall, ...]:
    """The evidence tools a question calls: the passages always, the graph in a graph mode, the figures when it
    asks to see one (by what the figure shows, without the words asking for a picture)."""
    calls = [ToolCall("passages", question)]
    if mode != "naive":
        calls.append(ToolCall("graph", question))
    if asks_for_figure(question):
        calls.append(ToolCall("figures", figure_query(question)))
    return tuple(calls)
