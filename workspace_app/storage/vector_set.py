"""A workspace's main vector index with companion indexes of the same chunks (the cross-language one).

Writes, searches and counts go to the main index; removals of a document or a workspace go to every index, so
the services that clean up (removal, cancellation, a removed workspace) leave no companion vectors behind
without knowing the companions exist. A companion is written by its own ingestion stage.
"""

from __future__ import annotations

from collections.abc import Sequence

from workspace_app.storage.base import VectorIndex


class VectorIndexSet:
    """The main `VectorIndex` for reads and writes; removals also reach the companions."""

    def __init__(self, main: VectorIndex, companions: Sequence[VectorIndex] = ()) -> None:
        self.main = main
        self.companions = tuple(companions)

    def upsert(
        self, workspace_id: str, ids: Sequence[str], vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, str | int]],
    ) -> None:
        """Write vectors of the main embedder."""
        self.main.upsert(workspace_id, ids, vectors, metadatas)

    def query(
        self, workspace_id: str, vector: Sequence[float], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Nearest chunks in the main index."""
        return self.main.query(workspace_id, vector, limit, document_ids)

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        """Remove the document's vectors from every index."""
        for index in (self.main, *self.companions):
            index.delete_document(workspace_id, document_id)

    def count(self, workspace_id: str, document_id: str | None = None) -> int:
        """Vectors in the main index."""
        return self.main.count(workspace_id, document_id)

    def drop_workspace(self, workspace_id: str) -> None:
        """Drop the workspace from every index."""
        for index in (self.main, *self.companions):
            index.drop_workspace(workspace_id)
