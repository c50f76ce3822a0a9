"""PDF parsing with pymupdf: lines with boxes in reading order, without running headers and footers.

Symbol-font glyphs are read back first (`glyphs`); lines are then ordered (`reading_order`). Lines that
pymupdf splits at superscripts are rejoined. Headers and footers are lines near the page edge whose text,
digits masked, repeats on many pages.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workspace_app.errors import CorruptPdfError, EmptyFileError, EncryptedPdfError, ImageOnlyPdfError
from workspace_app.ingest.captioned_tables import join_table_rows
from workspace_app.ingest.glyphs import FontEncodings, recover_page
from workspace_app.ingest.grade_cells import attach_grade_cells, is_grade_cell, stands_apart, tag_recommendation_cells
from workspace_app.ingest.layout import GlyphCount, ParsedDocument, TextLine, needs_space
from workspace_app.ingest.ocr import PageOcr, read_scanned_pages
from workspace_app.ingest.paragraphs import build_paragraphs
from workspace_app.ingest.reading_order import page_order
from workspace_app.ingest.ruled_tables import join_ruled_rows, may_hold_table
from workspace_app.text.cjk import WIDE_PUNCTUATION

if TYPE_CHECKING:
    import pymupdf

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
# A line box taller than this many times its font size is a font's bogus metrics (`_text_height`); the text's
# top and bottom are then put where a CJK glyph box of that size sits around its baseline.
_TALL, _ASCENT, _DESCENT = 1.6, 0.86, 0.29
_OVERLAP = 2.0  # how far (pt) two pieces of one visual line may overlap (`_continues`)
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|[.\-,]B$|[.\-]Bd|HTK|Hei", re.IGNORECASE)
_EDGE_SHARE = 0.085
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Dingbat fonts draw list bullets with plain letters ("n" is a square in Zapf Dingbats, "l" a disc, "u" a
# diamond); read as text they put a stray "n " before every list item.
_BULLET_GLYPHS = frozenset("nlquvw■▪●•◦")
_NOT_AFTER_BULLET = re.compile(r"\s*[=<>≤≥)\]:,.a-z]")

# Text-showing operators of a content stream (Tj and TJ; the quote operators are rare: none in 10 of the 13 corpus
# PDFs): what reading a page's text layer costs grows with them (r 0.64-0.71 against the measured time per page on
# kusumoto-2018 and stout-2018); counting them takes ~2 % of the reading. The count weighs pages, it need not be exact.
_TEXT_SHOWING = re.compile(rb"T[Jj]")


class StageCallback(Protocol):
    """What parsing reports as it goes: (stage, done, total) and, where the items cost unlike amounts, `work`, the
    share of the stage's work done (0..1) that its time left is measured on. Two stages of pages: "parsing" reads
    every page's text layer (milliseconds a page, more the more text it shows); "tables" runs the layout model on the
    pages that may hold a table (most of parsing's time, on some pages only), so each stage's pace is even and its
    time left means something."""

    def __call__(self, stage: str, done: int, total: int, work: float | None = None) -> None: ...


# What a file that is not a PDF starts with, to say what it is (pymupdf opens images as one-page documents).
_OTHER_KINDS = (
    (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"), (b"MM\x00*", "a TIFF image"), (b"PK\x03\x04", "a ZIP archive (e.g. a Word file)"),
    (b"\xd0\xcf\x11\xe0", "an old Office document"), (b"<", "a web page or XML file"),
)


def open_pdf(path: Path, display_name: str) -> pymupdf.Document:
    """Open a PDF or raise a user-facing error that says what is wrong with it."""
    import pymupdf  # here, not at the top: a process that never reads a PDF skips its ~0.7 s import (layout models)

    if path.stat().st_size == 0:
        raise EmptyFileError(f"{display_name} is empty (0 bytes). Upload the complete file.")
    with path.open("rb") as file:
        head = file.read(1024)
    if b"%PDF-" not in head:
        kind = next((name for magic, name in _OTHER_KINDS if head.lstrip().startswith(magic)), "another kind of file")
        raise CorruptPdfError(
            f"{display_name} is not a PDF: it is {kind} with a .pdf name. Upload the PDF itself (or export the "
            "document as PDF)."
        )
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # pymupdf raises several types for damaged files
        raise CorruptPdfError(
            f"{display_name} is not a readable PDF (it may be damaged, truncated or another file type "
            "renamed to .pdf). Export it again as PDF and upload it once more."
        ) from exc
    if doc.needs_pass:
        doc.close()
        raise EncryptedPdfError(
            f"{display_name} is protected by a password. Remove the password (e.g. print to PDF) and upload it again."
        )
    if doc.page_count == 0:
        doc.close()
        raise CorruptPdfError(f"{display_name} has no pages. Export it again as PDF and upload it once more.")
    return doc


def check_pdf(path: Path, display_name: str, *, ocr: bool = False) -> None:
    """Raise what `parse_pdf` would raise for a file that is empty, not a PDF, damaged, locked or without a text
    layer (with `ocr`: without a text layer and without any page image to read), quickly: pages are read as plain
    text only until one has some (the first, in a usual PDF)."""
    doc = open_pdf(path, display_name)
    try:
        for index in range(doc.page_count):
            try:
                text = doc.load_page(index).get_text("text")
            except Exception as exc:
                raise CorruptPdfError(_damaged_page(display_name, index)) from exc
            if text.strip():
                return
        if not ocr:
            raise ImageOnlyPdfError(_no_text_layer(display_name))
        if not any(doc.load_page(index).get_images() for index in range(doc.page_count)):
            raise ImageOnlyPdfError(
                f"{display_name} has no text layer and no page image that OCR could read (it is blank or damaged). "
                "Check the file, or export it again as PDF and upload it once more."
            )
    finally:
        doc.close()


def _damaged_page(display_name: str, index: int) -> str:
    return (
        f"{display_name}: page {index + 1} cannot be read (the file is damaged). "
        "Export it again as PDF and upload it once more."
    )


def _no_text_layer(display_name: str, ocr: PageOcr | None = None) -> str:
    if ocr is not None and ocr.enabled:
        return (
            f"{display_name} has no text layer, and OCR read no text on its pages (blank, or images of no text). "
            "Check the file, or scan it again at a higher resolution."
        )
    return (
        f"{display_name} has no text layer (it looks scanned or image-only) and OCR is turned off "
        "(WORKSPACE_INGEST__OCR_ENGINE=none). Turn OCR on (rapidocr), or run OCR on it (e.g. ocrmypdf) and upload "
        "the result."
    )


def parse_pdf(
    path: Path, display_name: str, report: StageCallback | None = None, *, grade_cells: bool = True,
    ocr: PageOcr | None = None,
) -> ParsedDocument:
    """Parse a PDF into paragraphs in reading order; raise if it has no text at all. With `grade_cells` (the domain
    pack grades recommendations) grade cells are joined to their rows and grading lines are never headings. With
    `ocr` (enabled), pages without a usable text layer are read by OCR after the text layer of every page.
    `report` hears the "parsing" and "tables" stages' counts (`StageCallback`)."""
    doc = open_pdf(path, display_name)
    try:
        metadata_title = _clean(str((doc.metadata or {}).get("title") or ""))
        read = list(_read_pages(doc, display_name, report))
        pages = _read_tables(doc, [lines for lines, _ in read], report)
        if grade_cells:
            pages = [tag_recommendation_cells(attach_grade_cells(lines)) for lines in pages]
        if ocr is not None and grade_cells and ocr.is_cell is None:
            ocr = replace(ocr, is_cell=is_grade_cell)  # a grade cell the detector missed is read again
        scanned = read_scanned_pages(doc, pages, ocr) if ocr is not None and ocr.enabled else []
    finally:
        doc.close()
    for number in scanned:
        lines = pages[number - 1]
        pages[number - 1] = tag_recommendation_cells(attach_grade_cells(lines)) if grade_cells else lines
    set_aside = {number: count for number, (_, count) in enumerate(read, start=1) if count.total}
    empty = [number for number, lines in enumerate(pages, start=1) if not lines]
    if len(empty) == len(pages):
        raise ImageOnlyPdfError(_no_text_layer(display_name, ocr))
    drop = _running_furniture(pages)
    ordered = [page_order([line for line in lines if _furniture_key(line) not in drop]) for lines in pages]
    for line in (line for lines in pages for line in lines if _furniture_key(line) in drop):
        set_aside.setdefault(line.page, GlyphCount()).add(line.glyphs)
    title = metadata_title if _meaningful_title(metadata_title) else _first_page_title(pages)
    paragraphs = build_paragraphs(ordered, grade_lines=grade_cells)
    return ParsedDocument(paragraphs, len(pages), empty, title, _glyphs_by_page(ordered), set_aside, scanned)


def _glyphs_by_page(pages: list[list[TextLine]]) -> dict[int, GlyphCount]:
    """The symbol-font glyphs of the lines that make the text, per page."""
    counts: dict[int, GlyphCount] = {}
    for line in (line for lines in pages for line in lines if line.glyphs.total):
        counts.setdefault(line.page, GlyphCount()).add(line.glyphs)
    return counts


def _meaningful_title(title: str) -> bool:
    """Metadata titles are often empty or left over from the authoring tool ("Microsoft Word - x.doc")."""
    lowered = title.lower()
    junk = ("untitled", "microsoft word", ".doc", ".pdf", ".indd", "slide")
    return len(title.split()) >= 3 and not any(word in lowered for word in junk)


def _first_page_title(pages: list[list[TextLine]]) -> str:
    """The largest text near the top of the first page that has text (at most two lines)."""
    lines = next((page for page in pages if page), [])
    candidates = [line for line in lines if len(line.text) > 3]
    if not candidates:
        return ""
    largest = max(line.size for line in candidates)
    title_lines = sorted((ln for ln in candidates if ln.size >= largest - 0.5), key=lambda ln: ln.y0)[:2]
    return " ".join(line.text for line in title_lines)[:200]


def _read_pages(
    doc: pymupdf.Document, display_name: str, report: StageCallback | None
) -> Iterator[tuple[list[TextLine], GlyphCount]]:
    """Each page's lines from its text layer, and the symbol-font glyphs of the lines left out (rotated or empty)."""
    import pymupdf

    flags = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_LIGATURES & ~pymupdf.TEXT_PRESERVE_IMAGES
    total = doc.page_count
    encodings = FontEncodings(doc)
    work = _work_done(doc) if report is not None else []
    for index in range(total):
        try:
            page = doc.load_page(index)
            raw = page.get_text("dict", flags=flags)
            recover_page(page, raw, encodings, flags)
        except Exception as exc:
            raise CorruptPdfError(_damaged_page(display_name, index)) from exc
        set_aside = GlyphCount()
        lines = list(_raw_lines(raw, index + 1, set_aside))
        yield _merge_fragments(join_table_rows(_attach_drop_capitals(lines))), set_aside
        if report is not None:
            report("parsing", index + 1, total, work=work[index])


def _work_done(doc: pymupdf.Document) -> list[float]:
    """The share of reading the text layer done after each page: half of a page's weight is the page, half its
    text-showing operators against the document's mean (a reference page showing twice the text of a body page
    takes about twice as long; bench/README.md, "Parsing's pages weighed by the text they show")."""
    shown = [_text_showing(doc, index) for index in range(doc.page_count)]
    mean = sum(shown) / len(shown) or 1.0
    weights = [1.0 + count / mean for count in shown]
    whole, done, shares = sum(weights), 0.0, []
    for weight in weights:
        done += weight
        shares.append(done / whole)
    shares[-1] = 1.0  # the last page ends the stage, whatever the rounding
    return shares


def _text_showing(doc: pymupdf.Document, index: int) -> int:
    try:
        return len(_TEXT_SHOWING.findall(doc.load_page(index).read_contents()))
    except Exception:  # noqa: BLE001 - a damaged page is reported by the reading itself; here it weighs as a page
        return 0


def _read_tables(
    doc: pymupdf.Document, pages: list[list[TextLine]], report: StageCallback | None
) -> list[list[TextLine]]:
    """The pages with the rows of the tables the layout model finds joined, on the pages that may hold one
    (`may_hold_table`): the model takes ~40x a page's text, so it runs as a stage of its own."""
    candidates = [index for index, lines in enumerate(pages) if may_hold_table(lines)]
    joined = list(pages)
    if candidates and report is not None:
        report("tables", 0, len(candidates))  # the stage starts before its first page, not after it
    for done, index in enumerate(candidates, start=1):
        joined[index] = join_ruled_rows(pages[index], _table_boxes(doc.load_page(index)))
        if report is not None:
            report("tables", done, len(candidates))
    return joined


def _table_boxes(page: pymupdf.Page) -> list[tuple[float, float, float, float]]:
    """The boxes of the tables pymupdf's layout model sees on a page (none when it cannot say: the page is read as
    text). The model is what finds a table without ruling lines; its boxes are all the table finder would use."""
    try:
        page.get_layout()
        found: list[Any] = page.layout_information or []
    except Exception:  # noqa: BLE001 - the layout model is a heuristic; a page it cannot handle is still text
        return []
    return [(float(b[0]), float(b[1]), float(b[2]), float(b[3])) for b in found if b[-1] == "table"]


def _raw_lines(raw: dict[str, Any], page_number: int, set_aside: GlyphCount) -> Iterator[TextLine]:
    import pymupdf

    bullet_fonts = _bullet_fonts(_drawn_by_font(raw))
    for number, block in enumerate(raw.get("blocks", [])):
        if block.get("type") != 0:
            continue
        for line in block["lines"]:
            glyphs = line.get("glyphs", GlyphCount())
            dx, dy = line["dir"]
            spans = [span for span in line["spans"] if span["text"].strip()]
            text = _clean(_line_text(line["spans"], bullet_fonts)) if spans else ""
            if abs(dy) > 0.05 or dx <= 0 or not text:
                set_aside.add(glyphs)  # rotated margin notes ("Downloaded from ..."), empty lines
                continue
            main = max(spans, key=lambda span: len(span["text"].strip()))
            x0, y0, x1, y1 = line["bbox"]
            if y1 - y0 > _TALL * float(main["size"]):
                y0, y1 = _text_height(spans)
            bold = bool(main["flags"] & pymupdf.TEXT_FONT_BOLD) or bool(_BOLD_FONT.search(main["font"]))
            edges = (round(float(spans[0]["size"]), 1), round(float(spans[-1]["size"]), 1))
            yield TextLine(
                page_number, x0, y0, x1, y1, text, round(float(main["size"]), 1), bold, number, glyphs=glyphs,
                edge_sizes=edges if edges != (round(float(main["size"]), 1),) * 2 else None,
            )


def _text_height(spans: list[dict[str, Any]]) -> tuple[float, float]:
    """The top and bottom of a line's text, from its spans' baselines where a font's box is far taller than its
    size: some Latin fonts of Chinese journals report boxes twice as tall as their letters ("600 mg" in
    zh-dapt-chd-consensus-2021), and a line so boxed overlaps the lines above and below it, so that reading order
    and paragraphs interleave them."""
    tops, bottoms = [], []
    for span in spans:
        top, bottom = float(span["bbox"][1]), float(span["bbox"][3])
        size = float(span["size"])
        if bottom - top > _TALL * size:
            baseline = float(span["origin"][1])
            top, bottom = baseline - _ASCENT * size, baseline + _DESCENT * size
        tops.append(top)
        bottoms.append(bottom)
    return min(tops), max(bottoms)


def _bullet_fonts(drawn: dict[str, set[str]]) -> set[str]:
    """Fonts that draw nothing on the page but one bullet-like character: dingbat fonts used for lists."""
    return {font for font, texts in drawn.items() if texts <= _BULLET_GLYPHS and "ital" not in font.lower()}


def _drawn_by_font(raw: dict[str, Any]) -> dict[str, set[str]]:
    """The distinct stripped span texts each font draws on the page."""
    drawn: dict[str, set[str]] = {}
    for block in raw.get("blocks", []):
        for line in block.get("lines", []):
            for span in line["spans"]:
                if text := span["text"].strip():
                    drawn.setdefault(span["font"], set()).add(text)
    return drawn


def _line_text(spans: list[dict[str, Any]], bullet_fonts: set[str]) -> str:
    """The line's text, with a dingbat bullet that starts it written as "•" (not when what follows reads like
    an italic variable: "n = 40", "n)")."""
    parts = [span["text"] for span in spans]
    first = next((i for i, span in enumerate(spans) if span["text"].strip()), None)
    if first is not None and spans[first]["font"] in bullet_fonts:
        rest = "".join(parts[first + 1 :])
        if not _NOT_AFTER_BULLET.match(rest):
            parts[first] = parts[first].replace(parts[first].strip(), "•")
    return "".join(parts)


def _clean(text: str) -> str:
    text = _CONTROL.sub(" ", text.translate(_LIGATURES)).replace("\u00a0", " ")
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _attach_drop_capitals(lines: list[TextLine]) -> list[TextLine]:
    """Put a large initial letter ("S" of "Substantial") back in front of the line it starts."""
    if not lines:
        return lines
    typical = sorted(line.size for line in lines)[len(lines) // 2]
    kept = []
    for line in lines:
        if len(line.text) <= 2 and line.text.isalpha() and line.size >= 2.5 * typical:
            beside = [
                other for other in lines
                if other is not line and line.x1 - 2 <= other.x0 <= line.x1 + 3 * typical and line.y0 - 5 <= other.y0 <= line.y1
            ]
            if beside:
                first = min(beside, key=lambda other: other.y0)
                first.text = line.text + first.text
                first.glyphs.add(line.glyphs)
                first.x0 = line.x0
                continue
        kept.append(line)
    return kept


def _merge_fragments(lines: list[TextLine]) -> list[TextLine]:
    """Join pieces of one visual line (superscripts, font changes) that pymupdf returned separately."""
    merged: list[TextLine] = []
    rows: dict[int, list[TextLine]] = {}
    for line in sorted(lines, key=lambda ln: ln.x0):
        bucket = int(line.y_mid // 4)
        nearby = [m for b in (bucket - 1, bucket, bucket + 1) for m in rows.get(b, [])]
        target = next((m for m in nearby if _continues(m, line)), None)
        if target is None:
            merged.append(line)
            rows.setdefault(bucket, []).append(line)
            continue
        joiner = " " if (line.x0 - target.x1 > 0.2 * max(target.size, 1)) and needs_space(target.text, line.text) else ""
        target.text += joiner + line.text
        target.glyphs.add(line.glyphs)
        target.x1 = max(target.x1, line.x1)
        start = target.edge_sizes[0] if target.edge_sizes else target.size
        end = line.edge_sizes[1] if line.edge_sizes else line.size
        target.edge_sizes = (start, end) if (start, end) != (target.size, target.size) else None
        target.y0, target.y1 = min(target.y0, line.y0), max(target.y1, line.y1)
    return merged


def _continues(left: TextLine, right: TextLine) -> bool:
    if left.apart or right.apart:
        return False
    overlap = min(left.y1, right.y1) - max(left.y0, right.y0)
    if overlap < 0.5 * min(left.height, right.height):
        return False
    gap = right.x0 - left.x1
    size = max(left.size, right.size, 4.0)
    if stands_apart(left, right, gap):
        return False
    if left.block == right.block >= 0:
        # Words of a justified line that pymupdf returned one by one; a raised reference mark's box may reach into
        # the glyph before it, and CJK punctuation set half-width keeps a full-width box that overlaps its neighbour
        # ("…进行正式评估；" + "（2）基于非直" in zh-hfpef-consensus-2023).
        return -_overlap(left, right) <= gap <= 2.5 * size
    # Column gutters can be narrow: only a short piece or a change of size (a superscript) is joined, also one
    # where the pieces meet ("… 0 之间" + "[117]），INR 处于…", the reference mark raised and small).
    # A raised mark's box may reach into the glyph before it (2 pt in zh-dapt-chd-consensus-2021).
    short = min(len(left.text), len(right.text)) <= 12
    if short:
        return -_overlap(left, right) <= gap <= 1.2 * size
    left_end = left.edge_sizes[1] if left.edge_sizes else left.size
    right_start = right.edge_sizes[0] if right.edge_sizes else right.size
    resized = abs(left.size - right.size) > 0.5 or abs(left_end - right_start) > 0.5
    return resized and -_OVERLAP <= gap <= 0.4 * size


def _overlap(left: TextLine, right: TextLine) -> float:
    """How far (pt) two pieces of one visual line may overlap: a font size (and a little) where they meet at CJK
    punctuation (set half-width in a full-width box: "…多个方面：" overlaps "（1）系统" by exactly 1 em), `_OVERLAP`
    elsewhere."""
    seam = left.text[-1:] + right.text[:1]
    return max(_OVERLAP, left.size, right.size) + 0.5 if WIDE_PUNCTUATION.search(seam) else _OVERLAP


def _furniture_key(line: TextLine) -> str:
    return re.sub(r"\d+", "#", line.text.lower()).replace(" ", "") + f"@{'top' if line.y0 < 400 else 'bottom'}"


def _running_furniture(pages: list[list[TextLine]]) -> set[str]:
    """Keys of lines near the top or bottom edge that repeat on many pages (or are bare page numbers)."""
    counts: Counter[str] = Counter()
    heights = {line.page: max((ln.y1 for ln in lines), default=0.0) for lines in pages for line in lines[:1]}
    for lines in pages:
        keys = {_furniture_key(ln) for ln in lines if _near_edge(ln, heights.get(ln.page, 0.0))}
        counts.update(keys)
    threshold = max(2, int(0.3 * len(pages)))
    repeated = {key for key, count in counts.items() if count >= threshold}
    return repeated | {key for key in counts if re.fullmatch(r"[·\-–—\s]*[e]?#[·\-–—\s]*@\w+", key)}


def _near_edge(line: TextLine, content_bottom: float) -> bool:
    edge = _EDGE_SHARE * max(content_bottom, 1.0)
    return line.y1 < max(edge, 72.0) or line.y0 > content_bottom - edge
