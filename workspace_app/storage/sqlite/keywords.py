"""The FTS5 keyword index: one table per workspace, its rows keyed by the chunks' rowids.

Rows hold index terms computed by the core (storage does not tokenize): a chunk's section title and body.
"""

from __future__ import annotations

import sqlite3

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"  # the PostgreSQL catalog's postings use it too
FTS_COLUMNS = f"section, body, tokenize = '{FTS_TOKENIZER}'"


def keyword_table(workspace_id: str) -> str:
    """Name of a workspace's FTS5 table (ids are ours: 12 hex digits, checked to keep the SQL safe)."""
    if not workspace_id.isalnum():
        raise ValueError(f"unexpected workspace id {workspace_id!r}")
    return f"fts_{workspace_id}"


def create_keyword_table(db: sqlite3.Connection, workspace_id: str) -> None:
    """Create a workspace's FTS5 table if it is missing."""
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {keyword_table(workspace_id)} USING fts5({FTS_COLUMNS})")


def delete_keyword_rows(db: sqlite3.Connection, workspace_id: str, document_id: str) -> None:
    """Remove a document's rows from its workspace's FTS5 table (run before its chunks are deleted)."""
    db.execute(
        f"DELETE FROM {keyword_table(workspace_id)} WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
        (document_id,),
    )
