"""The cross-language vectors as an ingestion stage: a second embedder (multilingual USE by default) writes
each document's chunks into a companion vector index, which retrieval searches as the `crosslingual` method.

The main embedder (English MiniLM by default) stays the one that cuts chunks and ranks same-language passages;
this index only has to put an English question next to a Chinese passage and the reverse.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from storage.base import VectorIndex
from workspace_app.embedding.embedder import Embedder
from workspace_app.errors import IngestionError
from workspace_app.models.documents import Chunk, Document

log = logging.getLogger(__name__)


class CrossLanguageStage:
    """Embeds a document's chunks with the cross-language embedder into its own index (an `IndexStage`)."""

    name = "cross-language"

    def __init__(self, embedder: Embedder, vectors: VectorIndex, text_of: Callable[[Chunk], str]) -> None:
        self._embedder = embedder
        self._vectors = vectors
        self._text_of = text_of

    def run(self, document: Document, chunks: list[Chunk], report: Callable[[int, int], None]) -> None:
        """Replace the document's vectors in the companion index and check they were all stored."""
        embedded = self._embedder.embed_passages([self._text_of(c) for c in chunks], report).tolist()
        metadatas: list[dict[str, str | int]] = [
            {"document_id": document.id, "page_start": c.page_start, "ordinal": c.ordinal} for c in chunks
        ]
        self._vectors.delete_document(document.workspace_id, document.id)
        self._vectors.upsert(document.workspace_id, [c.id for c in chunks], embedded, metadatas)
        stored = self._vectors.count(document.workspace_id, document.id)
        if stored != len(chunks):
            raise IngestionError(
                f"{document.name}: {stored} of {len(chunks)} cross-language vectors were stored. Retry the document."
            )
