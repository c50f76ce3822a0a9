"""Plain data of source guides (per document) and suggested questions (per workspace)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class GuideRecommendation:
    """A recommendation a document states, with its class and level of evidence (either may be missing)."""

    text: str
    recommendation_class: str | None
    evidence_level: str | None
    page: int
    section: str
    chunk_id: str


@dataclass(frozen=True)
class GuideEntity:
    """An entity a document names often, and how often."""

    name: str
    type: str
    mentions: int


@dataclass(frozen=True)
class SourceGuide:
    """What a source is about: a short extractive summary (and an LLM-written one when a model is configured),
    its key recommendations, its main entities and its key topics (what suggested questions ask about)."""

    document_id: str
    summary: str
    recommendations: tuple[GuideRecommendation, ...]
    entities: tuple[GuideEntity, ...]
    topics: tuple[str, ...] = ()
    llm_summary: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored (and public) JSON shape."""
        data = asdict(self)
        data["recommendations"] = [asdict(r) for r in self.recommendations]
        data["entities"] = [asdict(e) for e in self.entities]
        data["topics"] = list(self.topics)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceGuide:
        """Read back what `to_json` wrote."""
        return cls(
            document_id=data["document_id"], summary=data["summary"],
            recommendations=tuple(GuideRecommendation(**r) for r in data.get("recommendations", [])),
            entities=tuple(GuideEntity(**e) for e in data.get("entities", [])),
            topics=tuple(data.get("topics", [])), llm_summary=data.get("llm_summary"),
        )


@dataclass(frozen=True)
class SuggestedQuestion:
    """A question the workspace's sources answer (checked with the answerer), and the source it came from."""

    question: str
    document_id: str
    document: str
    origin: str  # "recommendation" or "topic"

    def to_json(self) -> dict[str, Any]:
        """The stored JSON shape."""
        return asdict(self)
