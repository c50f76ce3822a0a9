"""The PDF side panel: the cited pages with the chunk outlined and the supporting sentence drawn strongly.

Only the cited pages are sent (the service cuts them out of the PDF): the viewer re-sends and re-renders its
whole input on every rerun.
"""

from __future__ import annotations

import streamlit as st
from streamlit_pdf_viewer import pdf_viewer

from components.citations import pages_label
from components.text import escape_markdown
from workspace_app.app import CitationExcerpt, grading_text
from workspace_app.models.answers import Citation
from workspace_app.models.documents import Rect

CHUNK_COLOUR = "#d97706"
QUOTE_COLOUR = "#dc2626"


def build_annotations(citation: Citation, pages: list[int]) -> tuple[list[dict[str, object]], int | None]:
    """Viewer annotations on the excerpt's pages, and the 1-based position of the first quote box."""
    index = {page: i + 1 for i, page in enumerate(pages)}
    annotations: list[dict[str, object]] = []
    for i, rect in enumerate(citation.chunk_rects):
        if rect.page in index:
            annotations.append(_box(rect, index[rect.page], f"chunk-{citation.n}-{i}", CHUNK_COLOUR, "dotted", 0.0))
    first_quote = None
    for i, rect in enumerate(citation.rects):
        if rect.page in index:
            # Drawn twice, the second box a point larger: a thicker outline than the chunk's.
            annotations.append(_box(rect, index[rect.page], f"quote-{citation.n}-{i}", QUOTE_COLOUR, "solid", 0.0))
            first_quote = first_quote or len(annotations)
            annotations.append(_box(rect, index[rect.page], f"quote-{citation.n}-{i}-outer", QUOTE_COLOUR, "solid", 1.0))
    return annotations, first_quote


def _box(rect: Rect, page: int, ident: str, colour: str, border: str, grow: float) -> dict[str, object]:
    return {
        "page": page, "x": rect.x0 - grow, "y": rect.y0 - grow, "width": rect.x1 - rect.x0 + 2 * grow,
        "height": rect.y1 - rect.y0 + 2 * grow, "color": colour, "border": border, "id": ident,
    }


def render_pdf_panel(citation: Citation | None, excerpt: CitationExcerpt | None, *, key: str) -> None:
    """The cited page(s) with highlights, or a hint when no citation is open."""
    if citation is None:
        st.info("Click a citation such as [1] to open the cited page here.", icon=":material/picture_as_pdf:")
        return
    grading = grading_text(citation)
    st.markdown(f"**\\[{citation.n}\\] {escape_markdown(citation.document)}** · {pages_label(citation)}")
    st.caption(escape_markdown(" · ".join(part for part in (citation.section, grading) if part)))
    st.markdown(f"> {escape_markdown(citation.quote)}")
    if excerpt is None:
        return
    annotations, first_quote = build_annotations(citation, excerpt.pages)
    pdf_viewer(
        excerpt.pdf, height=760, key=f"{key}-{citation.chunk_id}-{citation.n}", annotations=annotations,
        pages_to_render=list(range(1, len(excerpt.pages) + 1)), render_text=False, annotation_outline_size=2,
        scroll_to_annotation=first_quote, scroll_behavior="instant",
    )
    shown = ", ".join(str(p) for p in excerpt.pages)
    st.caption(f"Showing page {shown} of {escape_markdown(excerpt.document)}: the passage is outlined, the supporting sentence in red.")
