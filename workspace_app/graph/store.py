"""What the graph service needs from storage (`GraphStore`), and the records it writes per document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from workspace_app.models.graph import CommunityReport, DocumentSummary, Entity, Mention, Relation


@dataclass(frozen=True)
class EntityRecord:
    """An entity as one document's extraction names it."""

    id: str
    name: str
    type: str
    description: str = ""


@dataclass(frozen=True)
class MentionRecord:
    """An entity's occurrences in one chunk, with the surface forms written there."""

    entity_id: str
    chunk_id: str
    page_start: int
    count: int
    surfaces: tuple[str, ...]


@dataclass(frozen=True)
class DocumentGraph:
    """Everything the graph keeps of one document (replaced as a whole when it is indexed again)."""

    document_id: str
    entities: Sequence[EntityRecord]
    mentions: Sequence[MentionRecord]
    relations: Sequence[Relation]


@dataclass(frozen=True)
class EntityStats:
    """Workspace-wide numbers of an entity, recomputed by a refresh."""

    mentions: int
    documents: int
    degree: int
    community: int | None
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class ChunkInfo:
    """The parts of a chunk the graph uses: text, document, order and page."""

    id: str
    document_id: str
    ordinal: int
    page_start: int
    text: str


class GraphStore(Protocol):
    """Entity graph tables of the catalog."""

    def replace_document_graph(self, workspace_id: str, graph: DocumentGraph) -> None: ...
    def delete_document_graph(self, document_id: str) -> None: ...
    def entity_rows(
        self, workspace_id: str, *, document_ids: Sequence[str] | None = None, types: Sequence[str] | None = None,
        community: int | None = None, min_degree: int = 0, entity_ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Entity]: ...
    def mention_stats(self, workspace_id: str) -> dict[str, tuple[int, int, tuple[str, ...]]]: ...
    def relations(
        self, workspace_id: str, entity_ids: Sequence[str] | None = None, document_ids: Sequence[str] | None = None,
        min_weight: float = 0.0,
    ) -> list[Relation]: ...
    def graph_version(self, workspace_id: str) -> tuple[int, int]: ...
    def refreshed_version(self, workspace_id: str) -> tuple[int, int] | None: ...
    def save_refresh(
        self, workspace_id: str, stats: Mapping[str, EntityStats], reports: Sequence[CommunityReport],
        summaries: Sequence[DocumentSummary], version: tuple[int, int] | None = None,
    ) -> bool: ...
    def mentions(
        self, workspace_id: str, entity_ids: Sequence[str] | None, document_ids: Sequence[str] | None = None
    ) -> list[Mention]: ...
    def chunk_info(self, chunk_ids: Sequence[str]) -> dict[str, ChunkInfo]: ...
    def workspace_chunks(self, workspace_id: str) -> list[ChunkInfo]: ...
    def communities(self, workspace_id: str, level: int) -> list[CommunityReport]: ...
    def document_summaries(self, workspace_id: str) -> list[DocumentSummary]: ...
    def cached_response(self, model: str, key: str) -> str | None: ...
    def cache_response(self, model: str, key: str, response: str) -> None: ...
