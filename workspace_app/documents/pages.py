"""Pages of a stored PDF as images for the source viewer, drawn one page at a time when asked for.

The viewer shows a few pages around the cited one instead of the whole file, so a 300-page guideline costs
what a 1-page excerpt costs. Highlights are not drawn here: the viewer lays them over the image, so one
rendered page serves every citation on it.
"""

from __future__ import annotations

from pathlib import Path

from workspace_app.errors import PageNotFoundError
from workspace_app.models.documents import PageImage

MIN_SCALE = 0.5
MAX_SCALE = 4.0


def render_page(pdf: Path, page: int, scale: float) -> PageImage:
    """The 1-based page as a PNG at `scale` pixels per PDF point, or a clear error for a page it lacks."""
    import pymupdf

    scale = min(max(scale, MIN_SCALE), MAX_SCALE)
    with pymupdf.open(pdf) as document:
        if not 1 <= page <= document.page_count:
            raise PageNotFoundError(f"Page {page} does not exist; this source has {document.page_count} pages.")
        drawn = document[page - 1]
        pixmap = drawn.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
        return PageImage(page, document.page_count, pixmap.tobytes("png"), drawn.rect.width, drawn.rect.height)
