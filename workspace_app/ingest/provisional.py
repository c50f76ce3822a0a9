"""Provisional passages: a scanned document's pages become keyword-searchable as OCR reads them.

    OCR reads page k -> ProvisionalPages.add(k, lines) -> one passage per page read so far (its lines in reading
    order, their boxes), kind PROVISIONAL, id `<document id>-ocr<page>` -> the catalog (chunks + keyword index)

Each write replaces all the document's chunks by the passages of the pages read so far, so a run killed or cancelled
midway leaves only passages of pages it read, and the run that follows writes the same ids again. The chunking stage
replaces them all by the document's chunks (`replace_chunks`, one transaction): nothing provisional survives a
finished run. Keyword search returns a running document's provisional passages (and nothing else of it); dense
search and answers never see them (the document is not ready: no vectors, no verified chunks to cite).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from workspace_app.ingest.layout import TextLine
from workspace_app.ingest.reading_order import page_order
from workspace_app.models.documents import PROVISIONAL, Chunk, Document, Rect
from workspace_app.text.analyzer import index_text


class ChunkWriter(Protocol):
    """The catalog's chunk writes the passages need (`storage.base.ChunkRepository.replace_chunks`)."""

    def replace_chunks(
        self, document_id: str, workspace_id: str, chunks: Sequence[Chunk], keyword_texts: Sequence[tuple[str, str]]
    ) -> None: ...


def provisional_chunk(document_id: str, page: int, lines: list[TextLine]) -> Chunk | None:
    """One page's OCR lines as a provisional passage (None for a page without text)."""
    ordered = page_order(lines)
    text = "\n".join(line.text for line in ordered).strip()
    if not text:
        return None
    rects = tuple(Rect(page, line.x0, line.y0, line.x1, line.y1) for line in ordered)
    # A negative ordinal: never one of the document's chunks' (0, 1, ...), and pages in order.
    return Chunk(
        id=f"{document_id}-ocr{page:05d}", document_id=document_id, ordinal=page - 100_000, text=text, section="",
        page_start=page, page_end=page, token_count=len(text.split()), rects=rects, kind=PROVISIONAL,
    )


class ProvisionalPages:
    """Collects a document's OCR'd pages as they are read and writes them as provisional passages."""

    def __init__(self, document: Document, chunks: ChunkWriter) -> None:
        self._document = document
        self._chunks = chunks
        self._passages: dict[int, tuple[Chunk, tuple[str, str]]] = {}

    def add(self, page: int, lines: list[TextLine]) -> None:
        """Page `page` (1-based) was read: write the passages of every page read so far."""
        chunk = provisional_chunk(self._document.id, page, lines)
        if chunk is None:
            return
        self._passages[page] = (chunk, ("", index_text(chunk.text)))  # each page's terms computed once
        ordered = [self._passages[number] for number in sorted(self._passages)]
        self._chunks.replace_chunks(
            self._document.id, self._document.workspace_id, [c for c, _ in ordered], [t for _, t in ordered]
        )

    @property
    def pages(self) -> list[int]:
        """The pages written so far."""
        return sorted(self._passages)
