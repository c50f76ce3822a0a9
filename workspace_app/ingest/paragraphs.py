"""Group ordered lines into paragraphs: breaks at gaps, indents, font changes and headings."""

from __future__ import annotations

import re
from collections import Counter

from workspace_app.ingest.layout import Paragraph, TextLine
from workspace_app.ingest.references import CONTENTS_LEADER
from workspace_app.ingest.sections import assign_sections, heading_level
from workspace_app.text.cjk import IDEOGRAPH

_HYPHEN_SPLIT = re.compile(r"[A-Za-z]{2,}-$")
_INLINE_HYPHEN = re.compile(r"\b([A-Za-z]+)-([A-Za-z]+)\b")
_SENTENCE_END = re.compile(r"[.。:：;；!?！？]\s*$")
_CJK_FULL_STOPS = ("。", "！", "？")


def build_paragraphs(pages: list[list[TextLine]], *, grade_lines: bool = True) -> list[Paragraph]:
    """Turn each page's ordered lines into paragraphs with section paths (a grading line is never a heading, when
    the domain pack's documents grade their recommendations: `grade_lines`)."""
    lines = [line for page in pages for line in page]
    if not lines:
        return []
    body_size = _body_size(lines)
    hyphenated = _inline_hyphenated_words(lines)
    contents = _contents_pages(lines)
    paragraphs: list[Paragraph] = []
    current = Paragraph()
    previous: TextLine | None = None
    for line in lines:
        boundary = previous is None or _starts_paragraph(previous, line, current) or _style_changes(previous, line)
        level = heading_level(line, body_size, grade_lines) if boundary and line.page not in contents and not line.table else 0
        if current.is_heading and (_runs_on(current.text, line.text) or _runs_into(previous, line, boundary)):
            # A bold lead-in that goes on in lower case ("…lowering to: a. Combine the DASH dietary pattern with
            # lower" / "sodium intake.") is a sentence set in bold, not a heading: it stays in the text. So is a
            # Chinese heading run into its paragraph's first line ("3.1.1 心室率控制的目标 急性房颤的心室率控制应以患者"
            # / "的血流动力学稳定…").
            current.is_heading, current.heading_level = False, 0
            boundary, level = False, 0
        if boundary or current.is_heading:
            if current.spans and not (current.is_heading and _continues_heading(current, previous, line, level)):
                paragraphs.append(current)
                current = Paragraph(is_heading=bool(level), heading_level=level)
            elif not current.spans:
                current = Paragraph(is_heading=bool(level), heading_level=level)
        current.append_line(line, dehyphenate=_joins_hyphen(current.text, line.text, hyphenated))
        previous = line
    if current.spans:
        paragraphs.append(current)
    assign_sections(paragraphs)
    return paragraphs


def _contents_pages(lines: list[TextLine]) -> set[int]:
    """Pages of a table of contents (5+ entries with dot leaders): their entries name sections, open none."""
    entries = Counter(line.page for line in lines if CONTENTS_LEADER.search(line.text))
    return {page for page, count in entries.items() if count >= 5}


def _body_size(lines: list[TextLine]) -> float:
    """The main text size: the largest of the common sizes (tables and references are smaller)."""
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    total = sum(sizes.values())
    common = [size for size, chars in sizes.most_common(4) if chars >= 0.15 * total]
    return max(common) if common else sizes.most_common(1)[0][0]


def _inline_hyphenated_words(lines: list[TextLine]) -> set[str]:
    """Hyphenated words written inside a line: their hyphen is real and is kept across line breaks."""
    words: set[str] = set()
    for line in lines:
        words.update(match.group(0).lower() for match in _INLINE_HYPHEN.finditer(line.text))
    return words


def _joins_hyphen(text: str, following: str, hyphenated: set[str]) -> bool:
    if not _HYPHEN_SPLIT.search(text) or not following[:1].islower():
        return False
    head = re.search(r"([A-Za-z]+)-$", text)
    tail = re.match(r"([A-Za-z]+)", following)
    if head is None or tail is None:
        return False
    return f"{head.group(1)}-{tail.group(1)}".lower() not in hyphenated


def _starts_paragraph(previous: TextLine, line: TextLine, current: Paragraph) -> bool:
    """Whether `line` begins a new paragraph after `previous`."""
    if previous.ends_row or line.apart:
        return True
    if previous.in_row and line.page == previous.page:
        return False  # a table row goes on to its last cell, through a cell's indented second line
    if len(previous.text) > 1 and previous.text[-1] == "-" and previous.text[-2].isalpha():
        return False  # a paragraph never ends with a hyphen: the word goes on below
    if abs(line.size - previous.size) > 0.6:
        return True
    if line.page != previous.page or line.y0 < previous.y0 - 1 or abs(line.x0 - previous.x0) > 40 * 5:
        # A jump to the next column or page continues the paragraph unless the last line ended one.
        return _ends_sentence_short(previous, current)
    gap = line.y0 - previous.y1
    if gap > 0.8 * max(previous.height, line.height):
        return True
    if previous.text.endswith(_CJK_FULL_STOPS) and _ends_sentence_short(previous, current):
        # Chinese text indents every paragraph's first line and reaches the column's edge on every line but its
        # last: a line ending a sentence well short of the edge ends its paragraph, and a line after it that is
        # not indented opens something else (a section heading set like the body, "1.1 HFpEF 的流行病学", after
        # "…有不同于HFrEF 的发病机制和治疗方案。").
        return True
    indent = line.x0 - previous.x0
    if 0.8 * line.size < indent < 6 * line.size:
        return True
    if indent < -0.8 * line.size and _ends_sentence_short(previous, current):
        return True
    return _ends_sentence_short(previous, current) and indent > 0.8 * line.size


def _runs_on(heading: str, line: str) -> bool:
    """Whether a line continues a sentence the heading text left open (it starts in lower case)."""
    return line[:1].islower() and not _SENTENCE_END.search(heading)


def _runs_into(previous: TextLine | None, line: TextLine, boundary: bool) -> bool:
    """Whether a Chinese line read as a heading runs on into the line below: it is as wide as that line, which is
    not indented and opens nothing (Chinese breaks lines between any two characters, so the words run on)."""
    if previous is None or boundary or not IDEOGRAPH.match(previous.text[-1:]):
        return False
    return previous.x1 >= line.x1 - previous.size and abs(line.x0 - previous.x0) < 0.8 * line.size


def _style_changes(previous: TextLine, line: TextLine) -> bool:
    return previous.bold != line.bold or abs(previous.size - line.size) > 0.3


def _ends_sentence_short(previous: TextLine, current: Paragraph) -> bool:
    widest = max((span.line.x1 for span in current.spans[-4:]), default=previous.x1)
    return bool(_SENTENCE_END.search(previous.text)) and previous.x1 < widest - 3 * previous.size


def _continues_heading(current: Paragraph, previous: TextLine | None, line: TextLine, level: int) -> bool:
    """A heading wrapped over two or three lines of the same style."""
    if previous is None or level or len(current.spans) >= 3:
        return False
    same_style = line.bold == previous.bold and abs(line.size - previous.size) < 0.3
    close = 0 <= line.y0 - previous.y1 < 0.6 * previous.height and line.page == previous.page
    return same_style and close and bool(previous.bold) and len(current.text) < 80
