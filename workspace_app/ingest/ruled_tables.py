"""Ruled tables ("TABLE 6 Examples of Syncope Risk Scores"): read row by row, one line per row.

A table of four or more columns puts a row's cells side by side on one baseline ("SFSR (72) | 2004 | 684 |
79 (12%) | 7-d serious events | Yes | Abnormal ECG; dyspnea; … | 99"); read by position, its columns run as
separate paragraphs and no passage holds a row. pymupdf's layout model gives the table's box; the page's own
lines give its rows (lines on one baseline) and text, so nothing is re-read. A row filling fewer than
half the columns of the fullest row goes on with the row above it (a study's name or a predictor list wrapped
onto a second line), unless it is a group label standing alone ("DIET", "BP: Advise adults … to:"). Columns
are the left edges where the table's lines start. Each row becomes one line that ends its paragraph.

Tables are found by pymupdf's layout model (a table without ruling lines too; ~0.25 s a page here), and only on
pages with an English table caption and cells side by side under it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from workspace_app.ingest.captioned_tables import column_of, joined_row
from workspace_app.ingest.layout import TextLine

_CAPTION = re.compile(r"^\s*(?:TABLE|Table)\s+\d+\b")
_MIN_COLUMNS = 4
_MIN_ROWS = 3
_LABEL = re.compile(r"^[^a-z]*$|:\s*$")  # "DIET", "PHYSICAL ACTIVITY", "BP: Advise adults … to:"
_TIGHT = 0.4  # a gap under this share of the widest gap between rows is a wrapped line's
_CAPTION_ABOVE = 40.0  # points: how far above a table's top its caption may sit
_TITLE_CHARS = 200  # a table's title (caption and header) is the section title its rows are read with
_EDGE = 10.0  # points: left edges this close start the same column


Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in points, top-left origin


def may_hold_table(lines: Sequence[TextLine]) -> bool:
    """Whether a page's tables are worth finding: it names an English table ("TABLE 6", "Table 1.") and its lines
    from there down start at `_MIN_COLUMNS` or more left edges, as many side by side on one line at least once (a
    recommendation table's three columns, or two text columns with their indents, have fewer)."""
    captions = [line.y0 for line in lines if _CAPTION.match(line.text)]
    if not captions:
        return False
    below = [line for line in lines if line.y0 >= min(captions) - 2]
    if len(_column_lefts(below)) < _MIN_COLUMNS:
        return False
    return any(len(row) >= _MIN_COLUMNS for row in _visual_rows(below))  # cells side by side on one line


def join_ruled_rows(lines: list[TextLine], tables: Sequence[Box]) -> list[TextLine]:
    """The page's lines with each table (found as a box) of `_MIN_COLUMNS` or more columns joined into one line
    per row."""
    for table in tables:
        inside = [line for line in lines if _within(line, table)]
        lefts = _column_lefts(inside) if inside else []
        if len(lefts) < _MIN_COLUMNS:
            continue
        rows = _merge_continuations(_visual_rows(inside), lefts)
        if len(rows) < _MIN_ROWS:
            continue  # a header over one row of lists ("Antihypertensive | Antiarrhythmic | …"): read by column
        joined = [_across(joined_row(row, lefts), table) for row in rows]
        title = _title(lines, table, rows, joined, lefts)
        for row in joined:
            row.table = title
        taken = {id(line) for line in inside}
        lines = [line for line in lines if id(line) not in taken] + joined
    return lines


def _title(
    lines: list[TextLine], table: Box, rows: list[list[TextLine]], joined: list[TextLine], lefts: list[float]
) -> str:
    """What the table is, for reading any of its rows: its caption and its header row ("TABLE 6 Examples of
    Syncope Risk Scores: Study/ Reference Sample Year N …"). The caption is the caption line at the table's top or
    just above it, with the words beside it; the header, the rows under the caption down to the first one filling
    half the columns."""
    x0, top, x1, _ = table
    captions = [
        line for line in lines
        if _CAPTION.match(line.text) and top - _CAPTION_ABOVE <= line.y0 <= top + _CAPTION_ABOVE / 2
        and x0 - 1 <= line.x0 <= x1
    ]
    caption_line = min(captions, key=lambda line: abs(line.y0 - top), default=None)
    caption = ""
    if caption_line is not None:
        caption = " ".join(line.text.strip() for line in _beside(caption_line, lines, x0, x1))
    fullest = max(len({column_of(line, lefts) for line in row}) for row in rows)
    header: list[str] = []
    for row, line in zip(rows, joined):
        full = 2 * len({column_of(cell, lefts) for cell in row}) >= fullest
        if caption_line is not None and any(cell is caption_line for cell in row):
            if full:  # the caption sits in the header row ("TABLE 9 Normal and … Acceptable, mg/dL …")
                caption = line.text.strip()
                break
            continue
        header.append(line.text.strip())
        if full:
            break
    title = ": ".join(part for part in (caption, " ".join(header)) if part)
    return title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _beside(caption: TextLine, lines: list[TextLine], left: float, right: float) -> list[TextLine]:
    """The caption line and its title beside it, left to right: on its line, or, for a label alone ("TABLE 1"),
    the title's lines to its right within a line's height above or below ("The 10 Most Common … / … (13)")."""
    label = len(caption.text.split()) <= 2
    top, bottom = caption.y0 - caption.height * label, caption.y1 + caption.height * label

    def beside(line: TextLine) -> bool:
        if line is caption:
            return True
        if not left - 1 <= line.x0 <= right:
            return False
        if label:
            return line.x0 >= caption.x1 and top <= line.y_mid <= bottom
        return min(line.y1, caption.y1) - max(line.y0, caption.y0) > 0.5 * caption.height

    return sorted((line for line in lines if beside(line)), key=lambda line: (line.x0 > caption.x0, line.y0, line.x0))


def _across(row: TextLine, table: Box) -> TextLine:
    """A row spans its table, so that reading order keeps it whole (a centred group label too)."""
    row.x0, row.x1 = min(row.x0, table[0]), max(row.x1, table[2])
    return row


def _within(line: TextLine, box: Box) -> bool:
    x0, y0, x1, y1 = box
    return x0 - 1 <= (line.x0 + line.x1) / 2 <= x1 + 1 and y0 - 1 <= line.y_mid <= y1 + 1


def _visual_rows(lines: list[TextLine]) -> list[list[TextLine]]:
    """The table's lines grouped into visual rows: lines whose middles lie within half a line of the row's first."""
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda ln: ln.y_mid):
        if rows and line.y_mid - rows[-1][0].y_mid < 0.5 * max(rows[-1][0].height, 1.0):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _column_lefts(lines: list[TextLine]) -> list[float]:
    """Left edges where two or more of the table's lines start: its columns' (a cell's wrapped lines too)."""
    edges: list[list[float]] = []
    for x in sorted(line.x0 for line in lines):
        if edges and x - edges[-1][-1] <= _EDGE:
            edges[-1].append(x)
        else:
            edges.append([x])
    return [group[0] for group in edges if len(group) >= 2] or [min(line.x0 for line in lines)]


def _merge_continuations(rows: list[list[TextLine]], lefts: list[float]) -> list[list[TextLine]]:
    """Rows going on with the row above joined to it; a group label stays a row of its own.

    A row goes on with the one above when its first column is empty or goes on in lower case (a wrapped
    "Single-chamber atrial / pacemaker"), when it fills fewer than half the columns of the fullest row (a
    wrapped predictor list), or when it sits as close under it as a cell's wrapped lines do while rows are set
    further apart (a table whose cells all wrap: every visual line fills most columns).
    """
    filled = [len({column_of(line, lefts) for line in row}) for row in rows]
    fullest = max(filled)
    gaps = [0.0] + [min(ln.y0 for ln in row) - max(ln.y1 for ln in above) for above, row in pairwise(rows)]
    apart = max(gaps)
    merged: list[list[TextLine]] = []
    label_above = True
    for row, count, gap in zip(rows, filled, gaps):
        label = count == 1 and all(_LABEL.search(line.text.strip()) for line in row)
        height = min(line.height for line in row)
        tight = gap <= _TIGHT * apart and gap <= 0.5 * height
        first = min((line for line in row if column_of(line, lefts) == 0), key=lambda line: line.y0, default=None)
        wrapped = first is None or first.text.lstrip()[:1].islower()
        if merged and not label and not label_above and (wrapped or 2 * count < fullest or tight):
            merged[-1] = merged[-1] + row
        else:
            merged.append(row)
        label_above = label
    return merged
