"""Answerers: what turns a plan and its evidence into a draft answer, before its citations are verified.

    Answerer.answer(plan, evidence, timings) -> pieces of text while it writes, then a Draft
      QuotingAnswerer   offline: quotes the best-supported sentences of the evidence, each with its block's marker
                        (extractive.py scores them; part by part when the plan says so), or refuses
      WritingAnswerer   a language model writes from the numbered evidence blocks, citing [n]

The answer service verifies a draft's citations and builds the Answer (service.py); which answerer answers is
chosen in the wiring (a language model when one is configured).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Protocol

from workspace_app.answer.evidence import Evidence
from workspace_app.answer.extractive import Candidate, ExtractiveAnswerer, Selection
from workspace_app.answer.llm import LlmAnswerer
from workspace_app.answer.markers import strip_markers
from workspace_app.answer.phrases import refusal_text
from workspace_app.answer.plan import QuestionPlan
from workspace_app.answer.reading import QuestionReader
from workspace_app.models.answers import EvidenceBlock
from workspace_app.retrieval.scope import Scope

PART_SENTENCES = 2  # sentences quoted for each part of a question answered part by part


@dataclass(frozen=True)
class Draft:
    """An answer before verification: quoted sentences (each ending in its markers) or written text, the blocks
    its markers number, and the answerer's confidence; or a refusal."""

    blocks: list[EvidenceBlock]
    confidence: float = 0.0
    sentences: list[str] = field(default_factory=list)
    text: str | None = None
    refused: bool = False

    @property
    def quoting(self) -> bool:
        return self.text is None


class Answerer(Protocol):
    """Drafts an answer from a plan's evidence."""

    name: str

    def answer(self, plan: QuestionPlan, evidence: Evidence, timings: dict[str, float]) -> Generator[str, None, Draft]:
        """Pieces of text while writing (none for a quoting answerer), then the draft."""
        ...


class QuotingAnswerer:
    """The offline answerer: the extractive scorer's sentences, quoted with their markers."""

    name = "extractive"

    def __init__(self, reader: QuestionReader, extractive: ExtractiveAnswerer) -> None:
        self.reader = reader
        self.extractive = extractive

    def answer(self, plan: QuestionPlan, evidence: Evidence, timings: dict[str, float]) -> Generator[str, None, Draft]:
        started = time.perf_counter()
        draft = self._by_part(plan, evidence) if plan.by_part or evidence.apart else None
        if draft is None:
            selection = self.select(plan.standalone, evidence.blocks, plan.language, plan.scope, evidence.part_documents,
                                    parts=plan.part_texts)
            draft = Draft(evidence.blocks, selection.confidence, refused=True) if selection.refused else Draft(
                evidence.blocks, selection.confidence, [_quoted(candidate) for candidate in selection.sentences],
            )
        timings["answer"] = _ms(started)
        return draft
        yield  # a generator that writes nothing while it works

    def select(
        self, question: str, blocks: list[EvidenceBlock], language: str, scope: Scope,
        part_documents: dict[str, frozenset[str]], parts: tuple[str, ...] = (),
    ) -> Selection:
        """The question read against the scope, and the extractive scorer's choice from its evidence."""
        reading = self.reader.read(question, scope, blocks, part_documents, parts=parts)
        return self.extractive.select(
            question, blocks, language, reading.idf, reading.lacking, reading.parts, reading.translations,
            reading.contrary, reading.sources, reading.naming, reading.short_forms,
            len(reading.needs.absent) + len(reading.needs.unknown),
        )

    def _by_part(self, plan: QuestionPlan, evidence: Evidence) -> Draft | None:
        """A question in parts naming the sources they ask ("What dose does the first guideline give, and what
        target does the second set?"), or whose parts' evidence is in different sources, answered one part at a
        time from its own evidence (in the source it names): the quoted sentences, the blocks they cite (numbered
        across parts) and the lowest confidence. None when a part goes unanswered alone (the whole question's
        evidence then decides)."""
        sentences: list[str] = []
        blocks: list[EvidenceBlock] = []
        confidence = 1.0
        for part, own in zip(plan.parts, evidence.parts, strict=True):
            within = plan.scope.narrowed([part.named]) if part.named else plan.scope
            found = {sub: frozenset([part.named]) for sub in part.parts if part.named}
            selection = self.select(part.asked, own, plan.language, within, found, parts=part.parts)
            if selection.refused:
                return None
            offset = len(blocks)
            blocks += [replace(block, n=block.n + offset) for block in own]
            for candidate in selection.sentences[:PART_SENTENCES]:
                quoted = _quoted(candidate, offset)
                if not any(strip_markers(quoted) == strip_markers(s) for s in sentences):
                    sentences.append(quoted)
            confidence = min(confidence, selection.confidence)
        return Draft(blocks, confidence, sentences)


class WritingAnswerer:
    """A language model writes the answer from the numbered evidence blocks, streaming as it writes."""

    name = "llm"

    def __init__(self, llm: LlmAnswerer) -> None:
        self.llm = llm

    def answer(self, plan: QuestionPlan, evidence: Evidence, timings: dict[str, float]) -> Generator[str, None, Draft]:
        if not evidence.blocks:
            return Draft(evidence.blocks, text=refusal_text(plan.language))
        started = time.perf_counter()
        pieces = []
        for piece in self.llm.stream(plan.standalone, evidence.blocks, plan.language):
            pieces.append(piece)
            yield piece
        timings["answer"] = _ms(started)
        return Draft(evidence.blocks, text="".join(pieces))


def _quoted(candidate: Candidate, offset: int = 0) -> str:
    """An extractive sentence with its block's marker (and those of the blocks repeating it), block numbers moved
    by `offset`."""
    blocks = [candidate.block.n] + [twin.block.n for twin in candidate.twins]
    return candidate.span.text + " " + "".join(f"[{n + offset}]" for n in dict.fromkeys(blocks))


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
