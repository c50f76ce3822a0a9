"""The words of a PDF page with their boxes and font sizes: the viewer's text layer, so a reader can select and copy
the text of a page drawn as an image.

PyMuPDF's word boxes (the extraction the highlighter uses) are laid over the page image by the frame; each word
carries the size of the font it is printed in, so the layer's text lines up with the image at every zoom and the
browser tests can measure how large the cited text is drawn. Words are read once per page and process
(`st.cache_data`, keyed by the file's sha256).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

DEFAULT_SIZE = 10.0  # points, for a word outside every text span (rare: PyMuPDF puts words in spans)


@dataclass(frozen=True)
class PageWord:
    """One word of a page: its box in PDF points (top-left origin), its text, its font size in points, and whether
    a line ends after it (the copied text keeps the line breaks)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    line_end: bool


@st.cache_data(max_entries=128, show_spinner=False)
def page_words(_file: Callable[[], bytes], sha256: str, page: int) -> tuple[PageWord, ...]:
    """The words of a 1-based page in reading order (none for a page the file lacks or a scanned page). Keyed by
    the file's `sha256`: the file is read only when the page's words are not cached yet."""
    import pymupdf

    with pymupdf.open(stream=_file(), filetype="pdf") as document:
        if not 1 <= page <= document.page_count:
            return ()
        drawn = document[page - 1]
        words = drawn.get_text("words", sort=False)
        sizes = _span_sizes(drawn.get_text("dict")["blocks"])
    return tuple(_word(w, words[i + 1] if i + 1 < len(words) else None, sizes) for i, w in enumerate(words))


def _span_sizes(blocks: list[dict[str, Any]]) -> list[tuple[float, float, float, float, float]]:
    """(x0, y0, x1, y1, size) of every text span of the page."""
    return [(*span["bbox"], float(span["size"])) for block in blocks for line in block.get("lines", ())
            for span in line["spans"] if span["text"].strip()]


def _word(word: tuple[Any, ...], following: tuple[Any, ...] | None, sizes: list[tuple[float, float, float, float, float]]) -> PageWord:
    """A word with the size of the span its centre falls in; a line ends where the next word's line differs."""
    x0, y0, x1, y1, text, block, line = word[:7]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    size = next((s for a, b, c, d, s in sizes if a <= cx <= c and b <= cy <= d), DEFAULT_SIZE)
    line_end = following is None or (following[5], following[6]) != (block, line)
    return PageWord(float(x0), float(y0), float(x1), float(y1), str(text), size, line_end)
