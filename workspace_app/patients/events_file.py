"""Read a generic events file from any other system: CSV (with a header) or JSON Lines, each record with exactly
event_id, patient_id, timestamp, event_type, sub_type, content. Bad rows are reported with their line number and
why; good rows are kept.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

from workspace_app.errors import UnsupportedFileError
from workspace_app.models.events import TIME_FORMAT, Event, RowError, parse_time

FIELDS = ("event_id", "patient_id", "timestamp", "event_type", "sub_type", "content")
SUFFIXES = (".csv", ".jsonl", ".ndjson")


def read_events_file(path: Path) -> Iterator[Event | RowError]:
    """Each record of the file as an Event, or a RowError naming its line. Raises UnsupportedFileError for a file
    that is not CSV or JSON Lines, or a CSV whose header is not exactly the six fields."""
    if path.suffix.lower() == ".csv":
        yield from _csv_records(path)
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        yield from _jsonl_records(path)
    else:
        raise UnsupportedFileError(
            f"{path.name}: an events file is .csv or .jsonl with the fields {', '.join(FIELDS)} (or give a MIMIC-IV "
            "folder with hosp/ and icu/)."
        )


def _csv_records(path: Path) -> Iterator[Event | RowError]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        header = tuple(reader.fieldnames or ())
        if sorted(header) != sorted(FIELDS):
            raise UnsupportedFileError(
                f"{path.name}:1: the header must be exactly {', '.join(FIELDS)} (got {', '.join(header) or 'nothing'})."
            )
        for row in reader:
            yield _record(row, path.name, reader.line_num)


def _jsonl_records(path: Path) -> Iterator[Event | RowError]:
    with path.open(encoding="utf-8-sig") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield RowError(path.name, line_number, f"not valid JSON ({exc.msg} at column {exc.colno}).")
                continue
            yield _record(record, path.name, line_number)


def _record(record: object, source: str, line: int) -> Event | RowError:
    """An Event from one record, or what is wrong with it."""
    if not isinstance(record, dict):
        return RowError(source, line, "a record must be an object with the fields " + ", ".join(FIELDS) + ".")
    missing = [f for f in FIELDS if f not in record or record[f] is None or not str(record[f]).strip()]
    extra = sorted(set(record) - set(FIELDS))
    if missing:
        return RowError(source, line, f"missing or empty: {', '.join(missing)}.")
    if extra:
        return RowError(source, line, f"unknown field(s): {', '.join(extra)}; allowed: {', '.join(FIELDS)}.")
    values = {f: str(record[f]).strip() for f in FIELDS}
    try:
        values["timestamp"] = parse_time(values["timestamp"]).strftime(TIME_FORMAT)
    except ValueError:
        return RowError(source, line, f"timestamp {values['timestamp']!r} is not a date-time (use 2024-05-01 13:45:00).")
    return Event(
        values["event_id"], values["patient_id"], values["timestamp"], values["event_type"], values["sub_type"],
        values["content"], source_table=source, source_row=line,
    )
