"""Where a quoted sentence sits on the PDF page: one rectangle per line it covers.

The chunk's rectangles (one per text line, in reading order) say where the chunk is. The words of those
lines are read again with PyMuPDF, put in the chunk's line order, and the quote is found in their text with a
tolerant comparison (NFKC, letters and digits only, so ligatures and end-of-line hyphens do not matter).
When that fails, the quote's share of the chunk text is mapped onto the chunk's lines instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from workspace_app.models.documents import Chunk, Rect
from workspace_app.text.terms import loose

_Word = tuple[float, float, float, float, str]
_CACHE: OrderedDict[tuple[str, int], list[_Word]] = OrderedDict()
_CACHE_SIZE = 64
_LOCK = threading.Lock()


def locate_quote(pdf: Path, chunk: Chunk, quote: str, start: int | None = None) -> tuple[Rect, ...]:
    """Rectangles of `quote` inside `chunk` (empty for sources without page boxes)."""
    if not chunk.rects or not quote.strip():
        return ()
    try:
        found = _by_words(pdf, chunk, loose(quote))
    except (OSError, RuntimeError, ValueError, IndexError):  # an unreadable file only costs the fine highlight
        found = ()
    return found or _by_share(chunk, quote, start)


def _by_words(pdf: Path, chunk: Chunk, target: str) -> tuple[Rect, ...]:
    chars: list[int] = []  # line index per character of `text`
    boxes: list[tuple[int, _Word]] = []
    text = []
    for line_index, rect in enumerate(chunk.rects):
        for word in _line_words(pdf, rect):
            piece = loose(word[4])
            text.append(piece)
            chars.extend([len(boxes)] * len(piece))
            boxes.append((line_index, word))
    joined = "".join(text)
    begin, end = _find(joined, target)
    if begin < 0:
        return ()
    lines: dict[int, list[float]] = {}
    for box_index in sorted(set(chars[begin:end])):
        line_index, (x0, y0, x1, y1, _) = boxes[box_index]
        have = lines.setdefault(line_index, [x0, y0, x1, y1])
        have[:] = [min(have[0], x0), min(have[1], y0), max(have[2], x1), max(have[3], y1)]
    return tuple(Rect(chunk.rects[i].page, *lines[i]) for i in sorted(lines))


def _find(joined: str, target: str) -> tuple[int, int]:
    """Where the target is in the text: exactly, or between its first and last 24 characters."""
    if not target:
        return -1, -1
    at = joined.find(target)
    if at >= 0:
        return at, at + len(target)
    head, tail = target[:24], target[-24:]
    first = joined.find(head)
    last = joined.find(tail, first + 1) if first >= 0 else -1
    if first >= 0 and last >= 0 and last + len(tail) - first <= len(target) * 1.3:
        return first, last + len(tail)
    return -1, -1


def _line_words(pdf: Path, rect: Rect) -> list[_Word]:
    """Words whose centre lies in the rectangle, left to right."""
    words = _page_words(pdf, rect.page)
    inside = [
        w for w in words
        if rect.x0 - 1 <= (w[0] + w[2]) / 2 <= rect.x1 + 1 and rect.y0 - 1 <= (w[1] + w[3]) / 2 <= rect.y1 + 1
    ]
    return sorted(inside, key=lambda w: w[0])


def _page_words(pdf: Path, page: int) -> list[_Word]:
    key = (str(pdf), page)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    import pymupdf

    with pymupdf.open(pdf) as document:
        words = [(w[0], w[1], w[2], w[3], w[4]) for w in document[page - 1].get_text("words")]
    with _LOCK:
        _CACHE[key] = words
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return words


def _by_share(chunk: Chunk, quote: str, start: int | None) -> tuple[Rect, ...]:
    """Fallback: the lines over which the quote's characters would fall if spread by line width."""
    text = chunk.text
    begin = start if start is not None else text.find(quote)
    if begin < 0 or not text:
        return chunk.rects
    widths = [max(r.x1 - r.x0, 1.0) for r in chunk.rects]
    total = sum(widths)
    lo, hi = begin / len(text) * total, (begin + len(quote)) / len(text) * total
    chosen, edge = [], 0.0
    for rect, width in zip(chunk.rects, widths, strict=True):
        if edge + width > lo and edge < hi:
            chosen.append(rect)
        edge += width
    return tuple(chosen) or chunk.rects
