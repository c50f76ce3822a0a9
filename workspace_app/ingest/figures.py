"""Figures of a PDF page: raster images and vector drawings (flowcharts, charts) with their caption and box.

    raster images (`page.get_image_info()`) + drawing clusters (`page.cluster_drawings()`)
        -> page furniture and icons left out (size and position rules below)
        -> pieces that touch merged into one region per figure
        -> each caption ("Figure 3.", "FIGURE 3", "Fig. 2", "图 1", "Central Illustration") paired with the region
           beside it (above, below, or around it)
        -> a `FoundFigure`: page, box (PDF points, top-left origin), label, caption, the text inside its box

A region without a figure caption is kept only when it is a raster image of real size: vector drawings without one
are a table's rules and shading (ruled_tables.py reads those), a text box's frame or a coloured band. The labels are
typography, the same in every field; nothing here knows medicine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pymupdf

    from workspace_app.config import IngestSettings

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in points, top-left origin

# "FIGURE 3", "Figure 3.", "Fig. 2A", "Supplemental Figure 1", "Central Illustration", "图 1", "图1".
_LABEL = re.compile(
    r"^\s*(?:(?:Supplement(?:al|ary)\s+)?(?P<fig>FIGURE|Figure|FIG\.?|Fig\.?)\s*(?P<n>\d+[A-Za-z]?)\b"
    r"|(?P<central>CENTRAL ILLUSTRATION|Central Illustration)"
    r"|(?P<zh>图)\s*(?P<zn>\d+)(?![\d.)）]))"
)
# After the label a caption goes on with a title or punctuation; a sentence that only mentions a figure ("Figure 3
# shows that …", "Figure 2)") reads on in lower case or closes a bracket.
_TABLE = re.compile(r"^\s*(?:(?:TABLE|Table)\s+(?P<n>\d+)\b|表\s*(?P<zn>\d+)(?!\s*[\d.)）]))")
_LABEL_ONLY = re.compile(r"^\s*(?:(?:FIGURE|Figure|FIG\.?|Fig\.?|TABLE|Table)\s*\d+[A-Za-z]?|[图表]\s*\d+)")
_NOT_CAPTION = re.compile(r"^\s*(?:[a-z]|[)\]）,;])")
_CAPTION_CHARS = 400  # a caption is stored up to this length (the rest of a long legend stays in the chunks)
_TOUCH = 6.0  # points: pieces of one figure this close are merged (panels, arrows between boxes)
_DRAWING_TOLERANCE = 4.0
_PAGE_SHARE = 0.8  # an image or drawing over this share of the page is the page (a scan, a background)  # points: cluster_drawings' neighbourhood


@dataclass(frozen=True)
class FigureRules:
    """What counts as a figure: sizes in points and shares of the page (ingest settings `figure_*`)."""

    min_side: float = 40.0
    min_area_share: float = 0.015
    uncaptioned_area_share: float = 0.08
    margin_share: float = 0.07
    caption_gap: float = 60.0

    @classmethod
    def from_settings(cls, settings: IngestSettings) -> FigureRules:
        """The rules the ingest settings ask for."""
        return cls(
            settings.figure_min_side_pt, settings.figure_min_area_share, settings.figure_uncaptioned_area_share,
            settings.figure_margin_share, settings.figure_caption_gap_pt,
        )


@dataclass(frozen=True)
class Caption:
    """A text block that opens with a figure label."""

    label: str
    text: str
    box: Box


@dataclass(frozen=True)
class FoundFigure:
    """A figure on a 1-based page: its box, label ("Figure 3", "" without a caption), caption and inner text."""

    page: int
    box: Box
    label: str
    caption: str
    text: str
    kind: str  # "raster", "vector" or "mixed"


@dataclass
class _Region:
    box: Box
    raster: bool
    vector: bool

    @property
    def kind(self) -> str:
        return "mixed" if self.raster and self.vector else ("raster" if self.raster else "vector")


def find_figures(page: pymupdf.Page, rules: FigureRules = FigureRules()) -> list[FoundFigure]:
    """The figures of a page, top to bottom: each region with a figure caption, and raster images of real size
    without one (a region beside a table's caption is a table)."""
    blocks = _text_blocks(page)
    captions = [caption for caption in map(_caption, blocks) if caption is not None]
    regions = _merge(_raster_regions(page, rules) + _vector_regions(page, rules))
    paired = pair_captions(captions, [region.box for region in regions], rules.caption_gap)
    area = page.rect.width * page.rect.height
    found = []
    for index, region in enumerate(regions):
        caption = paired.get(index)
        if caption is not None and caption.label.startswith("Table"):
            continue  # a table, ruled or pictured: ruled_tables.py reads the ones with text
        if caption is None and not (region.raster and _area(region.box) >= rules.uncaptioned_area_share * area):
            continue
        box = _union(region.box, caption.box) if caption and _inside(caption.box, _grow(region.box, 2)) else region.box
        inner = _inner_text(blocks, box, caption)
        found.append(FoundFigure(
            page.number + 1, _rounded(box), caption.label if caption else "", caption.text if caption else "",
            inner, region.kind,
        ))
    return sorted(found, key=lambda figure: (figure.box[1], figure.box[0]))


def caption_label(text: str) -> str | None:
    """The figure label a caption opens with ("Figure 3", "Central Illustration", "图 1"), or None."""
    match = _LABEL.match(text)
    if match is None or _NOT_CAPTION.match(text[match.end():]):
        return None
    if match["fig"]:
        return f"Figure {match['n'].upper()}"
    if match["central"]:
        return "Central Illustration"
    return f"图 {match['zn']}"


def pair_captions(captions: Sequence[Caption], boxes: Sequence[Box], max_gap: float) -> dict[int, Caption]:
    """Each caption with the region beside it: the nearest one above, below or around it that shares a good part
    of its width, at most `max_gap` points away; nearest pairs first, one caption a region."""
    candidates = []
    for c_index, caption in enumerate(captions):
        for r_index, box in enumerate(boxes):
            gap = _gap(caption.box, box)
            if gap is not None and gap <= max_gap:
                candidates.append((gap, c_index, r_index))
    paired: dict[int, Caption] = {}
    used: set[int] = set()
    for _, c_index, r_index in sorted(candidates):
        if c_index not in used and r_index not in paired:
            paired[r_index] = captions[c_index]
            used.add(c_index)
    return paired


def _gap(caption: Box, region: Box) -> float | None:
    """Points between a caption and a region stacked with it (0 when it sits inside or over it), or None when they
    share no width (side by side: another column's). A short caption set flush left above a centred chart shares
    only a little of its width, so any overlap will do."""
    if min(caption[2], region[2]) <= max(caption[0], region[0]):
        return None
    if caption[1] >= region[3] - 2:
        return caption[1] - region[3] if caption[1] >= region[3] else 0.0  # below the region
    if caption[3] <= region[1] + 2:
        return region[1] - caption[3] if caption[3] <= region[1] else 0.0  # above it
    return 0.0  # inside it (a framed figure with its caption in the frame)


@dataclass(frozen=True)
class _Block:
    """A text block of the page: its box, its text, and its lines (box, text, font size)."""

    box: Box
    text: str
    lines: tuple[tuple[Box, str, float], ...]


def _text_blocks(page: pymupdf.Page) -> list[_Block]:
    """The page's text blocks of horizontal lines."""
    import pymupdf

    blocks = []
    for block in page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT)["blocks"]:
        lines = []
        for line in block.get("lines", []):
            spans = [span for span in line["spans"] if span["text"].strip()]
            if spans and abs(line["dir"][1]) < 0.05:
                text = " ".join("".join(span["text"] for span in line["spans"]).split())
                lines.append((_box(line["bbox"]), text, max(float(span["size"]) for span in spans)))
        if lines:
            blocks.append(_Block(_box(block["bbox"]), " ".join(text for _, text, _ in lines), tuple(lines)))
    return blocks


def _caption(block: _Block) -> Caption | None:
    """The block's caption, if it opens with a figure or table label: its first line with the pieces beside it (the
    label and the title may be set in two sizes), then the lines that go on in the title's size right under it (a
    table's header set just below a caption may share its block)."""
    label = caption_label(block.text) or table_label(block.text)
    if label is None or not _LABEL_ONLY.sub("", block.text).strip(" .:："):
        return None  # a label alone ("Figure 8." closing a justified line) is a mention, not a caption
    box, last = block.lines[0][0], block.lines[0][0]
    size, taken = block.lines[0][2], [block.lines[0][1]]
    for line_box, line_text, line_size in block.lines[1:]:
        # on the same visual line, close by (a table's header across the gutter is another column's)
        beside = line_box[1] < last[3] - 1 and line_box[3] > last[1] + 1 and 0 <= line_box[0] - last[2] < 3 * size
        below = abs(line_size - size) <= 0.3 and -2 <= line_box[1] - last[3] <= 0.8 * size
        if not (beside or below):
            break
        box, last, size, taken = _union(box, line_box), line_box, line_size, [*taken, line_text]
    return Caption(label, " ".join(taken)[:_CAPTION_CHARS], box)


def table_label(text: str) -> str | None:
    """The table label a caption opens with ("Table 2", "表 1"), or None: a region beside it is a table."""
    match = _TABLE.match(text)
    return f"Table {match['n'] or match['zn']}" if match else None


def _raster_regions(page: pymupdf.Page, rules: FigureRules) -> list[_Region]:
    """Images of real size inside the page's content area."""
    regions = []
    page_area = page.rect.width * page.rect.height
    for info in page.get_image_info():
        box = _clip(info["bbox"], page.rect)
        # An image over most of the page is the page itself (a scan under its text layer, a background).
        if box is not None and _real_size(box, page.rect, rules) and _area(box) < _PAGE_SHARE * page_area:
            regions.append(_Region(box, raster=True, vector=False))
    return regions


def _vector_regions(page: pymupdf.Page, rules: FigureRules) -> list[_Region]:
    """Clusters of drawings of real size, without the page's background, thin rules and the frames of text boxes."""
    try:
        drawings = [d for d in page.get_drawings() if _drawn_mark(d, page.rect)]
        clusters = page.cluster_drawings(
            drawings=drawings, x_tolerance=_DRAWING_TOLERANCE, y_tolerance=_DRAWING_TOLERANCE
        ) if drawings else []
    except Exception:  # noqa: BLE001 - a page whose drawings pymupdf cannot walk still has its text and images
        return []
    regions = []
    for rect in clusters:
        box = _clip(rect, page.rect)
        if box is not None and _real_size(box, page.rect, rules):
            regions.append(_Region(box, raster=False, vector=True))
    return regions


def _drawn_mark(drawing: dict[str, Any], page_rect: pymupdf.Rect) -> bool:
    """A path that could be part of a picture: not the page's background, not a white fill (an eraser), and not a
    long thin rule alone (table rules and underlines: a rule is thinner than 1.5 points across)."""
    rect = drawing["rect"]
    if rect.width * rect.height >= _PAGE_SHARE * page_rect.width * page_rect.height:
        return False
    fill = drawing.get("fill")
    if drawing.get("type") == "f" and fill is not None and min(fill) > 0.97:
        return False
    return not (min(rect.width, rect.height) < 1.5 and max(rect.width, rect.height) > 0.25 * page_rect.width)


def _real_size(box: Box, page_rect: pymupdf.Rect, rules: FigureRules) -> bool:
    """Big enough to be a figure and not page furniture. Icons, bullets and small logos are under `min_side` or
    `min_area_share`; a journal's masthead and footer logos sit wholly in the top or bottom `margin_share` of the
    page, where the body's figures never do."""
    width, height = box[2] - box[0], box[3] - box[1]
    if min(width, height) < rules.min_side:
        return False
    if width * height < rules.min_area_share * page_rect.width * page_rect.height:
        return False
    margin = rules.margin_share * page_rect.height
    return not (box[3] <= page_rect.y0 + margin or box[1] >= page_rect.y1 - margin)


def _merge(regions: list[_Region]) -> list[_Region]:
    """Regions that touch or overlap (within `_TOUCH` points) joined, until none do."""
    merged = list(regions)
    changed = True
    while changed:
        changed = False
        for i in range(len(merged)):
            for j in range(i + 1, len(merged)):
                if _touch(merged[i].box, merged[j].box):
                    a, b = merged[i], merged.pop(j)
                    merged[i] = _Region(_union(a.box, b.box), a.raster or b.raster, a.vector or b.vector)
                    changed = True
                    break
            if changed:
                break
    return merged


def _inner_text(blocks: list[_Block], box: Box, caption: Caption | None) -> str:
    """The text of the lines whose middle lies in the box, the caption's left out."""
    inside = [
        text for block in blocks for line_box, text, _ in block.lines
        if _point_in(_centre(line_box), box) and (caption is None or not _inside(line_box, _grow(caption.box, 0.5)))
    ]
    return " ".join(" ".join(inside).split())


def _touch(a: Box, b: Box) -> bool:
    return not (a[2] + _TOUCH < b[0] or b[2] + _TOUCH < a[0] or a[3] + _TOUCH < b[1] or b[3] + _TOUCH < a[1])


def _box(values: Sequence[float]) -> Box:
    return (float(values[0]), float(values[1]), float(values[2]), float(values[3]))


def _clip(rect: Any, page_rect: pymupdf.Rect) -> Box | None:
    import pymupdf

    clipped = pymupdf.Rect(rect) & page_rect
    if clipped.is_empty:
        return None
    return (clipped.x0, clipped.y0, clipped.x1, clipped.y1)


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _grow(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def _inside(inner: Box, outer: Box) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def _point_in(point: tuple[float, float], box: Box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _area(box: Box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _rounded(box: Box) -> Box:
    return (round(box[0], 2), round(box[1], 2), round(box[2], 2), round(box[3], 2))
