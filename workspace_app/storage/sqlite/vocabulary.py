"""The standard vocabulary of imported records in the catalog (migration 13): code -> title, by system."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from workspace_app.models.events import VocabularyEntry
from workspace_app.storage.sqlite.database import Database


class SqliteVocabularyStore:
    """The `VocabularyStore` over the catalog's database."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def upsert_vocabulary(self, entries: Sequence[VocabularyEntry]) -> int:
        """Insert entries or replace the ones known by (system, code); returns how many were written."""
        rows = [(e.system, e.code, e.title, e.detail, e.source) for e in entries]
        with self.database.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO vocabulary VALUES (?, ?, ?, ?, ?)", rows)
        return len(rows)

    def vocabulary(self, system: str, codes: Sequence[str] | None = None) -> list[VocabularyEntry]:
        """The entries of a system (only these codes, if given), by code."""
        if codes is None:
            rows = self.database.query("SELECT * FROM vocabulary WHERE system = ? ORDER BY code", (system,))
            return [_entry(r) for r in rows]
        found: list[VocabularyEntry] = []
        wanted = sorted(set(codes))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            rows = self.database.query(
                f"SELECT * FROM vocabulary WHERE system = ? AND code IN ({','.join('?' * len(batch))}) ORDER BY code",
                (system, *batch),
            )
            found.extend(_entry(r) for r in rows)
        return found


def _entry(row: sqlite3.Row) -> VocabularyEntry:
    return VocabularyEntry(row["system"], row["code"], row["title"], row["detail"], row["source"])
