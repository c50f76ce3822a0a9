"""What a text layer says about a line's type, measured on the pixels of an OCR'd line: glyph height and stroke weight.

    page image (grey) -> ink (dark pixels, Otsu) -> per detected line box: the glyphs inside it (connected pieces,
    those cut by the box's top or bottom edge left out: they belong to the neighbouring lines the padded box overlaps)
        -> glyph height: the em the glyphs imply (lower-case Latin: the median piece is the x-height; capitals and
           digits: the cap height; Chinese: each character's ink, measured one character-wide slice at a time, so a
           slightly skewed long line is not taller than a short one)
        -> stroke: twice the ink's area over its outline's length (a stroke's width, in pixels); the caller weighs
           it against the line's font size (so a larger heading is not bolder for being larger)

A table's ruling line inside a box (a long, flat piece) is no glyph and is left out too.

The detector's box height says little of the font size: it is padded in proportion to the box's shape, so a short
heading's box is smaller than a body line's of the same size, and a skewed long line's box is taller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# The em a glyph height implies: x-height, cap height and a Chinese character's ink as shares of the font size
# (typical text faces; only sizes relative to each other matter, and a scanned document's are all made this way).
_X_HEIGHT, _CAP_HEIGHT, _CJK_HEIGHT = 0.5, 0.7, 0.88
_MIN_PIECE = 4  # pixels: a smaller dark piece is a speck of noise, not a glyph's part


@dataclass(frozen=True)
class LineInk:
    """A line's glyph height as an em and its stroke width, both in pixels (0 when nothing was measured), and whether
    it is mostly Chinese (whose strokes are not weighed against Latin ones)."""

    em: float = 0.0
    stroke: float = 0.0
    chinese: bool = False


def ink_mask(image: np.ndarray) -> np.ndarray:
    """Dark pixels of an RGB (or grey) page image, by Otsu's threshold."""
    import cv2

    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) if image.ndim == 3 else image
    _, mask = cv2.threshold(grey, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    return mask


def measure_line(mask: np.ndarray, box: tuple[float, float, float, float], text: str) -> LineInk:
    """The glyph height and stroke weight of the line whose detected box (pixels) is `box`."""
    import cv2
    import numpy as np

    x0, y0 = max(int(box[0]), 0), max(int(box[1]), 0)
    x1, y1 = min(int(box[2]) + 1, mask.shape[1]), min(int(box[3]) + 1, mask.shape[0])
    if x1 - x0 < 2 or y1 - y0 < 2:
        return LineInk()
    crop = np.ascontiguousarray(mask[y0:y1, x0:x1])
    _, labels, stats, _ = cv2.connectedComponentsWithStats(crop, connectivity=8)
    tops, heights, areas = stats[1:, cv2.CC_STAT_TOP], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    rows = crop.shape[0]
    ruling = (stats[1:, cv2.CC_STAT_WIDTH] > 1.5 * rows) & (heights < 0.25 * rows)
    inside = (tops > 0) & (tops + heights < rows) & (areas >= _MIN_PIECE) & ~ruling
    if not inside.any():
        return LineInk()
    glyphs = np.isin(labels, np.flatnonzero(inside) + 1)
    letters = [char for char in text if char.isalpha() or char.isdigit()]
    chinese = sum(1 for char in letters if _CJK.match(char)) >= len(letters) / 2
    em = _em(glyphs, heights[inside], letters, chinese)
    if em <= 0:
        return LineInk()
    outline = int(np.count_nonzero(glyphs[:, 1:] != glyphs[:, :-1]) + np.count_nonzero(glyphs[1:] != glyphs[:-1]))
    stroke = 2 * float(glyphs.sum()) / outline if outline else 0.0
    return LineInk(em, stroke, chinese)


def _em(glyphs: np.ndarray, heights: np.ndarray, letters: list[str], chinese: bool) -> float:
    """The font size in pixels the line's glyphs imply, by the kind of characters it holds."""
    if not letters:
        return 0.0
    lower = sum(1 for char in letters if char.islower())
    if chinese:
        return _character_height(glyphs) / _CJK_HEIGHT
    ratio = _X_HEIGHT if lower >= len(letters) / 2 else _CAP_HEIGHT
    return float(median(heights.tolist())) / ratio


def _character_height(glyphs: np.ndarray) -> float:
    """The median height of the ink in slices about one character wide (as wide as the line is tall)."""
    import numpy as np

    rows, width = glyphs.shape
    step = max(rows // 2, 4)
    extents = []
    for left in range(0, width, step):
        inked = np.flatnonzero(glyphs[:, left:left + step].any(axis=1))
        if inked.size:
            extents.append(int(inked[-1] - inked[0] + 1))
    tall = [extent for extent in extents if extent >= 0.5 * max(extents)] if extents else []
    return float(median(tall)) if tall else 0.0
