"""The standard vocabulary of imported records in the PostgreSQL catalog: code -> title, by system."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workspace_app.models.events import VocabularyEntry
from workspace_app.storage.postgres.database import PostgresDatabase


class PostgresVocabularyStore:
    """The `VocabularyStore` over the catalog's database."""

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database

    def upsert_vocabulary(self, entries: Sequence[VocabularyEntry]) -> int:
        """Insert entries or replace the ones known by (system, code); returns how many were written."""
        rows = [(e.system, e.code, e.title, e.detail, e.source) for e in entries]
        if rows:
            with self.database.transaction() as db:
                db.cursor().executemany(
                    "INSERT INTO vocabulary (system, code, title, detail, source) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (system, code) DO UPDATE SET title = excluded.title, detail = excluded.detail, "
                    "source = excluded.source",
                    rows,
                )
        return len(rows)

    def vocabulary(self, system: str, codes: Sequence[str] | None = None) -> list[VocabularyEntry]:
        """The entries of a system (only these codes, if given), by code (byte order, as SQLite sorts)."""
        if codes is None:
            rows = self.database.query(
                'SELECT * FROM vocabulary WHERE system = %s ORDER BY code COLLATE "C"', (system,)
            )
        else:
            rows = self.database.query(
                'SELECT * FROM vocabulary WHERE system = %s AND code = ANY(%s) ORDER BY code COLLATE "C"',
                (system, sorted(set(codes))),
            )
        return [_entry(row) for row in rows]


def _entry(row: dict[str, Any]) -> VocabularyEntry:
    return VocabularyEntry(row["system"], row["code"], row["title"], row["detail"], row["source"])
