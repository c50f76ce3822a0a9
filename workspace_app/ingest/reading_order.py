"""Reading order of a page's lines: columns one after the other, tables row by row.

Two-column pages are read column by column between full-width elements (tables, titles). A table whose
narrow column of cells sits beside a wide one is read across, row by row.
"""

from __future__ import annotations

from workspace_app.ingest.layout import TextLine


def page_order(lines: list[TextLine]) -> list[TextLine]:
    """Cut the page at wide horizontal gaps where the column layout changes, then order each band."""
    bands: list[list[TextLine]] = []
    bottom = -1e9
    for line in sorted(lines, key=lambda ln: ln.y0):
        if not bands or line.y0 - bottom > max(12.0, 1.8 * line.height):
            bands.append([])
        bands[-1].append(line)
        bottom = max(bottom, line.y1)
    merged: list[tuple[float | None, list[TextLine]]] = []
    for band in bands:
        gutter = _find_gutter(band)
        if merged and _same_layout(merged[-1][0], gutter):
            merged[-1] = (merged[-1][0], merged[-1][1] + band)
        else:
            merged.append((gutter, band))
    return [line for _, band in merged for line in _reading_order(band)]


def _same_layout(first: float | None, second: float | None) -> bool:
    if first is None or second is None:
        return first is None and second is None
    return abs(first - second) < 10


def _reading_order(lines: list[TextLine], depth: int = 0) -> list[TextLine]:
    """Order lines column by column; full-width lines separate the column runs (up to 4 columns)."""
    if not lines:
        return []
    gutter = _find_gutter(lines) if depth < 2 else None
    if gutter is None:
        return _rows(lines)
    if _two_column_table(lines, gutter):
        return _rows(lines, table=True)
    ordered: list[TextLine] = []
    left: list[TextLine] = []
    right: list[TextLine] = []
    for line in sorted(lines, key=lambda ln: ln.y0):
        if line.x1 <= gutter + 2:
            left.append(line)
        elif line.x0 >= gutter - 2:
            right.append(line)
        else:
            ordered += _reading_order(left, depth + 1) + _reading_order(right, depth + 1) + [line]
            left, right = [], []
    return ordered + _reading_order(left, depth + 1) + _reading_order(right, depth + 1)


def _two_column_table(lines: list[TextLine], gutter: float) -> bool:
    """Whether the "columns" either side of the gutter are a table's narrow and wide columns.

    Text columns are about equally wide. A term/definition or condition/waiting-time table has one narrow
    column of cells whose lines sit on the same baselines as lines of the wide column beside them. A narrow
    column of justified text (mostly full lines: the third column of a reference list) is no such column.
    """
    left = [line for line in lines if line.x1 <= gutter + 2]
    right = [line for line in lines if line.x0 >= gutter - 2]
    if not left or not right:
        return False
    left_width = max(line.x1 for line in left) - min(line.x0 for line in left)
    right_width = max(line.x1 for line in right) - min(line.x0 for line in right)
    narrow, wide = (left, right) if left_width < right_width else (right, left)
    if len(narrow) < 3 or min(left_width, right_width) >= 0.5 * max(left_width, right_width):
        return False
    narrow_width = min(left_width, right_width)
    if sum(1 for line in narrow if line.x1 - line.x0 >= 0.85 * narrow_width) >= 0.6 * len(narrow):
        return False
    on_a_row = sum(1 for cell in narrow if any(abs(cell.y_mid - other.y_mid) < 2 for other in wide))
    return on_a_row >= 0.8 * len(narrow)


def _find_gutter(lines: list[TextLine]) -> float | None:
    """The x of an empty vertical strip in the middle of the page, if the page has two columns."""
    x_min = min(line.x0 for line in lines)
    x_max = max(line.x1 for line in lines)
    width = x_max - x_min
    if width <= 0:
        return None
    candidates = [x_min + width * share / 100 for share in range(25, 76)]
    crossing = {x: sum(1 for ln in lines if ln.x0 < x - 2 and ln.x1 > x + 2) for x in candidates}
    best = min(candidates, key=lambda x: (crossing[x], abs(x - (x_min + width / 2))))
    left = sum(1 for ln in lines if ln.x1 <= best + 2)
    right = sum(1 for ln in lines if ln.x0 >= best - 2)
    if left >= 5 and right >= 5 and crossing[best] <= 0.6 * len(lines):
        return best
    return None


def _rows(lines: list[TextLine], table: bool = False) -> list[TextLine]:
    """Order a column's lines: runs of aligned lines (paragraphs, table cells) by their top, then left to right.
    In a table, runs are first cut where a cell beside them starts a row."""
    groups: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.y0, ln.x0)):
        home = next((g for g in reversed(groups[-8:]) if _extends_group(g[-1], line)), None)
        if home is None:
            groups.append([line])
        else:
            home.append(line)
    if table:
        groups = _cut_at_row_starts(groups)
    groups.sort(key=lambda g: g[0].y0)
    ordered: list[TextLine] = []
    row: list[list[TextLine]] = []
    for group in groups:
        if row and group[0].y0 - row[0][0].y0 > 0.5 * max(row[0][0].height, 1.0):
            ordered += _read_across(row, table)
            row = []
        row.append(group)
    return ordered + _read_across(row, table)


def _read_across(row: list[list[TextLine]], table: bool) -> list[TextLine]:
    """A row's runs left to right; a table's row ends its paragraph (a condition and its waiting time are one
    row, the next condition another)."""
    lines = [line for group in sorted(row, key=lambda g: g[0].x0) for line in group]
    if table and len(row) > 1:
        for line in lines[:-1]:
            line.in_row = True
        lines[-1].ends_row = True
    return lines


def _cut_at_row_starts(groups: list[list[TextLine]]) -> list[list[TextLine]]:
    """Cut a run of table lines where a cell beside it starts a new row, so that rows read across.

    A table column ("Definition", "Condition") is often one unbroken run of aligned lines while the cells
    beside it ("Delayed OH", "1 month") start each row: read as whole runs, every definition would come
    before every term. A run is cut only where two or more row starts sit beside it.
    """
    cut: list[list[TextLine]] = []
    for group in groups:
        left_edge, right_edge = min(line.x0 for line in group), max(line.x1 for line in group)
        heads = sorted(
            other[0].y0 for other in groups
            if other is not group
            and (max(line.x1 for line in other) <= left_edge + 1 or min(line.x0 for line in other) >= right_edge - 1)
            and group[0].y0 + 0.5 * group[0].height < other[0].y0 < group[-1].y1
        )
        if len(heads) < 2:
            cut.append(group)
            continue
        piece = [group[0]]
        for line in group[1:]:
            if any(piece[-1].y0 + 0.5 * line.height < head <= line.y0 + 0.5 * line.height for head in heads):
                cut.append(piece)
                piece = []
            piece.append(line)
        cut.append(piece)
    return cut


def _extends_group(last: TextLine, line: TextLine) -> bool:
    gap = line.y0 - last.y1
    aligned = abs(line.x0 - last.x0) <= 6 * max(line.size, 1.0) and min(line.x1, last.x1) > max(line.x0, last.x0)
    return aligned and -0.5 <= gap <= 0.8 * max(last.height, 1.0)
