"""OCR of PDF pages without a usable text layer (whole scans, a scanned page inside a born-digital PDF).

    page with < `max_chars` characters of text and images over >= `min_image_share` of it
        -> rendered at `dpi` -> an `OcrEngine` reads text lines with boxes (pixels)
        -> `TextLine`s in PDF points, as the text layer gives them (so chunks carry boxes and citations highlight)

The engine is a one-method seam (`OcrEngine.read`) chosen by name (`ingest.ocr_engine`); `rapidocr` runs the
PP-OCR ONNX models shipped in its wheel with onnxruntime (offline). Engines are made at first use and kept for the
process in a pool: `ocr_workers` pages are read at once, each by its own engine on `ocr_threads` threads (one thread
each spends no CPU spinning between operators: bench/README.md "OCR of scanned pages"). Pages are rendered on the
caller's thread (pymupdf is not thread-safe) and handed back in page order.
"""

from __future__ import annotations

import os
import queue
import re
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any, Protocol

from workspace_app.errors import ModelUnavailableError
from workspace_app.ingest.layout import TextLine
from workspace_app.ingest.line_ink import LineInk, ink_mask, measure_line
from workspace_app.ingest.ocr_cells import missed_cells

if TYPE_CHECKING:
    import numpy as np
    import pymupdf

    from workspace_app.config import IngestSettings

# A line whose glyphs could not be measured (line_ink) takes its size from its detected box, which is taller than the
# font size (ascenders, descenders and the detector's margin): 1.45 gave the text layer's median size within 0.3 pt
# on an English corpus page.
_BOX_PER_POINT = 1.45
# A page's body weight is the median stroke of its lines of the typical size holding at least this many letters
# (a short line's stroke is a noisy measure), when it has at least `_WEIGHED_LINES` of them.
_WEIGHED_LETTERS = 8
_WEIGHED_LINES = 3
# The detector pads each box (rapidocr's unclip ratio 1.6), so neighbouring lines' boxes overlap; on a slightly
# skewed scan the reading order then took overlapping lines as one row and read them by x (lines of a column
# swapped). A line's box is the middle share of the detected one, as tall as the text layer's line boxes.
_CORE = 0.7
# Line images are recognised one at a time: rapidocr pads a batch to its widest line, and on this CPU batches of 6
# cost ~25 % more CPU than single lines (batches of 24 ~40 % more) for the same text.
_REC_BATCH = 1
# A Roman numeral of two to four strokes with an optional letter, some read as "l" or "|": the recognizer's reading of
# a table cell holding "II", "IIa" or "III" (the dev PDFs' scans: "Ila" 51 times, "Ilb" 21 against "IIb" 7).
_MISREAD_NUMERAL = re.compile(r"[Il|]{2,4}[ab]?")


@dataclass(frozen=True)
class OcrLine:
    """One line an engine read: its text and box in the image's pixels (x0, y0, x1, y1)."""

    text: str
    box: tuple[float, float, float, float]
    score: float


class OcrEngine(Protocol):
    """Reads the text lines of a page image (RGB, height x width x 3), or the one line a small image holds."""

    def read(self, image: np.ndarray) -> list[OcrLine]: ...

    def recognize(self, image: np.ndarray) -> tuple[str, float]: ...


class RapidOcrEngine:
    """PP-OCR (detection + recognition, Chinese and English) through `rapidocr` and onnxruntime; the detector sees
    the page at most `detection_side` pixels on its longest side, and each model runs on `threads` threads."""

    def __init__(self, detection_side: int = 1280, threads: int = 1) -> None:
        # onnxruntime looks up a telemetry host unless told not to (docs/STACK: "onnxruntime phones home").
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            from rapidocr import RapidOCR
        except ImportError as exc:
            raise ModelUnavailableError(
                "The OCR engine (rapidocr) is not installed: install it, or set WORKSPACE_INGEST__OCR_ENGINE=none."
            ) from exc
        # Pages are upright: the text-direction classifier only costs time.
        self._ocr = RapidOCR(params={
            "Global.log_level": "error", "Global.use_cls": False,
            "Det.limit_type": "max", "Det.limit_side_len": detection_side, "Rec.rec_batch_num": _REC_BATCH,
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        })

    def read(self, image: np.ndarray) -> list[OcrLine]:
        """The lines of the image, each with its axis-aligned box."""
        # Every step named on every call: rapidocr keeps them from the call before (a `recognize` turns detection off).
        found: Any = self._ocr(image, use_det=True, use_cls=False, use_rec=True)
        if found.boxes is None:
            return []
        lines = []
        for points, text, score in zip(found.boxes, found.txts, found.scores, strict=True):
            xs, ys = [float(p[0]) for p in points], [float(p[1]) for p in points]
            if text.strip():
                lines.append(OcrLine(text.strip(), (min(xs), min(ys), max(xs), max(ys)), float(score)))
        return lines

    def recognize(self, image: np.ndarray) -> tuple[str, float]:
        """The text of an image holding one line (recognition alone) and its score; ("", 0) when it reads none."""
        if image.size == 0:
            return "", 0.0
        found: Any = self._ocr(image, use_det=False, use_cls=False, use_rec=True)
        return (str(found.txts[0]), float(found.scores[0])) if found.txts else ("", 0.0)


_ENGINES: dict[str, Callable[[int, int], OcrEngine]] = {"rapidocr": RapidOcrEngine}
_LOADED: dict[str, OcrEngine] = {}
_LOADING = threading.Lock()  # a worker ingests two documents at once: both may reach their first scanned page


def load_engine(name: str) -> OcrEngine:
    """The named engine with its default settings, made at first use and kept for the process (its models take a
    second or two to load); figure pictures are read with it."""
    _check_name(name)
    with _LOADING:
        if name not in _LOADED:
            _LOADED[name] = _ENGINES[name](1280, 1)
        return _LOADED[name]


def _check_name(name: str) -> None:
    if name not in _ENGINES:
        raise ModelUnavailableError(f"Unknown OCR engine {name!r}: use one of {', '.join(_ENGINES)} or none.")


class EnginePool:
    """Engines of one kind and configuration, each used by one thread at a time; at most `size` are made (lazily).
    Two documents ingested at once share the pool, so together they never read more than `size` pages at once."""

    def __init__(self, make: Callable[[], OcrEngine], size: int) -> None:
        self.size = size
        self._make = make
        self._idle: queue.LifoQueue[OcrEngine] = queue.LifoQueue()
        self._made = 0
        self._lock = threading.Lock()

    @contextmanager
    def engine(self) -> Iterator[OcrEngine]:
        """An idle engine (made if fewer than `size` exist, else the next one given back), given back after use."""
        try:
            engine = self._idle.get_nowait()
        except queue.Empty:
            engine = self._new() or self._idle.get()
        try:
            yield engine
        finally:
            self._idle.put(engine)

    def _new(self) -> OcrEngine | None:
        with self._lock:
            if self._made >= self.size:
                return None
            self._made += 1
        try:
            return self._make()
        except BaseException:
            with self._lock:
                self._made -= 1
            raise


_POOLS: dict[tuple[str, int, int], EnginePool] = {}


def engine_pool(name: str, detection_side: int, threads: int, size: int) -> EnginePool:
    """The process's pool of engines of this configuration, holding at least `size` (made at first use)."""
    _check_name(name)
    with _LOADING:
        pool = _POOLS.setdefault(
            (name, detection_side, threads), EnginePool(lambda: _ENGINES[name](detection_side, threads), size)
        )
        pool.size = max(pool.size, size)
        return pool


@dataclass(frozen=True)
class PageOcr:
    """Whether and how pages without a usable text layer are read by OCR; `report(done, total)` follows the pages
    (it may raise to stop: the pipeline's cancel check); `on_read(page, lines)` receives each page's lines (1-based,
    in page order) as soon as it is read, before its report (the pipeline makes it searchable at once)."""

    engine: str = "rapidocr"
    dpi: int = 200
    max_chars: int = 20
    min_image_share: float = 0.5
    report: Callable[[int, int], None] | None = None
    detection_side: int = 1280
    workers: int = 2
    threads: int = 1
    on_read: Callable[[int, list[TextLine]], None] | None = None
    same_size: float = 0.25
    bold_stroke: float = 1.3
    # What the documents' grammar calls a table cell (the domain pack's grade cells: "I", "IIa", "B"), read again
    # where the detector missed one beside another (`ocr_cells`); None: no cells are read again.
    is_cell: Callable[[str], bool] | None = None
    cell_min_score: float = 0.3

    @classmethod
    def from_settings(
        cls, settings: IngestSettings, report: Callable[[int, int], None] | None = None,
        on_read: Callable[[int, list[TextLine]], None] | None = None,
    ) -> PageOcr:
        """The OCR the ingest settings ask for."""
        return cls(
            settings.ocr_engine, settings.ocr_dpi, settings.ocr_max_chars, settings.ocr_min_image_share, report,
            settings.ocr_detection_side, settings.ocr_workers, settings.ocr_threads, on_read,
            settings.ocr_same_size, settings.ocr_bold_stroke, cell_min_score=settings.ocr_cell_min_score,
        )

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
    Reports (0, n) before the first page and (k, n) after each, in page order."""
    chosen = [index for index, lines in enumerate(pages) if needs_ocr(doc.load_page(index), lines, ocr)]
    if not chosen:
        return []
    pool = engine_pool(ocr.engine, ocr.detection_side, ocr.threads, ocr.workers)
    if ocr.report:
        ocr.report(0, len(chosen))
    with closing(read_in_order(doc, chosen, pool, ocr)) as read:
        for done, (index, lines) in enumerate(read, start=1):
            pages[index] = lines
            if ocr.on_read:
                ocr.on_read(index + 1, lines)
            if ocr.report:
                ocr.report(done, len(chosen))
    return [index + 1 for index in chosen]


def read_in_order(
    doc: pymupdf.Document, chosen: list[int], pool: EnginePool, ocr: PageOcr
) -> Generator[tuple[int, list[TextLine]], None, None]:
    """(0-based page, its OCR lines) for each chosen page, in order: pages are rendered here and read by up to
    `ocr.workers` engines at once (a few pages rendered ahead, so an engine never waits for a slow neighbour). When
    the caller stops early (a cancel), pages not started are dropped; those being read finish on their own."""
    executor = ThreadPoolExecutor(max(ocr.workers, 1), thread_name_prefix="ocr")
    ahead: deque[tuple[int, Future[list[TextLine]]]] = deque()
    try:
        for index in chosen:
            page = doc.load_page(index)
            ahead.append((index, executor.submit(_read_image, pool, ocr, *_render(page, ocr.dpi))))
            if len(ahead) > 2 * ocr.workers:
                first, future = ahead.popleft()
                yield first, future.result()
        while ahead:
            first, future = ahead.popleft()
            yield first, future.result()
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def _render(page: pymupdf.Page, dpi: int) -> tuple[np.ndarray, int, float, tuple[float, float]]:
    """The page as an RGB image at `dpi`, its 1-based number, points per pixel and its top-left corner."""
    import numpy as np
    import pymupdf

    pixmap = page.get_pixmap(dpi=dpi, alpha=False, colorspace=pymupdf.csRGB)
    image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width, pixmap.n)
    return image, page.number + 1, page.rect.width / pixmap.width, (page.rect.x0, page.rect.y0)


def _read_image(
    pool: EnginePool, ocr: PageOcr, image: np.ndarray, number: int, scale: float, origin: tuple[float, float]
) -> list[TextLine]:
    with pool.engine() as engine:
        found = [_as_roman_numeral(line) for line in engine.read(image)]
        if ocr.is_cell is not None:
            found += missed_cells(found, image, engine, ocr.is_cell, ocr.cell_min_score)
    mask = ink_mask(image)
    inks = [measure_line(mask, line.box, line.text) for line in found]
    return to_text_lines(found, number, scale, origin, inks, same_size=ocr.same_size, bold_stroke=ocr.bold_stroke)


def _as_roman_numeral(line: OcrLine) -> OcrLine:
    """A line standing alone that is a Roman numeral read with a lower-case l or a bar for a capital I ("Ila" for
    "IIa", "Il" for "II", "lllb"), as the recognizer reads a table cell of one; other lines as read."""
    text = line.text.strip()
    if _MISREAD_NUMERAL.fullmatch(text) and ("l" in text or "|" in text):
        return OcrLine(text.replace("l", "I").replace("|", "I"), line.box, line.score)
    return line


def to_text_lines(
    found: list[OcrLine], page_number: int, scale: float, origin: tuple[float, float],
    inks: list[LineInk] | None = None, *, same_size: float = 0.25, bold_stroke: float = 1.3,
) -> list[TextLine]:
    """OCR lines as `TextLine`s: boxes scaled from pixels to points; a font size from the line's glyph height
    (`inks`, else its box), lines within `same_size` of the page's typical size sharing it (so a paragraph's lines
    stay together); bold where the line's stroke is `bold_stroke` times the page's body weight or more. Vertical
    lines (a rotated table header, a margin note) are left out, as the text layer's rotated lines are."""
    inks = inks if inks is not None else [LineInk()] * len(found)
    kept = [(line, ink) for line, ink in zip(found, inks, strict=True) if not _vertical(line)]
    if not kept:
        return []
    sizes = [ink.em * scale if ink.em else (line.box[3] - line.box[1]) * scale / _BOX_PER_POINT for line, ink in kept]
    typical = median(sizes)
    sizes = [round(typical if abs(size - typical) <= same_size * typical else size, 1) for size in sizes]
    weights = _weights([ink for _, ink in kept], [line.text for line, _ in kept], sizes, scale)
    lines = []
    for (line, _), size, weight in zip(kept, sizes, weights, strict=True):
        x0, top, x1, bottom = (value * scale for value in line.box)
        middle, half = (top + bottom) / 2, _CORE * (bottom - top) / 2
        y0, y1 = middle - half, middle + half
        lines.append(TextLine(page_number, x0 + origin[0], y0 + origin[1], x1 + origin[0], y1 + origin[1],
                              line.text, size, bold=weight >= bold_stroke))
    return lines


def _weights(inks: list[LineInk], texts: list[str], sizes: list[float], scale: float) -> list[float]:
    """Each line's stroke width over its font size, divided by its page's body weight: the median of the page's long
    lines of its typical size and of the same script (0 where there are too few to say)."""
    typical = median(sizes)
    weights = [ink.stroke * scale / size if size else 0.0 for ink, size in zip(inks, sizes, strict=True)]
    body: dict[bool, list[float]] = {True: [], False: []}
    for ink, text, size, weight in zip(inks, texts, sizes, weights, strict=True):
        if weight and size == typical and sum(char.isalnum() for char in text) >= _WEIGHED_LETTERS:
            body[ink.chinese].append(weight)
    reference = {kind: median(found) if len(found) >= _WEIGHED_LINES else 0.0 for kind, found in body.items()}
    return [weight / reference[ink.chinese] if reference[ink.chinese] else 0.0
            for ink, weight in zip(inks, weights, strict=True)]


def _vertical(line: OcrLine) -> bool:
    """A box of several characters far taller than wide: text set vertically."""
    x0, y0, x1, y1 = line.box
    return len(line.text) > 1 and (y1 - y0) > 2 * (x1 - x0)
