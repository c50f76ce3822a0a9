"""The cross-language vectors as an ingestion stage: a second embedder (multilingual USE by default) writes
each document's chunks into a companion vector index, which retrieval searches as the `crosslingual` method.

The main embedder (English MiniLM by default) stays the one that cuts chunks and ranks same-language passages;
this index only has to put an English question next to a Chinese passage and the reverse. The vectors are
written as the main ones are (`pipeline.index_vectors`: replaced, counted, retried).
"""

from __future__ import annotations

from collections.abc import Callable

from workspace_app.embedding.embedder import Embedder
from workspace_app.ingest.pipeline import embedding_text, index_vectors
from workspace_app.models.documents import Chunk, Document
from workspace_app.storage.base import VectorIndex


class CrossLanguageStage:
    """Embeds a document's chunks with the cross-language embedder into its own index (an `IndexStage`)."""

    name = "cross-language"

    def __init__(self, embedder: Embedder, vectors: VectorIndex) -> None:
        self._embedder = embedder
        self._vectors = vectors

    def run(self, document: Document, chunks: list[Chunk], report: Callable[[int, int], None]) -> None:
        """Replace the document's vectors in the companion index."""
        embedded = self._embedder.embed_passages([embedding_text(c) for c in chunks], report)
        index_vectors(document, chunks, embedded.tolist(), self._vectors)
