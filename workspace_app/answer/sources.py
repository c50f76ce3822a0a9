"""Evidence sources: how a kind of source shows what an answer cites (where a quote is, which pages to show).

The answerer and the citation panel ask the `EvidenceSource` of a cited chunk's document. Stored documents
(PDF, text, Markdown) are the first kind; a second kind (patient event records) implements the same protocol
and is registered in the wiring, without changes to the answer or citation code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from workspace_app.answer.highlight import locate_quote
from workspace_app.models.documents import Chunk, Document, Rect


class EvidenceSource(Protocol):
    """One kind of source, as citations see it."""

    def locate(self, document: Document, chunk: Chunk, quote: str, start: int) -> tuple[Rect, ...]:
        """Rectangles of the quote on its pages (empty when the source has no pages)."""
        ...



class DocumentFiles(Protocol):
    """Where a stored document's file is, and whether its kind has pages."""

    def document_path(self, document: Document) -> Path: ...
    def has_pages(self, document: Document) -> bool: ...


class StoredDocumentSource:
    """Uploaded files (PDF, text, Markdown) kept in the file store: quotes located on the PDF's pages."""

    def __init__(self, files: DocumentFiles) -> None:
        self._files = files

    def locate(self, document: Document, chunk: Chunk, quote: str, start: int) -> tuple[Rect, ...]:
        """Rectangles of the quote on the PDF page (text sources give none)."""
        return locate_quote(self._files.document_path(document), chunk, quote, start)
