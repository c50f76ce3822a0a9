"""Totals and time left of one patient import: the rows of every table (or of the events file) are counted before
reading, and each table's pace is measured as it is read (workspace_app/jobs/pace.py), so the page and the CLI show
"labevents 52,000 of 107,727 rows · table 4 of 9 · about 40 s left in this table, about 2 min in all".

The time left in all is the table's own time left plus the rows of the tables not read yet at the pace of the
whole run so far (rows per second since the import started): the tables to come are not measured yet, and their
rows cost what the rows read so far cost, on average. bench/progress.py measures both at the halfway points.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from workspace_app.jobs.pace import Pace
from workspace_app.models.events import ImportStep

_CHUNK = 1 << 20


def count_lines(path: Path) -> int:
    """Lines of a (gzipped) text file, counted without parsing it (~0.15 s for the demo's 108k-row labevents)."""
    if not path.is_file():
        return 0
    opener = gzip.open if path.suffix == ".gz" else open
    lines, last = 0, b"\n"
    with opener(path, "rb") as handle:  # type: ignore[operator]
        while block := handle.read(_CHUNK):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


class ImportPace:
    """Turns (table, events stored, last line read) into an `ImportStep` with totals and time left."""

    def __init__(
        self, tables: Sequence[tuple[str, int]], pace: Callable[[], Pace] = Pace,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`tables`: (name, rows) in the order they are read."""
        self._rows = dict(tables)
        self._order = [name for name, _ in tables]
        self._new_pace = pace
        self._clock = clock
        self._started = clock()
        self._since = self._started  # when the table being read started: the end of the one before
        self._table = ""
        self._pace = pace()
        self._finished = 0  # rows of the tables read to their end

    def step(self, table: str, events: int, rows_read: int) -> ImportStep:
        """Where the import is after a batch of `table` that ended at its row `rows_read` (1-based, header excluded)."""
        if table != self._table:
            self._table, self._pace = table, self._new_pace()
            self._pace.observe(0, self._rows.get(table, 0), self._since)
        total = self._rows.get(table, 0)
        done = min(rows_read, total) if total else rows_read
        return self._step(table, events, done, max(total, done))

    def finish(self, table: str, events: int) -> ImportStep:
        """The table is read to its end."""
        total = self._rows.get(table, 0)
        step = self._step(table, events, total, total)
        self._finished += total
        self._table, self._since = "", self._clock()
        return step

    def _step(self, table: str, events: int, done: int, total: int) -> ImportStep:
        now = self._clock()
        table_left = self._pace.observe(done, total, now) if table == self._table else 0.0
        rows_done = self._finished + done
        rows_total = sum(self._rows.values())
        return ImportStep(
            table, events, done, total, self._order.index(table) + 1 if table in self._order else 1, len(self._order),
            rows_done, rows_total, _rounded(table_left), _rounded(self._all_left(table, table_left, rows_done, now)),
        )

    def _all_left(self, table: str, table_left: float | None, rows_done: int, now: float) -> float | None:
        """The table's time left plus the rows of the tables after it at the whole run's pace so far (the table's own
        rows too, while its pace is not measured yet: it has just started)."""
        if rows_done <= 0:
            return None
        later = self._order[self._order.index(table) + 1:] if table in self._order else []
        rate = rows_done / max(now - self._started, 1e-6)
        if table_left is None:
            table_left = max(0, self._rows.get(table, 0) - (rows_done - self._finished)) / rate
        return table_left + sum(self._rows[name] for name in later) / rate


def _rounded(seconds: float | None) -> float | None:
    return round(seconds, 1) if seconds is not None else None
