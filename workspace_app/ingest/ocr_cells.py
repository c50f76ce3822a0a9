"""Table cells OCR's detector missed, read again by the recognizer alone.

The detector finds lines of text; a cell of one thin glyph ("I", a class of recommendation) it often does not see,
while the cell beside it ("B", the level) it does. Without the missing cell a row loses half its grade, and the
row's statement runs on into the next. Where a page holds two neighbouring columns of such cells (what the
document's grammar calls a cell: `is_cell`) and a row has a cell in one column and nothing in the other, the other
column's box at that row is read with the recognizer alone; what it reads is kept when it is such a cell too and
the recognizer is sure enough (`min_score`). Boxes are in the image's pixels, as the engine gives them.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import median
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from workspace_app.ingest.ocr import OcrLine

_MAX_GAP = 6.0  # line heights between two columns of cells of one table


class Recognizer(Protocol):
    """Reads the one line of text an image holds (no detection): its text and the recognizer's confidence."""

    def recognize(self, image: np.ndarray) -> tuple[str, float]: ...


def missed_cells(
    found: list[OcrLine], image: np.ndarray, engine: Recognizer, is_cell: Callable[[str], bool], min_score: float
) -> list[OcrLine]:
    """The cells read again where a row of two neighbouring cell columns has only one of its two cells."""
    from workspace_app.ingest.ocr import OcrLine

    cells = [line for line in found if is_cell(line.text)]
    columns = _columns(cells)
    added: list[OcrLine] = []
    for left in columns:
        for right in columns:
            if not _neighbours(left, right):
                continue
            for have, missing in ((right, left), (left, right)):
                x0, x1 = min(c.box[0] for c in missing), max(c.box[2] for c in missing)
                height = median(c.box[3] - c.box[1] for c in missing)
                x0, x1 = x0 - height / 2, x1 + height / 2
                for cell in have:
                    if any(_same_row(cell, line) and line.box[2] > x0 and line.box[0] < x1 for line in found + added):
                        continue
                    middle = (cell.box[1] + cell.box[3]) / 2
                    top, bottom = max(int(middle - height), 0), int(middle + height)
                    text, score = engine.recognize(image[top:bottom, max(int(x0), 0) : int(x1)])
                    text = text.strip()
                    if text and score >= min_score and is_cell(text):
                        box = (x0 + height / 2, cell.box[1], x1 - height / 2, cell.box[3])
                        added.append(OcrLine(text, box, score))
    return added


def _columns(cells: list[OcrLine]) -> list[list[OcrLine]]:
    """Cells grouped by their horizontal centre (within a line height of the column's)."""
    columns: list[list[OcrLine]] = []
    for cell in sorted(cells, key=_centre):
        height = cell.box[3] - cell.box[1]
        column = next((c for c in columns if abs(median(_centre(o) for o in c) - _centre(cell)) <= height), None)
        if column is None:
            columns.append([cell])
        else:
            column.append(cell)
    return columns


def _neighbours(left: list[OcrLine], right: list[OcrLine]) -> bool:
    """Two columns of one table: `right` right of `left` and close, sharing a row, three cells or more between them."""
    if left is right or median(_centre(c) for c in left) >= median(_centre(c) for c in right):
        return False
    height = median(c.box[3] - c.box[1] for c in left + right)
    gap = min(c.box[0] for c in right) - max(c.box[2] for c in left)
    shared = any(_same_row(a, b) for a in left for b in right)
    return 0 <= gap <= _MAX_GAP * height and shared and len(left) + len(right) >= 3


def _same_row(a: OcrLine, b: OcrLine) -> bool:
    height = max(a.box[3] - a.box[1], b.box[3] - b.box[1])
    return abs((a.box[1] + a.box[3]) / 2 - (b.box[1] + b.box[3]) / 2) < height / 2


def _centre(line: OcrLine) -> float:
    return (line.box[0] + line.box[2]) / 2
