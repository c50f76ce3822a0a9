"""A workspace's figures for front ends: a document's figures with page and box and the entities their captions
name, a figure's thumbnail, and the figure search (BM25 over each figure's caption, inner text and nearby text).

Figures are searched beside passages, not as passages: the passage indexes keep one row and one vector per chunk
(a document is ready when its vector count matches its chunk count, and the retrieval benchmarks measure chunks),
and a figure's words are mostly its caption's, which BM25 matches well without an embedding of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workspace_app.errors import DocumentNotFoundError
from workspace_app.models.documents import Document, Figure
from workspace_app.models.graph import Entity
from workspace_app.retrieval.scope import ScopeCatalog, search_scope
from workspace_app.storage.base import FigureRepository, ThumbnailStore
from workspace_app.text.analyzer import query_terms


@dataclass(frozen=True)
class FigureHit:
    """A figure found by a search: rank, figure, its document's name and BM25 score."""

    rank: int
    figure: Figure
    document_name: str
    score: float

    def to_json(self) -> dict[str, Any]:
        """Return the public JSON shape (`type` "figure": a search hit that is a figure says so)."""
        return {"type": "figure", "rank": self.rank, "document": self.document_name, "score": round(self.score, 6),
                **self.figure.to_json()}


class FigureService:
    """Figures of the documents of a workspace: listed, drawn small, searched, linked to the entities their captions
    name."""

    def __init__(
        self, catalog: ScopeCatalog, figures: FigureRepository, thumbnails: ThumbnailStore,
        get_document: Callable[[str, str], Document],
        named: Callable[[str, str, Sequence[str]], list[Entity]] | None = None,
    ) -> None:
        self._catalog = catalog
        self._figures = figures
        self._thumbnails = thumbnails
        self._get_document = get_document  # (workspace, name or id) -> Document, or a clear error
        # (workspace id, text, document ids) -> the entity graph's entities the text names (GraphQuery.match_question)
        self._named = named

    def document_figures(self, workspace: str, document: str) -> list[Figure]:
        """A document's figures in reading order (the document by id, sha256 or name)."""
        return self._figures.document_figures(self._get_document(workspace, document).id)

    def linked_figures(self, workspace: str, document: str) -> list[tuple[Figure, list[Entity]]]:
        """A document's figures in reading order, each with the entities of the graph its caption names (of that
        document's; best first). Read when asked, so they follow the graph as sources come and go."""
        owner = self._get_document(workspace, document)
        return [
            (figure, self._named(owner.workspace_id, figure.caption, [owner.id]) if self._named and figure.caption else [])
            for figure in self._figures.document_figures(owner.id)
        ]

    def figures_beside(self, chunk_ids: Sequence[str]) -> list[Figure]:
        """The figures that sit beside any of these passages, in the passages' order."""
        return self._figures.figures_beside(chunk_ids)

    def thumbnail(self, workspace: str, document: str, figure_id: str) -> bytes:
        """A figure's PNG thumbnail, or DocumentNotFoundError (a 404) when the document has no such figure or its
        image is gone."""
        owner = self._get_document(workspace, document)
        figure = self._figures.get_figures([figure_id]).get(figure_id)
        if figure is None or figure.document_id != owner.id or not figure.thumbnail:
            raise DocumentNotFoundError(
                f"{owner.name} has no figure '{figure_id}'. List the document's figures for their ids."
            )
        path = self._thumbnails.thumbnail_path(owner.id, figure.thumbnail)
        if not path.is_file():
            raise DocumentNotFoundError(f"The picture of {figure.label or figure_id} is missing. Retry the document.")
        return path.read_bytes()

    def search(
        self, workspace: str, query: str, limit: int = 5, documents: Sequence[str] | None = None
    ) -> list[FigureHit]:
        """Figures of the workspace (or some of its documents) ranked by BM25 over the query's terms."""
        scope = search_scope(self._catalog, workspace, documents)
        ranked = self._figures.search_figures(scope.workspace.id, query_terms(query), limit, scope.document_ids)
        found = self._figures.get_figures([figure_id for figure_id, _ in ranked])
        return [
            FigureHit(rank, found[figure_id], scope.names.get(found[figure_id].document_id, "?"), score)
            for rank, (figure_id, score) in enumerate(((f, s) for f, s in ranked if f in found), start=1)
        ]
