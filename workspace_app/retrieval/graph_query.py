"""What retrieval asks of an entity graph (implemented by `graph.service.GraphService`), as one protocol.

The query modes, routing and the answer's entity list depend on this, not on the graph package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from workspace_app.models.graph import CommunityReport, DocumentSummary, Entity, Mention


class GraphQuery(Protocol):
    """Entities named by a question, their neighbours and mentions, communities and document summaries."""

    def match_question(self, workspace_id: str, question: str, document_ids: Sequence[str] | None = None) -> list[Entity]: ...
    def neighbours(
        self, workspace_id: str, entity_ids: Sequence[str], depth: int = 1, limit: int = 50
    ) -> list[tuple[Entity, float]]: ...
    def chunks_for_entities(
        self, workspace_id: str, entity_ids: Sequence[str], document_ids: Sequence[str] | None = None, limit: int = 50
    ) -> list[tuple[str, float]]: ...
    def mentions(self, workspace_id: str, entity_id: str, document_ids: Sequence[str] | None = None) -> list[Mention]: ...
    def communities(self, workspace_id: str, level: int = 0) -> list[CommunityReport]: ...
    def get_entity(self, workspace_id: str, entity_id: str) -> Entity | None: ...
    def document_summaries(self, workspace_id: str) -> list[DocumentSummary]: ...
