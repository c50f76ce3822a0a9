"""The parsed shape of a source: lines with boxes, grouped into paragraphs with a section path."""

from __future__ import annotations

from dataclasses import dataclass, field

from workspace_app.text.cjk import WIDE_CHAR


@dataclass
class GlyphCount:
    """Symbol-font glyphs of some text: read back, already right, marked unreadable, or empty (a blank)."""

    recovered: int = 0
    kept: int = 0
    flagged: int = 0
    blank: int = 0

    def add(self, other: GlyphCount) -> None:
        """Add another count to this one."""
        self.recovered += other.recovered
        self.kept += other.kept
        self.flagged += other.flagged
        self.blank += other.blank

    @property
    def total(self) -> int:
        """Every glyph counted."""
        return self.recovered + self.kept + self.flagged + self.blank


@dataclass
class TextLine:
    """One visual line of text on a page (1-based), in PDF points with a top-left origin."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    block: int = -1
    recommendation: tuple[str, str] | None = None
    glyphs: GlyphCount = field(default_factory=GlyphCount)
    ends_row: bool = False  # the last line of a table row: the next line starts a new paragraph
    in_row: bool = False  # a line of a table row before its last: the row goes on (an indented cell line too)
    apart: bool = False  # a paragraph of its own, joined to no other line (a table's caption, header or row)
    edge_sizes: tuple[float, float] | None = None  # font sizes of its first and last pieces, where they differ
    table: str = ""  # a ruled table's row: the table's caption and header, the section its rows are read in

    @property
    def height(self) -> float:
        """Line height in points."""
        return self.y1 - self.y0

    @property
    def y_mid(self) -> float:
        """Vertical centre."""
        return (self.y0 + self.y1) / 2


@dataclass
class LineSpan:
    """Where one line's text sits inside a paragraph's text."""

    line: TextLine
    start: int
    end: int


@dataclass
class Paragraph:
    """A run of lines read as one unit: body text, a table row, or a heading."""

    spans: list[LineSpan] = field(default_factory=list)
    text: str = ""
    is_heading: bool = False
    heading_level: int = 0
    section: str = ""

    @property
    def page_start(self) -> int:
        """First page the paragraph touches (1 for sources without pages)."""
        return self.spans[0].line.page if self.spans else 1

    @property
    def table(self) -> str:
        """The caption and header of the ruled table the paragraph is a row of ("" for text)."""
        return self.spans[0].line.table if self.spans else ""

    @property
    def page_end(self) -> int:
        """Last page the paragraph touches."""
        return self.spans[-1].line.page if self.spans else 1

    def append_line(self, line: TextLine, dehyphenate: bool) -> None:
        """Add a line, joining words split by an end-of-line hyphen and CJK text without spaces."""
        piece = line.text
        if self.text:
            if dehyphenate:
                self.text = self.text[:-1]
            elif needs_space(self.text, piece) and not _joined_at_line_end(self.text, piece):
                self.text += " "
        start = len(self.text)
        self.text += piece
        self.spans.append(LineSpan(line, start, len(self.text)))


def _joined_at_line_end(text: str, piece: str) -> bool:
    """A real hyphen or slash at a line end joins the next line without a space ("cost-" "effectiveness"), and so
    does the dash or tilde of a range between two numbers ("(1.7–" "4.8 mmol/L)", "1~" "3 个月")."""
    if len(text) < 2:
        return False
    return (text[-1] in "-‐/" and text[-2].isalnum()) or (text[-1] in "–~" and text[-2].isdigit() and piece[:1].isdigit())


def needs_space(left: str, right: str) -> bool:
    """Whether two pieces of a paragraph are joined with a space (never between CJK characters)."""
    if not left or not right or left[-1].isspace() or right[0].isspace():
        return False
    return not (WIDE_CHAR.match(left[-1]) or WIDE_CHAR.match(right[0]))


@dataclass
class ParsedDocument:
    """What a parser returns: paragraphs in reading order and page facts."""

    paragraphs: list[Paragraph]
    page_count: int
    pages_without_text: list[int]
    title: str = ""
    # Per page: symbol-font glyphs in the text, and in lines set aside (running headers, rotated margin notes).
    glyphs: dict[int, GlyphCount] = field(default_factory=dict)
    glyphs_set_aside: dict[int, GlyphCount] = field(default_factory=dict)
    pages_ocr: list[int] = field(default_factory=list)  # pages read by OCR (no usable text layer)

    @property
    def flagged_pages(self) -> list[int]:
        """Pages whose text holds a glyph that could not be read (shown as the marker)."""
        return sorted(page for page, count in self.glyphs.items() if count.flagged)
