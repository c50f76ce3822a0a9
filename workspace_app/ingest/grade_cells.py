"""Class and level cells of recommendation tables: given to the statement of their row, at the row's end.

Chinese tables put a class column and a level column right of a statement of several lines ("推荐意见 | 推荐级别 |
证据级别"): read by position the cells land inside the statement's words, so the row is rebuilt as its statement
lines followed by the cells ("…的基础 Ⅰ C"). ACC/AHA tables put the COR and LOE cells ("IIa B-NR", "2a C-LD") left of
a statement of several lines, level with its middle: read by position they fall between its lines ("…regardless of
estimated 10-year ASCVD risk," "I A" "moderate-intensity statin therapy is indicated"), so the cells are put at the
end of the statement's last line, which ends the row; every line of the statement carries the grade.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from workspace_app.ingest.layout import TextLine, needs_space
from workspace_app.text.cjk import WIDE_CHAR
from workspace_app.text.grades import is_class_cell, table_cell_recommendation

_LEVEL_CELL = re.compile(r"\s*(?:B-NR|B-R|C-LD|C-EO|[A-D]|[-–—])\s*")
_NO_LEVEL_CELLS = frozenset("-–—")  # a good practice statement's empty level cell: nothing to read again
_NUMBERED_STATEMENT = re.compile(r"\d{1,2}\.\s")
_STATEMENT_REACH = 120  # pt from the cells to the statement column beside them


def is_grade_cell(text: str) -> bool:
    """A class or level cell standing alone ("I", "Ⅱa", "B", "C-LD"; not a dash)."""
    return is_class_cell(text) or bool(_LEVEL_CELL.fullmatch(text) and text.strip() not in _NO_LEVEL_CELLS)


def stands_apart(left: TextLine, right: TextLine, gap: float) -> bool:
    """Whether `right` is a cell of its own, not a piece of `left`'s line: a class or level cell beside a CJK
    line, or CJK text after CJK text across a gap (CJK is set without spaces, so a gap parts table cells)."""
    if gap <= 0.5 * max(right.size, 1.0) or not WIDE_CHAR.search(left.text):
        return False
    cell = is_class_cell(right.text) or bool(_LEVEL_CELL.fullmatch(right.text))
    return cell or bool(WIDE_CHAR.match(left.text[-1]) and WIDE_CHAR.match(right.text[:1]))


def attach_grade_cells(lines: list[TextLine]) -> list[TextLine]:
    """Rebuild rows whose class and level cells stand beside the statement: the cells at the row's end."""
    cells = sorted(_cell_pairs(lines, numbered=True), key=lambda found: found[0][0].y0)
    used: set[int] = set()
    for index, (pair, grade) in enumerate(cells):
        if any(id(cell) in used for cell in pair):
            continue
        below = [other[0].y0 for other, _ in cells[index + 1 :] if abs(other[0].x0 - pair[0].x0) < 20]
        statement = _statement_left_of(lines, pair, min(below, default=float("inf")))
        if statement and id(statement[0]) in used:
            statement = []  # its first line went into the row above: joined again, its text would be lost
        statement = [line for line in statement if id(line) not in used]
        if not statement:
            used.update(_end_row_right_of(lines, pair, grade))
            continue
        row = _join_lines(statement)
        row.text += " " + " ".join(cell.text.strip() for cell in pair)
        row.x1 = max(row.x1, pair[-1].x1)
        row.ends_row = True
        row.recommendation = grade
        for cell in pair:
            row.glyphs.add(cell.glyphs)
        used.update(id(line) for line in [*statement[1:], *pair])
        # A table's header stands just above its first row's cells (`_attach_header` looks no further), also when
        # another table stands higher in the same column.
        used.update(_attach_header([line for line in lines if id(line) not in used], pair, statement[0]))
    return [line for line in lines if id(line) not in used]


def _end_row_right_of(lines: list[TextLine], pair: list[TextLine], grade: tuple[str, str]) -> set[int]:
    """Put cells standing left of their statement (ACC/AHA) at the end of its last line; the ids of the cells moved
    (none when no statement stands beside them)."""
    statement = _statement_right_of(lines, pair)
    if not statement:
        return set()
    last = statement[-1]
    last.text += " " + " ".join(cell.text.strip() for cell in pair)
    last.ends_row = True
    for line in statement:
        line.recommendation = grade
    for cell in pair:
        last.glyphs.add(cell.glyphs)
    return {id(cell) for cell in pair}


def _statement_right_of(lines: list[TextLine], pair: list[TextLine]) -> list[TextLine]:
    """The statement lines beside cells standing left of it: the run of lines in the column right of the cells
    (each line close under the one before) that reaches the cells' height, from its numbered first line ("2. In
    adults…") down to before the next one."""
    right = max(cell.x1 for cell in pair)
    middle = sum(cell.y_mid for cell in pair) / len(pair)
    if any(ln.x1 <= pair[0].x0 + 1 and abs(ln.y_mid - middle) < ln.height for ln in lines):
        return []  # the cells do not start their row: text stands left of them
    column = sorted(
        (ln for ln in lines if right < ln.x0 <= right + _STATEMENT_REACH and len(ln.text) > 3 and ln not in pair),
        key=lambda ln: ln.y0,
    )
    if not column:
        return []
    nearest = min(column, key=lambda ln: abs(ln.y_mid - middle))
    if abs(nearest.y_mid - middle) > 1.5 * max(nearest.height, 1.0):
        return []
    index = column.index(nearest)
    first = index
    while first > 0 and _continues_row(column[first - 1], column[first]) and not _starts_statement(column[first]):
        first -= 1
    last = index
    while last + 1 < len(column) and _continues_row(column[last], column[last + 1]) \
            and not _starts_statement(column[last + 1]):
        last += 1
    return column[first : last + 1]


def _continues_row(upper: TextLine, lower: TextLine) -> bool:
    """Whether `lower` is the next line of `upper`'s statement (close under it, about as far left)."""
    gap = lower.y0 - upper.y1
    return -1.0 <= gap <= 0.8 * max(upper.height, 1.0) and abs(lower.x0 - upper.x0) <= 3 * max(upper.size, 1.0)


def _starts_statement(line: TextLine) -> bool:
    return bool(_NUMBERED_STATEMENT.match(line.text))


def _join_lines(lines: list[TextLine]) -> TextLine:
    """The first line made to hold the others (a row's statement read as one line, so no column splits it)."""
    row = lines[0]
    for line in lines[1:]:
        row.text += (" " if needs_space(row.text, line.text) else "") + line.text
        row.x0, row.x1, row.y1 = min(row.x0, line.x0), max(row.x1, line.x1), max(row.y1, line.y1)
        row.glyphs.add(line.glyphs)
    return row


def _attach_header(lines: list[TextLine], pair: list[TextLine], first: TextLine) -> set[int]:
    """Join the header cells above a table's first cells ("推荐" over "级别") to the header beside them
    ("推荐意见 推荐级别 证据级别"); the ids of the cell lines joined."""
    left, right = min(cell.x0 for cell in pair) - 8, max(cell.x1 for cell in pair) + 8
    cells = sorted(
        (ln for ln in lines if ln.x0 < right and ln.x1 > left and _header_word(ln)
         and first.y0 - 3 * first.height <= ln.y0 and ln.y1 <= first.y0 + 1),
        key=lambda ln: ln.x0,
    )
    if not cells:
        return set()
    top, bottom = min(ln.y0 for ln in cells), max(ln.y1 for ln in cells)
    beside = [ln for ln in lines if first.x0 - 3 <= ln.x0 and ln.x1 <= left + 8 and top - 1 <= ln.y_mid <= bottom + 1]
    if len(beside) != 1:
        return set()
    columns: list[list[TextLine]] = []
    for cell in cells:  # stacked cells of one column share their left edge
        if columns and abs(cell.x0 - columns[-1][0].x0) <= 4:
            columns[-1].append(cell)
        else:
            columns.append([cell])
    header = beside[0]
    header.text += " " + " ".join("".join(ln.text.strip() for ln in sorted(col, key=lambda ln: ln.y0)) for col in columns)
    header.ends_row = True
    return {id(ln) for ln in cells}


def _header_word(line: TextLine) -> bool:
    text = line.text.strip()
    return 0 < len(text) <= 6 and all(WIDE_CHAR.match(char) for char in text)


def _cell_pairs(
    lines: list[TextLine], max_gap: float = 60, max_dy: float = 3, first_only: bool = True, numbered: bool = False
) -> Iterator[tuple[list[TextLine], tuple[str, str]]]:
    """(the cell lines, (class, level)): a line holding both, or a class cell with its level cell beside it
    (at most `max_gap` to its right, baselines within `max_dy`; the first such level cell, or every one).
    `numbered`: classes may be numbered ("2a" beside "B-NR")."""
    for line in lines:
        found = table_cell_recommendation(line.text)
        if found and found.recommendation_class and found.evidence_level:
            yield [line], (found.recommendation_class, found.evidence_level)
            continue
        if not is_class_cell(line.text, numbered=numbered):
            continue
        for level in lines:
            if level is line or not (0 < level.x0 - line.x1 < max_gap) or abs(level.y_mid - line.y_mid) > max_dy:
                continue
            pair = table_cell_recommendation(f"{line.text} {level.text}")
            if pair and pair.recommendation_class and pair.evidence_level:
                yield [line, level], (pair.recommendation_class, pair.evidence_level)
                if first_only:
                    break


def _statement_left_of(lines: list[TextLine], pair: list[TextLine], next_row: float) -> list[TextLine]:
    """The statement lines of the cells' row: the line left of them on their row and the aligned lines below it
    up to the next row (none when no CJK statement stands on the row: then the cells are not of this kind)."""
    cell = pair[0]
    left = [ln for ln in lines if ln.x1 <= cell.x0 + 1 and abs(ln.y_mid - cell.y_mid) < 0.6 * ln.height]
    if not left:
        return []
    nearest = max(ln.x1 for ln in left)  # the statement column ends nearest the cells; its top line starts the row
    first = min((ln for ln in left if ln.x1 >= nearest - 4), key=lambda ln: ln.y0)
    if not WIDE_CHAR.search(first.text) or cell.x0 - first.x1 > 200:
        return []
    statement = [first]
    for line in sorted((ln for ln in lines if ln.y0 > first.y0 and ln.x1 <= cell.x0 + 1), key=lambda ln: ln.y0):
        last = statement[-1]
        # A line whose middle is below the top of the next row's cells is that row's first line (its box may start
        # a little above them: another font's).
        if line.y_mid >= next_row or line.y0 - last.y1 > 0.8 * last.height:
            break
        # Continuation lines start under the first or a little further in (a hanging indent).
        if first.x0 - 3 <= line.x0 <= first.x0 + 2.5 * first.size and abs(_text_size(line) - first.size) < 0.3:
            statement.append(line)
    return statement


def _text_size(line: TextLine) -> float:
    """The size of a line's text: a short last line of a cell ("PCI［30‑31，43］") holds more characters of its raised
    reference mark than of text, so its longest piece's size is the mark's."""
    return max([line.size, *(line.edge_sizes or ())])


def tag_recommendation_cells(lines: list[TextLine]) -> list[TextLine]:
    """Give the statement beside each class/level cell ("IIa B-NR") that class and level.

    Tables put the cells beside the statement, so reading order alone may part them; the nearest text line
    on the same row (left or right of the cells) is the statement.
    """
    for cell, found in _recommendation_cells(lines):
        beside = [
            line for line in lines
            if len(line.text) > 15 and (line.x0 >= cell.x1 or line.x1 <= cell.x0) and abs(line.y_mid - cell.y_mid) < 24
        ]
        if beside:
            target = min(beside, key=lambda line: (abs(line.y_mid - cell.y_mid), line.x0 < cell.x0))
            target.recommendation = found
    return lines


def _recommendation_cells(lines: list[TextLine]) -> Iterator[tuple[TextLine, tuple[str, str]]]:
    """Lines holding only a class and a level, or a class cell with its level cell beside it on the row (as one
    cell spanning both)."""
    for cells, grading in _cell_pairs(lines, max_gap=80, max_dy=2, first_only=False):
        if len(cells) == 1:
            yield cells[0], grading
            continue
        line, level = cells
        yield TextLine(line.page, line.x0, min(line.y0, level.y0), level.x1, max(line.y1, level.y1), "", line.size, False), grading
