"""Read the per-workspace FTS5 tables (`fts_<workspace id>`) straight from a catalog file, for assertions."""

from __future__ import annotations

import sqlite3


def keyword_rows(db: sqlite3.Connection, document_id: str | None = None) -> int:
    """Rows in every workspace's keyword table, or only those of one document's chunks."""
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'fts_*' AND name NOT GLOB 'fts_*_*'")]
    total = 0
    for table in tables:
        if document_id is None:
            total += db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        else:
            total += db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
                (document_id,),
            ).fetchone()[0]
    return int(total)


def orphan_keyword_rows(db: sqlite3.Connection) -> int:
    """Keyword rows whose chunk no longer exists."""
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'fts_*' AND name NOT GLOB 'fts_*_*'")]
    return sum(
        db.execute(f"SELECT COUNT(*) FROM {table} WHERE rowid NOT IN (SELECT rowid FROM chunks)").fetchone()[0]
        for table in tables
    )
