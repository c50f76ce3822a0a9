"""Figures as an ingestion stage: every page of a PDF is searched for figures (figures.py); each is stored with its
box, caption, inner text, the chunks of its page it sits beside and a PNG thumbnail, and indexed for the figure
search by its caption (caption terms) and its inner text with the text of the chunks beside it (body terms).

The stage runs after the chunks are stored (it links figures to them) and replaces the document's figures as a
whole, so a run started again ends with the same figures. (done, total) counts pages ("figures"), then the pictures
read by OCR ("figure text"); the pipeline's cancel check runs with each report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from workspace_app.errors import ModelUnavailableError
from workspace_app.ingest.figures import Box, FigureRules, FoundFigure, find_figures
from workspace_app.ingest.ocr import OcrEngine, load_engine
from workspace_app.models.documents import FIGURE_TEXT, Chunk, Document, Figure, Rect, StageReport
from workspace_app.storage.base import FigureRepository, ThumbnailStore
from workspace_app.text.analyzer import index_text

if TYPE_CHECKING:
    import pymupdf

_BESIDE = 3  # chunks linked to a figure: the nearest ones on its page
_NEARBY_INDEXED = 2  # of those, the nearest whose text is indexed with the figure ("nearby text")
_OCR_DPI = 200  # as pages are read (ingest.ocr_dpi's default): a figure's small print needs it

log = logging.getLogger(__name__)


class FigureStage:
    """Finds, stores and indexes a document's figures (an ingestion `IndexStage`)."""

    name = "figures"

    def __init__(
        self, path_of: Callable[[Document], Path], figures: FigureRepository, thumbnails: ThumbnailStore,
        rules: FigureRules, thumbnail_px: int, ocr_engine: str | None = None,
    ) -> None:
        """`ocr_engine` (a name, ingest.ocr_engine) reads the words of pictures without a text layer; None: no OCR."""
        self._path_of = path_of
        self._figures = figures
        self._thumbnails = thumbnails
        self._rules = rules
        self._thumbnail_px = thumbnail_px
        self._ocr_engine = ocr_engine

    def run(self, document: Document, chunks: list[Chunk], report: StageReport) -> None:
        """Replace the document's figures and thumbnails (a document that is not a PDF has none). Pages are counted
        as "figures", then the pictures whose words OCR reads as "figure text": one picture's OCR takes as long as
        finding the figures of a hundred pages, so one count over both would not move at one pace."""
        self._thumbnails.delete_thumbnails(document.id)
        if document.media_type != "application/pdf":
            self._figures.replace_figures(document.id, document.workspace_id, [], [])
            return
        import pymupdf

        stored: list[Figure] = []
        with pymupdf.open(self._path_of(document)) as pdf:
            found_on_pages: list[tuple[int, FoundFigure]] = []
            for index in range(pdf.page_count):
                report(index, pdf.page_count)
                found_on_pages += [(index, found) for found in find_figures(pdf.load_page(index), self._rules)]
            report(pdf.page_count, pdf.page_count)
            unread = [n for n, (_, found) in enumerate(found_on_pages) if found.kind == "raster" and not found.text]
            if not self._ocr_engine:
                unread = []
            if unread:
                report(0, len(unread), FIGURE_TEXT)  # the stage starts before its first picture, not after it
            for done, number in enumerate(unread, start=1):
                index, found = found_on_pages[number]
                found_on_pages[number] = (index, replace(found, text=self._read_picture(pdf.load_page(index), found.box)))
                report(done, len(unread), FIGURE_TEXT)
            for index, found in found_on_pages:
                stored.append(self._store(document, len(stored), pdf.load_page(index), found, chunks))
        by_id = {chunk.id: chunk for chunk in chunks}
        self._figures.replace_figures(
            document.id, document.workspace_id, stored, [figure_index_text(f, by_id) for f in stored]
        )

    def _store(self, document: Document, ordinal: int, page: pymupdf.Page, found: FoundFigure,
               chunks: list[Chunk]) -> Figure:
        figure_id = f"{document.id}-fig{ordinal:03d}"
        png = thumbnail(page, found.box, self._thumbnail_px)
        name = self._thumbnails.put_thumbnail(document.id, figure_id, png)
        return Figure(
            id=figure_id, document_id=document.id, ordinal=ordinal, rect=Rect(found.page, *found.box),
            label=found.label, caption=found.caption, text=found.text, kind=found.kind,
            chunk_ids=chunks_beside(found.page, found.box, chunks), thumbnail=name,
        )


    def _read_picture(self, page: pymupdf.Page, box: Box) -> str:
        """The words OCR reads in a picture ("" without an engine, or when it cannot be loaded: the figure is
        still found by its caption and nearby text)."""
        if not self._ocr_engine:
            return ""
        try:
            engine = load_engine(self._ocr_engine)
        except ModelUnavailableError as exc:
            log.warning("figure pictures are not read: %s", exc.user_message)
            self._ocr_engine = None
            return ""
        return read_picture(page, box, engine, _OCR_DPI)


def read_picture(page: pymupdf.Page, box: Box, engine: OcrEngine, dpi: int) -> str:
    """The words an OCR engine reads in a region of the page, in its reading order, joined by spaces."""
    import numpy as np
    import pymupdf

    pixmap = page.get_pixmap(dpi=dpi, clip=pymupdf.Rect(box), alpha=False, colorspace=pymupdf.csRGB)
    image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width, pixmap.n)
    return " ".join(line.text for line in engine.read(image))


def thumbnail(page: pymupdf.Page, box: Box, width_px: int) -> bytes:
    """The figure's area of the page as a PNG at most `width_px` wide (never enlarged past 2x)."""
    import pymupdf

    clip = pymupdf.Rect(box)
    scale = min(2.0, width_px / max(clip.width, 1.0))
    return bytes(page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), clip=clip, alpha=False).tobytes("png"))


def chunks_beside(page: int, box: Box, chunks: list[Chunk]) -> tuple[str, ...]:
    """Ids of the chunks with text on the figure's page, nearest to its box first (at most `_BESIDE`)."""
    distances = []
    for chunk in chunks:
        rects = [rect for rect in chunk.rects if rect.page == page]
        if rects:
            distances.append((min(_distance(box, rect) for rect in rects), chunk.ordinal, chunk.id))
    return tuple(chunk_id for _, _, chunk_id in sorted(distances)[:_BESIDE])


def figure_index_text(figure: Figure, chunks: dict[str, Chunk]) -> tuple[str, str]:
    """A figure's index terms: (its label and caption, its inner text and the text of the chunks nearest it)."""
    nearby = [chunks[c].text for c in figure.chunk_ids[:_NEARBY_INDEXED] if c in chunks]
    return index_text(f"{figure.label} {figure.caption}"), index_text(" ".join([figure.text, *nearby]))


def _distance(box: Box, rect: Rect) -> float:
    """Points between a box and a rect (0 when they overlap)."""
    dx = max(rect.x0 - box[2], box[0] - rect.x1, 0.0)
    dy = max(rect.y0 - box[3], box[1] - rect.y1, 0.0)
    return float((dx * dx + dy * dy) ** 0.5)
