"""Tables under a Chinese caption ("表8 心室率控制常用药物及用法"): read row by row, one line per row.

Such a table often spans both text columns of the page, with a header row of short cells under its caption
("药物 | 静脉给药剂量 | 常用口服维持剂量 | 禁忌证") and cells of several lines. Read by position, its cells fall into
the page's two columns and a dose is read apart from its drug. The table is found by its caption and the header
row of three or more short cells right under it; it ends at its note ("注：…") or where the lines stop. A row
starts at each line of the first column; every other cell belongs to the row whose start is just above it. Each
row becomes one line ("酒石酸美托洛尔 2.5~5 mg，5 min 后可重复给药，最大剂量20 mg 25~100 mg/ 次, 2 次/d …") that
ends a paragraph, and spans both columns, so reading order keeps it whole.
"""

from __future__ import annotations

import re

from workspace_app.ingest.layout import TextLine, needs_space

_CAPTION = re.compile(r"^\s*表\s*\d+")
_NOTE = re.compile(r"^\s*注\s*[：:]")
_HEADER_CELL_CHARS = 12
_MIN_COLUMNS = 3
_CELL_ENDS = tuple("。；;.")
_LABEL_CHARS = 20
_WORDS = re.compile(r"[A-Za-z\u4e00-\u9fff]")
_SPLIT_WORD = re.compile(r"[a-z]{2,}-$")
_HYPHEN_END = re.compile(r"[A-Za-z0-9][-‐]$")


def join_table_rows(lines: list[TextLine]) -> list[TextLine]:
    """The page's lines with each captioned table's rows joined into one line per row."""
    for caption in [line for line in lines if _CAPTION.match(line.text)]:
        header = _header_under(caption, lines)
        if header is None:
            continue
        body = _body_under(header, lines)
        if len(body) < 2:
            continue
        body, lefts = _within_columns(body, len(header))
        if len(body) < 2:
            continue
        rows = _rows(body, lefts)
        caption.apart = caption.ends_row = True
        taken = {id(line) for line in [*header, *body]}
        kept = [line for line in lines if id(line) not in taken]
        lines = kept + [joined_row(header, [cell.x0 for cell in header])] + [joined_row(row, lefts) for row in rows]
    return lines


def _header_under(caption: TextLine, lines: list[TextLine]) -> list[TextLine] | None:
    """Three or more short cells on one baseline right under the caption, spread across the page."""
    below = [line for line in lines if caption.y1 - 1 <= line.y0 <= caption.y1 + 2.5 * max(caption.height, 1.0)]
    if not below:
        return None
    first = min(below, key=lambda line: line.y0)
    cells = sorted((line for line in below if abs(line.y_mid - first.y_mid) < 2), key=lambda line: line.x0)
    if len(cells) < _MIN_COLUMNS or any(len(cell.text.strip()) > _HEADER_CELL_CHARS for cell in cells):
        return None
    if cells[-1].x0 - cells[0].x0 < 2 * (caption.x1 - caption.x0):
        return None  # not spread out like columns: a short run of words
    return cells


def _body_under(header: list[TextLine], lines: list[TextLine]) -> list[TextLine]:
    """The lines below the header, within its width, down to the table's note or a gap."""
    left = header[0].x0 - 12
    top = max(cell.y1 for cell in header)
    height = max(cell.height for cell in header)
    body: list[TextLine] = []
    bottom = top
    for line in sorted((ln for ln in lines if ln.y0 >= top - 1 and ln.x0 >= left), key=lambda ln: ln.y0):
        if line in header:
            continue
        if _NOTE.match(line.text) or line.y0 - bottom > 2.5 * height:
            break
        body.append(line)
        bottom = max(bottom, line.y1)
    return body


def _within_columns(body: list[TextLine], columns: int) -> tuple[list[TextLine], list[float]]:
    """The columns' left edges, from the first row with a cell in (nearly) every column, and the body down to the
    first long line running across one of them (a cell never does; the text after the table does, a short
    group label such as "非二氢吡啶类钙通道阻滞剂" may) or set larger than the first row."""
    ordered = sorted(body, key=lambda ln: ln.y0)
    lefts: list[float] = []
    for line in ordered:
        beside = [other.x0 for other in ordered if abs(other.y_mid - line.y_mid) < 0.5 * max(line.height, 1.0)]
        if len(beside) >= columns - 1:
            lefts = sorted(beside)
            break
    if not lefts:
        return [], []
    size = max(line.size for line in ordered if abs(line.y_mid - ordered[0].y_mid) < 0.5 * max(ordered[0].height, 1.0))
    for index, line in enumerate(ordered):
        across = len(line.text.strip()) > _LABEL_CHARS and any(line.x0 + 10 < left < line.x1 - 10 for left in lefts)
        if across or line.size > size + 0.6:  # the body text after the table is set larger than its cells
            return ordered[:index], lefts
    return ordered, lefts


def _rows(body: list[TextLine], lefts: list[float]) -> list[list[TextLine]]:
    """Body lines grouped by row: a row starts at each line of the first column. A cell's wrapped text goes on
    with it even where it reaches beside the next row; any other line belongs to the last row starting at or
    above it (superscripts sit a little higher)."""
    # A reference marker under a drug's name ("[93-94]") starts no row.
    starts = sorted(
        (line for line in body if column_of(line, lefts) == 0 and _WORDS.search(line.text)), key=lambda line: line.y0
    )
    if not starts:
        return [body]
    rows: list[list[TextLine]] = [[start] for start in starts]
    row_of: dict[int, int] = {id(start): i for i, start in enumerate(starts)}
    last_in_column: dict[int, TextLine] = {}
    rights: dict[int, float] = {}
    for line in body:
        rights[column_of(line, lefts)] = max(rights.get(column_of(line, lefts), 0.0), line.x1)
    for line in sorted(body, key=lambda ln: (ln.y0, ln.x0)):
        column = column_of(line, lefts)
        above = last_in_column.get(column)
        if id(line) not in row_of:
            if column > 0 and above is not None and _continues_cell(above, line, lefts[column], rights[column]):
                row_of[id(line)] = row_of[id(above)]
            else:
                row_of[id(line)] = max((i for i, start in enumerate(starts) if start.y0 <= line.y_mid), default=0)
            rows[row_of[id(line)]].append(line)
        last_in_column[column] = line
    return rows


def _continues_cell(above: TextLine, line: TextLine, left: float, right: float) -> bool:
    """Whether a line goes on with the cell text above it in the same column: that text was wrapped (it reaches the
    right edge of a column of text, not of a narrow column of short cells such as "强" or "B", without ending its
    sentence) and the line follows right below."""
    gap = line.y0 - above.y1
    text_column = right - left >= 6 * max(line.size, 1.0)
    wrapped = text_column and above.x1 >= right - 8 and not above.text.rstrip().endswith(_CELL_ENDS)
    return wrapped and -1 <= gap <= 0.6 * max(line.height, 1.0)


def _column_lefts(lines: list[TextLine]) -> list[float]:
    """Left edges where three or more lines start (cells of a column); the first column's included."""
    edges: list[list[float]] = []
    for x in sorted(line.x0 for line in lines):
        if edges and x - edges[-1][-1] <= 10:
            edges[-1].append(x)
        else:
            edges.append([x])
    lefts = [group[0] for group in edges if len(group) >= 3]
    return lefts or [min(line.x0 for line in lines)]


def column_of(line: TextLine, lefts: list[float]) -> int:
    """The column a line starts in: the last left edge at or before its start."""
    return max((i for i, left in enumerate(lefts) if left <= line.x0 + 2), default=0)


def joined_row(cells: list[TextLine], lefts: list[float]) -> TextLine:
    """One line holding a row's cells, column by column; in a cell, visual lines top to bottom, each left to right
    (a superscript "-1" sits beside its unit, a little higher)."""
    row = TextLine(
        page=cells[0].page, x0=min(c.x0 for c in cells), y0=min(c.y0 for c in cells), x1=max(c.x1 for c in cells),
        y1=max(c.y1 for c in cells), text="", size=cells[0].size, bold=cells[0].bold, block=cells[0].block,
        ends_row=True, apart=True,
    )
    by_column: dict[int, list[TextLine]] = {}
    for cell in cells:
        by_column.setdefault(column_of(cell, lefts), []).append(cell)
    for index in sorted(by_column):
        text = _cell_text(by_column[index])
        if row.text and text:
            row.text += " "
        row.text += text
    for cell in cells:
        row.glyphs.add(cell.glyphs)
    return row


def _cell_text(lines: list[TextLine]) -> str:
    """A cell's lines read as visual lines (overlapping heights) top to bottom, each left to right."""
    visual: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda ln: ln.y_mid):
        if visual and line.y_mid - visual[-1][-1].y_mid < 0.6 * max(line.height, 1.0):
            visual[-1].append(line)
        else:
            visual.append([line])
    text = ""
    for piece in (line.text.strip() for group in visual for line in sorted(group, key=lambda ln: ln.x0)):
        if _SPLIT_WORD.search(text) and piece[:1].islower():
            text = text[:-1]  # a word hyphenated at the cell's edge ("hospi-" "tal")
        elif text and needs_space(text, piece) and not _HYPHEN_END.search(text):
            text += " "  # not after a real hyphen at the edge ("HDL-" "C")
        text += piece
    return text
