"""Plain data of answers: evidence blocks, citations, answers, chats and notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workspace_app.models.documents import Chunk, Figure, Rect


@dataclass(frozen=True)
class EvidenceBlock:
    """A retrieved chunk as the answerer sees it: numbered from 1 in retrieval order."""

    n: int
    chunk: Chunk
    document_name: str
    score: float
    ranks: dict[str, int | None] = field(default_factory=dict)

    @property
    def grading(self) -> str:
        """'Class I; Level of Evidence B-NR' when the chunk carries a recommendation, else ''."""
        parts = []
        if self.chunk.recommendation_class:
            parts.append(f"Class of recommendation {self.chunk.recommendation_class}")
        if self.chunk.evidence_level:
            parts.append(f"Level of evidence {self.chunk.evidence_level}")
        return "; ".join(parts)

    @property
    def support_text(self) -> str:
        """What a cited sentence may rest on: the chunk text and its grading."""
        return f"{self.chunk.text}\n{self.grading}" if self.grading else self.chunk.text


@dataclass(frozen=True)
class Citation:
    """One `[n]` of an answer: the block it points to and the sentence that supports the claim.

    `level` says which level of knowledge it cites (seed 002 QUERY-003): 'guideline' (a passage of a source,
    the default), 'patient' (an event of `patient_id`'s record: `event_id`) or 'vocabulary' (a standard
    definition of a code, e.g. an ICD title; `section` names the code)."""

    n: int
    chunk_id: str
    document: str
    document_id: str
    page_start: int
    page_end: int
    section: str
    quote: str
    rects: tuple[Rect, ...]
    chunk_rects: tuple[Rect, ...]
    score: float
    recommendation_class: str | None = None
    evidence_level: str | None = None
    level: str = "guideline"
    patient_id: str | None = None
    event_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The public JSON shape of a citation (CLI `ask --json`)."""
        return {
            "n": self.n, "chunk_id": self.chunk_id, "document": self.document, "document_id": self.document_id,
            "page_start": self.page_start, "page_end": self.page_end, "section": self.section, "quote": self.quote,
            "rects": [rect.to_json() for rect in self.rects], "score": round(self.score, 4),
            "recommendation_class": self.recommendation_class, "evidence_level": self.evidence_level,
            "level": self.level, "patient_id": self.patient_id, "event_id": self.event_id,
        }

    def to_record(self) -> dict[str, Any]:
        """Everything, for the chat history."""
        data = self.to_json()
        data.update(chunk_rects=[rect.to_json() for rect in self.chunk_rects])
        return data

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Citation:
        """Rebuild a citation saved with `to_record`."""
        return cls(
            n=int(data["n"]), chunk_id=data["chunk_id"], document=data["document"], document_id=data["document_id"],
            page_start=int(data["page_start"]), page_end=int(data["page_end"]), section=data["section"],
            quote=data["quote"], rects=tuple(_rect(r) for r in data.get("rects", [])),
            chunk_rects=tuple(_rect(r) for r in data.get("chunk_rects", [])), score=float(data.get("score", 0.0)),
            recommendation_class=data.get("recommendation_class"), evidence_level=data.get("evidence_level"),
            level=data.get("level", "guideline"), patient_id=data.get("patient_id"), event_id=data.get("event_id"),
        )


def _rect(data: dict[str, Any]) -> Rect:
    return Rect(int(data["page"]), float(data["x0"]), float(data["y0"]), float(data["x1"]), float(data["y1"]))


@dataclass(frozen=True)
class EntityRef:
    """An entity of the graph an answer drew on (QUERY-004), and the citations whose passage mentions it."""

    id: str
    name: str
    type: str
    workspace_id: str
    workspace: str = ""
    citations: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The public JSON shape (also kept in the chat history)."""
        return {
            "id": self.id, "name": self.name, "type": self.type, "workspace_id": self.workspace_id,
            "workspace": self.workspace, "citations": list(self.citations),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntityRef:
        """Rebuild an entity reference saved with `to_json`."""
        return cls(
            id=str(data["id"]), name=str(data["name"]), type=str(data["type"]), workspace_id=str(data["workspace_id"]),
            workspace=str(data.get("workspace", "")), citations=tuple(int(n) for n in data.get("citations", [])),
        )


@dataclass
class Answer:
    """An answer with `[n]` markers, its verified citations and how it was made."""

    question: str
    text: str
    citations: list[Citation]
    grounded: bool
    refused: bool
    confidence: float
    language: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    disclaimer: str = ""
    answerer: str = "extractive"
    mode: str = "naive"
    standalone_question: str | None = None
    unsupported: list[str] = field(default_factory=list)
    documents: list[str] | None = None
    entities: list[EntityRef] = field(default_factory=list)
    # How well the sources support the answer: "confident", "partial" (the answer says the sources only partly
    # cover the question) or "none" (a refusal).
    support: str = "confident"
    support_note: str = ""  # said with a partly supported answer, in the question's language
    # Figures shown with the answer: the one a question asks for ("show the … algorithm"), then those beside its
    # cited passages (answer/figures.py).
    figures: list[Figure] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The public JSON shape of `workspace-app ask --json`."""
        return {
            "question": self.question, "answer": self.text, "refused": self.refused, "grounded": self.grounded,
            "confidence": round(self.confidence, 4), "support": self.support, "support_note": self.support_note,
            "language": self.language,
            "citations": [c.to_json() for c in self.citations], "mode": self.mode,
            "entities": [e.to_json() for e in self.entities], "figures": [f.to_json() for f in self.figures],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }

    def to_record(self) -> dict[str, Any]:
        """Everything, for the chat history."""
        data = self.to_json()
        data.update(
            citations=[c.to_record() for c in self.citations], disclaimer=self.disclaimer, answerer=self.answerer,
            mode=self.mode, standalone_question=self.standalone_question, unsupported=self.unsupported,
            documents=self.documents, figures=[f.to_record() for f in self.figures],
        )
        return data

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Answer:
        """Rebuild an answer saved with `to_record`."""
        return cls(
            question=data["question"], text=data["answer"], citations=[Citation.from_record(c) for c in data["citations"]],
            grounded=bool(data["grounded"]), refused=bool(data["refused"]), confidence=float(data["confidence"]),
            language=data["language"], timings_ms=dict(data.get("timings_ms", {})), disclaimer=data.get("disclaimer", ""),
            answerer=data.get("answerer", "extractive"), mode=data.get("mode", "naive"),
            standalone_question=data.get("standalone_question"), unsupported=list(data.get("unsupported", [])),
            documents=data.get("documents"), entities=[EntityRef.from_json(e) for e in data.get("entities", [])],
            support=str(data.get("support", "none" if data["refused"] else "confident")),
            support_note=str(data.get("support_note", "")),
            figures=[Figure.from_record(f) for f in data.get("figures", [])],
        )


@dataclass(frozen=True)
class AnswerLine:
    """One line of a quoted (offline) answer's text, final, sent as soon as its citations are verified and before
    their places in the documents are located. The lines joined with `joiner` are the `Answer.text` that follows;
    `support_note` is that answer's (the same on every line)."""

    text: str
    index: int
    joiner: str
    support_note: str


@dataclass(frozen=True)
class Turn:
    """A past question and the answer text given (what follow-up rewriting and the LLM see)."""

    question: str
    answer: str


@dataclass(frozen=True)
class Chat:
    """A conversation in a workspace."""

    id: str
    workspace_id: str
    title: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class ChatMessage:
    """One exchange of a chat: the question and the answer record."""

    id: str
    chat_id: str
    position: int
    question: str
    answer: Answer
    created_at: str


@dataclass(frozen=True)
class Note:
    """A note of the workspace: an answer saved from a chat (`answer`, `message_id`) or one's own (`answer` None);
    either may carry the user's Markdown `body`."""

    id: str
    workspace_id: str
    title: str
    answer: Answer | None
    created_at: str
    body: str = ""
    message_id: str | None = None
    updated_at: str = ""


@dataclass(frozen=True)
class SourceUses:
    """How many chats and notes of a workspace cite a document (what removing it leaves without a source)."""

    chats: int
    notes: int
