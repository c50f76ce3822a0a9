"""OCR of PDF pages without a usable text layer (whole scans, a scanned page inside a born-digital PDF).

    page with < `max_chars` characters of text and images over >= `min_image_share` of it
        -> rendered at `dpi` -> an `OcrEngine` reads text lines with boxes (pixels)
        -> `TextLine`s in PDF points, as the text layer gives them (so chunks carry boxes and citations highlight)

The engine is a one-method seam (`OcrEngine.read`) chosen by name (`ingest.ocr_engine`); `rapidocr` runs the
PP-OCR ONNX models shipped in its wheel with onnxruntime (offline). It is loaded at first use, once per process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any, Protocol

import pymupdf

from workspace_app.errors import ModelUnavailableError
from workspace_app.ingest.layout import TextLine

if TYPE_CHECKING:
    import numpy as np

    from workspace_app.config import IngestSettings

# A detected line box is taller than the font size (ascenders, descenders and the detector's margin). 1.45 gave the
# text layer's median size within 0.3 pt on an English corpus page; Chinese pages come out ~25 % smaller. Only sizes
# relative to each other matter (headings, paragraph breaks), and a scanned document's are all made this way.
_BOX_PER_POINT = 1.45
# Lines within this share of a page's typical height get its size, so one paragraph's lines keep one size
# (paragraphs break where the size changes by more than a few tenths of a point).
_SAME_SIZE = 0.25
# The detector pads each box (rapidocr's unclip ratio 1.6), so neighbouring lines' boxes overlap; on a slightly
# skewed scan the reading order then took overlapping lines as one row and read them by x (lines of a column
# swapped). A line's box is the middle share of the detected one, as tall as the text layer's line boxes.
_CORE = 0.7


@dataclass(frozen=True)
class OcrLine:
    """One line an engine read: its text and box in the image's pixels (x0, y0, x1, y1)."""

    text: str
    box: tuple[float, float, float, float]
    score: float


class OcrEngine(Protocol):
    """Reads the text lines of a page image (RGB, height x width x 3)."""

    def read(self, image: np.ndarray) -> list[OcrLine]: ...


class RapidOcrEngine:
    """PP-OCR (detection + recognition, Chinese and English) through `rapidocr` and onnxruntime."""

    def __init__(self) -> None:
        # onnxruntime looks up a telemetry host unless told not to (docs/STACK: "onnxruntime phones home").
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            from rapidocr import RapidOCR
        except ImportError as exc:
            raise ModelUnavailableError(
                "The OCR engine (rapidocr) is not installed: install it, or set WORKSPACE_INGEST__OCR_ENGINE=none."
            ) from exc
        # Pages are upright: the text-direction classifier only costs time.
        self._ocr = RapidOCR(params={"Global.log_level": "error", "Global.use_cls": False})

    def read(self, image: np.ndarray) -> list[OcrLine]:
        """The lines of the image, each with its axis-aligned box."""
        found: Any = self._ocr(image)
        if found.boxes is None:
            return []
        lines = []
        for points, text, score in zip(found.boxes, found.txts, found.scores, strict=True):
            xs, ys = [float(p[0]) for p in points], [float(p[1]) for p in points]
            if text.strip():
                lines.append(OcrLine(text.strip(), (min(xs), min(ys), max(xs), max(ys)), float(score)))
        return lines


_ENGINES: dict[str, Callable[[], OcrEngine]] = {"rapidocr": RapidOcrEngine}
_LOADED: dict[str, OcrEngine] = {}
_LOADING = threading.Lock()  # a worker ingests two documents at once: both may reach their first scanned page


def load_engine(name: str) -> OcrEngine:
    """The named engine, made at first use and kept for the process (its models take a second or two to load)."""
    if name not in _ENGINES:
        raise ModelUnavailableError(f"Unknown OCR engine {name!r}: use one of {', '.join(_ENGINES)} or none.")
    with _LOADING:
        if name not in _LOADED:
            _LOADED[name] = _ENGINES[name]()
        return _LOADED[name]


@dataclass(frozen=True)
class PageOcr:
    """Whether and how pages without a usable text layer are read by OCR; `report(done, total)` follows the pages
    (it may raise to stop: the pipeline's cancel check)."""

    engine: str = "rapidocr"
    dpi: int = 200
    max_chars: int = 20
    min_image_share: float = 0.5
    report: Callable[[int, int], None] | None = None

    @classmethod
    def from_settings(cls, settings: IngestSettings, report: Callable[[int, int], None] | None = None) -> PageOcr:
        """The OCR the ingest settings ask for."""
        return cls(settings.ocr_engine, settings.ocr_dpi, settings.ocr_max_chars, settings.ocr_min_image_share, report)

    @property
    def enabled(self) -> bool:
        """Whether pages are read by OCR at all."""
        return self.engine != "none"


def needs_ocr(page: pymupdf.Page, lines: list[TextLine], ocr: PageOcr) -> bool:
    """A page whose text layer has fewer than `max_chars` characters and whose images cover most of it."""
    if sum(len(line.text) for line in lines) >= ocr.max_chars:
        return False
    return image_share(page) >= ocr.min_image_share


def image_share(page: pymupdf.Page) -> float:
    """The share of the page's area its images cover (overlaps counted twice; at most 1)."""
    area = page.rect.width * page.rect.height
    if area <= 0:
        return 0.0
    covered = 0.0
    for info in page.get_image_info():
        box = page.rect & info["bbox"]
        covered += max(box.width, 0.0) * max(box.height, 0.0)
    return min(covered / area, 1.0)


def read_scanned_pages(doc: pymupdf.Document, pages: list[list[TextLine]], ocr: PageOcr) -> list[int]:
    """Replace the lines of each page that needs OCR by the lines OCR reads on it; returns those pages (1-based).
    Reports (0, n) before the first page and (k, n) after each."""
    chosen = [index for index, lines in enumerate(pages) if needs_ocr(doc.load_page(index), lines, ocr)]
    if not chosen:
        return []
    engine = load_engine(ocr.engine)
    for done, index in enumerate(chosen):
        if ocr.report:
            ocr.report(done, len(chosen))
        pages[index] = ocr_page(doc.load_page(index), engine, ocr.dpi)
    if ocr.report:
        ocr.report(len(chosen), len(chosen))
    return [index + 1 for index in chosen]


def ocr_page(page: pymupdf.Page, engine: OcrEngine, dpi: int) -> list[TextLine]:
    """The page rendered at `dpi` and read by `engine`, as text lines in PDF points (top-left origin)."""
    import numpy as np

    pixmap = page.get_pixmap(dpi=dpi, alpha=False, colorspace=pymupdf.csRGB)
    image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width, pixmap.n)
    found = engine.read(image)
    scale = page.rect.width / pixmap.width
    return to_text_lines(found, page.number + 1, scale, (page.rect.x0, page.rect.y0))


def to_text_lines(found: list[OcrLine], page_number: int, scale: float, origin: tuple[float, float]) -> list[TextLine]:
    """OCR lines as `TextLine`s: boxes scaled from pixels to points, a font size from the box height (lines of
    about the page's typical height share one size, so a paragraph's lines stay together). Vertical lines (a
    rotated table header, a margin note) are left out, as the text layer's rotated lines are."""
    if not found:
        return []
    found = [line for line in found if not _vertical(line)]
    if not found:
        return []
    typical = median(line.box[3] - line.box[1] for line in found)
    lines = []
    for line in found:
        x0, top, x1, bottom = (value * scale for value in line.box)
        middle, half = (top + bottom) / 2, _CORE * (bottom - top) / 2
        y0, y1 = middle - half, middle + half
        height = (line.box[3] - line.box[1])
        usual = abs(height - typical) <= _SAME_SIZE * typical
        size = round((typical if usual else height) * scale / _BOX_PER_POINT, 1)
        lines.append(TextLine(page_number, x0 + origin[0], y0 + origin[1], x1 + origin[0], y1 + origin[1],
                              line.text, size, bold=False))
    return lines


def _vertical(line: OcrLine) -> bool:
    """A box of several characters far taller than wide: text set vertically."""
    x0, y0, x1, y1 = line.box
    return len(line.text) > 1 and (y1 - y0) > 2 * (x1 - x0)
