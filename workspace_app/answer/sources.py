"""Evidence sources: how a kind of source shows what an answer cites (where a quote is, which pages to show).

The answerer and the citation panel ask the `EvidenceSource` of a cited chunk's document. Stored documents
(PDF, text, Markdown) are the first kind; a second kind (patient event records) implements the same protocol
and is registered in the wiring, without changes to the answer or citation code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from workspace_app.answer.highlight import excerpt_pages, locate_quote
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Citation
from workspace_app.models.documents import Chunk, Document, Rect


@dataclass(frozen=True)
class CitationExcerpt:
    """The pages a citation needs, as PDF bytes, and which original page each excerpt page is."""

    pdf: bytes
    pages: list[int]
    document: str


class EvidenceSource(Protocol):
    """One kind of source, as citations see it."""

    def locate(self, document: Document, chunk: Chunk, quote: str, start: int) -> tuple[Rect, ...]:
        """Rectangles of the quote on its pages (empty when the source has no pages)."""
        ...

    def excerpt(self, document: Document, citation: Citation) -> CitationExcerpt | None:
        """The cited pages to show beside the answer, or None when there is nothing to show."""
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

    def excerpt(self, document: Document, citation: Citation) -> CitationExcerpt | None:
        """The cited pages as a small PDF (None for text sources, which have no pages to show)."""
        if not self._files.has_pages(document):
            return None
        pages = sorted({r.page for r in (*citation.rects, *citation.chunk_rects)} | {citation.page_start})
        path = self._files.document_path(document)
        if not path.is_file():
            raise WorkspaceError(f"The file of {document.name} is missing from the store. Upload it again.")
        return CitationExcerpt(excerpt_pages(path, pages), pages, document.name)
