"""The entity graph as an ingestion stage: the pipeline runs it after a document's vectors are stored.

A batch refreshes communities once: a document stored while others of its workspace are queued or running
skips the refresh, and the last of them refreshes (graph queries also refresh a workspace that changed).
"""

from __future__ import annotations

from workspace_app.graph.service import GraphService
from workspace_app.models.documents import GRAPH_LINKS, Chunk, Document, StageReport


class GraphStage:
    """Indexes a document's entities and relations (an `IndexStage` of the ingestion pipeline)."""

    name = "graph"

    def __init__(self, graph: GraphService) -> None:
        self._graph = graph

    def run(self, document: Document, chunks: list[Chunk], report: StageReport) -> None:
        """Extract and store the document's graph; refresh the workspace's communities unless a batch goes on. The
        extraction counts passages; storing and refreshing are one step of their own ("graph links"), so that the
        time left of the passages is not short by them (~1-1.5 s on a loaded machine)."""
        self._graph.index_document(
            document, chunks, report, refresh=not self._batch_continues(document),
            on_storing=lambda: report(0, 1, GRAPH_LINKS),
        )

    def _batch_continues(self, document: Document) -> bool:
        """Whether other documents of the workspace are queued or running: the last of them refreshes the graph."""
        others = self._graph.documents.list_documents(document.workspace_id)
        return any(d.id != document.id and d.is_active for d in others)
