"""Studio outputs (NotebookLM's studio, offline): documents built from a workspace's sources, every statement cited.

- **FAQ**: the workspace's suggested questions (each already checked to be answered by its source), each with
  its answer, asked as a user would ask it of that source.
- **Briefing**: per source, its key recommendations as the source prints them, with class, level and page
  (from the source guide); a source that grades none gets its summary's sentences instead, each cited.
- **Study guide**: per source, its key topics, each with the answer to "what is it?" from that source.

An output is Markdown (the sources' text escaped, `[n]` markers kept) with one list of citations: numbers run
across the whole output, and a passage quoted twice keeps one number. It is saved as a note whose chips open the
PDF at the passage, exactly as a saved answer's do. Questions the sources do not answer are left out and counted
(`left_out`). With a language model configured, the asked answers are the model's (the answerer of the wiring).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from workspace_app.answer.export import answer_markdown, escape, nested_headings
from workspace_app.answer.phrases import disclaimer_text
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Answer, Citation, Note, Turn
from workspace_app.models.documents import Chunk, Document
from workspace_app.models.guides import GuideRecommendation, SourceGuide, SuggestedQuestion
from workspace_app.retrieval.scope import ScopeCatalog, find_workspace
from workspace_app.text.grades import describe_class
from workspace_app.text.language import detect_language
from workspace_app.text.sentences import split_sentences
from workspace_app.text.terms import loose

StudioKind = Literal["faq", "briefing", "study-guide"]
KINDS: tuple[StudioKind, ...] = ("faq", "briefing", "study-guide")
TITLES = {"faq": "FAQ", "briefing": "Briefing", "study-guide": "Study guide"}
_MARKER = re.compile(r"\[(\d{1,3})\]")
# What Streamlit reads as more than Markdown inside a line: math ("$5 and $10") and its directives (":red[...]",
# ":material/home:"). The note's body is shown by Streamlit and exported as Markdown: both must show it as written.
_STREAMLIT = re.compile(r"\$|:(?=[\w/-]+[:\[])")
_OPENING = 60  # loose characters of a summary sentence that find it in its chunk
Progress = Callable[[int, int], None]  # (items done, items in all)


def _quiet(done: int, total: int) -> None:
    """No progress shown."""


class Asker(Protocol):
    """The answerer (`AnswerService.ask`, and `quote_citation` for a sentence the studio chose itself)."""

    def ask(
        self, workspace: str, question: str, history: Sequence[Turn] = (), documents: Sequence[str] | None = None,
        mode: str = "naive",
    ) -> Answer: ...
    def quote_citation(self, chunk: Chunk, document_name: str, quote: str) -> Citation: ...


class StudioCatalog(ScopeCatalog, Protocol):
    """Documents and chunks, as the studio cites them."""

    def get_document(self, document_id: str) -> Document | None: ...
    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]: ...
    def document_chunk_ids(self, document_id: str) -> list[str]: ...


class Guides(Protocol):
    """Each source's guide (`GuideService.guides`)."""

    def guides(self, workspace: str, document_ids: Sequence[str] | None = None) -> dict[str, SourceGuide]: ...


class Suggestions(Protocol):
    """The checked suggested questions (`SuggestionService.suggest`)."""

    def suggest(self, workspace: str, mode: str = "hybrid", limit: int = 5) -> list[SuggestedQuestion]: ...


class NoteSaver(Protocol):
    """Where an output is kept (`NoteService.save_note`)."""

    def save_note(
        self, workspace: str, answer: Answer, title: str | None = None, message_id: str | None = None, body: str = ""
    ) -> Note: ...


@dataclass(frozen=True)
class StudioOutput:
    """One output: its title, its Markdown `body` with `[n]` markers, the `answer` holding its citations (what a
    note keeps), and how many items the sources did not answer (`left_out`)."""

    kind: StudioKind
    title: str
    body: str
    answer: Answer
    left_out: int = 0
    items: int = 0


@dataclass
class _Draft:
    """An output being written: its lines and its citations, numbered across the whole output."""

    lines: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    left_out: int = 0
    items: int = 0

    def cite(self, citation: Citation) -> int:
        """The citation's number in this output (a passage quoted before keeps its number)."""
        for kept in self.citations:
            if (kept.chunk_id, kept.quote) == (citation.chunk_id, citation.quote):
                return kept.n
        self.citations.append(replace(citation, n=len(self.citations) + 1))
        return len(self.citations)

    def answer_text(self, answer: Answer) -> str:
        """The answer's text, escaped, its markers renumbered into this output's citations."""
        numbers = {c.n: self.cite(c) for c in answer.citations}
        text = _MARKER.sub(lambda m: f"[{numbers.get(int(m.group(1)), m.group(1))}]", answer.text)
        return note_text(text)


class StudioService:
    """Builds the studio outputs of a workspace and saves them as notes."""

    def __init__(
        self, catalog: StudioCatalog, asker: Asker, guides: Guides, suggestions: Suggestions, notes: NoteSaver,
        faq_questions: int = 8, topics_per_source: int = 3,
    ) -> None:
        self._catalog = catalog
        self._asker = asker
        self._guides = guides
        self._suggestions = suggestions
        self._notes = notes
        self.faq_questions = faq_questions
        self.topics_per_source = topics_per_source

    def build(self, workspace: str, kind: StudioKind, mode: str = "hybrid", report: Progress = _quiet) -> StudioOutput:
        """One output of the workspace's included, ready sources; `report(done, total)` as each item starts."""
        builders: dict[str, Callable[[str, str, Progress], StudioOutput]] = {
            "faq": self.faq, "briefing": lambda ws, _, report: self.briefing(ws, report), "study-guide": self.study_guide,
        }
        if kind not in builders:
            raise WorkspaceError(f"There is no studio output '{kind}': choose one of {', '.join(KINDS)}.")
        return builders[kind](workspace, mode, report)

    @staticmethod
    def markdown(output: StudioOutput) -> str:
        """The output as a Markdown file: its title, its text (its outline below the title), and its numbered
        citations."""
        return f"# {escape(output.title, inline=True)}\n\n{nested_headings(output.body, 1)}\n{answer_markdown(output.answer)}\n"

    def save(self, workspace: str, output: StudioOutput) -> Note:
        """Keep an output as a note of the workspace."""
        return self._notes.save_note(workspace, output.answer, output.title, body=output.body)

    def faq(self, workspace: str, mode: str = "hybrid", report: Progress = _quiet) -> StudioOutput:
        """The suggested questions with their answers, each asked of the source it was found in."""
        ws = find_workspace(self._catalog, workspace)
        draft = _Draft()
        questions = self._suggestions.suggest(ws.id, mode, limit=self.faq_questions)
        for question in questions:
            report(draft.items, len(questions))
            answer = self._asker.ask(ws.id, question.question, documents=[question.document_id], mode=mode)
            draft.items += 1
            if answer.refused or not answer.citations:
                draft.left_out += 1
                continue
            draft.lines += [f"**{note_text(question.question)}**", "", draft.answer_text(answer), ""]
        return self._output("faq", ws.name, draft, self._sources(ws.id))

    def briefing(self, workspace: str, report: Progress = _quiet) -> StudioOutput:
        """Per source, its key recommendations with their grading and page (or its summary, cited)."""
        ws = find_workspace(self._catalog, workspace)
        sources = self._sources(ws.id)
        guides = self._guides.guides(ws.id, [d.id for d in sources])
        draft = _Draft()
        for done, document in enumerate(sources):
            report(done, len(sources))
            guide = guides.get(document.id)
            if guide is None:
                continue
            draft.lines += [f"#### {note_text(document.name)}", ""]
            if guide.recommendations:
                draft.lines += [self._recommendation_line(draft, document, r) for r in guide.recommendations]
            else:
                draft.lines += [self._summary_line(draft, document, guide.summary)]
            draft.items += 1
            draft.lines.append("")
        return self._output("briefing", ws.name, draft, sources)

    def study_guide(self, workspace: str, mode: str = "hybrid", report: Progress = _quiet) -> StudioOutput:
        """Per source, its key topics, each with what the source says it is."""
        ws = find_workspace(self._catalog, workspace)
        sources = self._sources(ws.id)
        guides = self._guides.guides(ws.id, [d.id for d in sources])
        topics = {d.id: (guides[d.id].topics if d.id in guides else ())[: self.topics_per_source] for d in sources}
        total = sum(len(t) for t in topics.values())
        draft = _Draft()
        for document in sources:
            entries = []
            for topic in topics[document.id]:
                report(draft.items, total)
                chinese = detect_language(topic) == "zh"
                answer = self._asker.ask(ws.id, definition_question(topic, chinese), documents=[document.id], mode=mode)
                draft.items += 1
                if answer.refused or not answer.citations:
                    draft.left_out += 1
                    continue
                entries += [f"- **{note_text(topic)}**: {draft.answer_text(answer)}"]
            if entries:
                draft.lines += [f"#### {note_text(document.name)}", "", *entries, ""]
        return self._output("study-guide", ws.name, draft, sources)

    def _recommendation_line(self, draft: _Draft, document: Document, recommendation: GuideRecommendation) -> str:
        chunk = self._catalog.get_chunks([recommendation.chunk_id]).get(recommendation.chunk_id)
        grading = ", ".join(
            part for part in (
                describe_class(recommendation.recommendation_class) if recommendation.recommendation_class else "",
                f"LOE {recommendation.evidence_level}" if recommendation.evidence_level else "",
            ) if part
        )
        # The recommendation's own grading, not its chunk's: a chunk may hold several, graded differently.
        cited = self._citation(document, chunk, recommendation.text, recommendation) if chunk else None
        marker = f" [{draft.cite(cited)}]" if cited else ""
        tail = f" ({note_text(grading)}; p. {recommendation.page})" if grading else f" (p. {recommendation.page})"
        return f"- {note_text(recommendation.text)}{tail}{marker}"

    def _summary_line(self, draft: _Draft, document: Document, summary: str) -> str:
        """The summary's sentences, each cited where the source's text holds it."""
        chunks = self._document_chunks(document.id)
        cited = []
        for sentence in (span.text for span in split_sentences(summary)):
            # The guide shows a sentence without the source's reference markers: its opening words find it.
            opening = loose(sentence)[:_OPENING]
            chunk = next((c for c in chunks if opening in loose(c.text)), None)
            marker = f" [{draft.cite(self._citation(document, chunk, sentence))}]" if chunk else ""
            cited.append(f"{note_text(sentence)}{marker}")
        return " ".join(cited)

    def _citation(
        self, document: Document, chunk: Chunk, quote: str, grading: GuideRecommendation | None = None
    ) -> Citation:
        """The quote in its chunk as a citation (located by the answerer, as its own quotes are), with the grading
        of the recommendation it states (none for a summary sentence)."""
        citation = self._asker.quote_citation(chunk, document.name, quote)
        return replace(
            citation, recommendation_class=grading.recommendation_class if grading else None,
            evidence_level=grading.evidence_level if grading else None,
        )

    def _document_chunks(self, document_id: str) -> list[Chunk]:
        found = self._catalog.get_chunks(self._catalog.document_chunk_ids(document_id))
        return sorted(found.values(), key=lambda c: c.ordinal)

    def _sources(self, workspace_id: str) -> list[Document]:
        return [d for d in self._catalog.list_documents(workspace_id) if d.status == "ready" and d.included]

    @staticmethod
    def _output(kind: StudioKind, workspace: str, draft: _Draft, sources: Sequence[Document]) -> StudioOutput:
        title = f"{TITLES[kind]}: {workspace}"
        language = detect_language(" ".join(draft.lines)) if draft.lines else "en"
        if not draft.lines:
            draft.lines = [_EMPTY[kind]]
        summary = f"Built from {len(sources)} source{'s' if len(sources) != 1 else ''}"
        if draft.left_out:
            summary += f"; {draft.left_out} of {draft.items} left out: the sources do not answer them"
        answer = Answer(
            question=title, text=summary + ".", citations=draft.citations, grounded=True, refused=False,
            confidence=1.0, language=language, disclaimer=disclaimer_text(language), answerer="studio",
        )
        body = "\n".join(draft.lines).strip() + "\n"
        return StudioOutput(kind, title, body, answer, draft.left_out, draft.items)


_EMPTY = {
    "faq": "No suggested question of these sources could be answered yet.",
    "briefing": "No source has a guide yet (guides are made when a source is ingested).",
    "study-guide": "No key topic of these sources could be defined from them.",
}


def definition_question(topic: str, chinese: bool) -> str:
    """The question asking what a key topic is, in its source's language."""
    return f"什么是{topic}？" if chinese else f"What is {topic}?"


def note_text(text: str) -> str:
    """Source text as a note's Markdown shows it: Markdown, math and Streamlit directives escaped, `[n]` kept."""
    return _STREAMLIT.sub(lambda m: "\\" + m.group(), escape(" ".join(text.split()), keep_markers=True, inline=True))
