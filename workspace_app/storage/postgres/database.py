"""The one owner of the PostgreSQL catalog's connection: connecting, the lock, transactions, reads and migrations.

Repositories run their SQL through a `PostgresDatabase` (psycopg 3, `%s` placeholders, rows as dicts); psycopg
errors become `StorageError` here (integrity errors pass through, so a repository can turn a broken UNIQUE
constraint into a message of its own), as storage/sqlite/database.py does for SQLite.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg.rows import dict_row

from workspace_app.errors import StorageError

Step = str | Callable[[psycopg.Connection[dict[str, Any]]], None]
"""One migration statement: SQL text, or a function that runs on the connection inside the migration."""

_MIGRATION_LOCK = 7_230_412  # pg_advisory_xact_lock key: processes starting together migrate one at a time


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


class PostgresDatabase:
    """One connection to a PostgreSQL database, shared by the threads of a process under a lock."""

    def __init__(self, url: str) -> None:
        try:
            self._connection = psycopg.connect(url, autocommit=True, row_factory=dict_row, connect_timeout=10)
        except psycopg.Error as exc:
            raise StorageError(
                f"Cannot connect to the PostgreSQL catalog at {safe_url(url)}: {exc}. Check WORKSPACE_CATALOG__URL "
                "and that the server is running."
            ) from exc
        self._lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """Hold the lock and a transaction; commit on success, roll back on any error."""
        with self._lock:
            try:
                with self._connection.transaction():
                    yield self._connection
            except psycopg.IntegrityError:
                raise
            except psycopg.Error as exc:
                raise StorageError(f"The catalog could not be written: {exc}. Try again.") from exc

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """All rows of one read."""
        with self._lock:
            try:
                return self._connection.execute(sql, params).fetchall()
            except psycopg.Error as exc:
                raise StorageError(f"The catalog could not be read: {exc}. Try again.") from exc

    def analyze(self, *tables: str) -> None:
        """Refresh the planner's statistics of these tables (our own names, never user input)."""
        with self._lock:
            try:
                self._connection.execute(f"ANALYZE {', '.join(tables)}")
            except psycopg.Error as exc:
                raise StorageError(f"The catalog could not be written: {exc}. Try again.") from exc

    def migrate(self, migrations: Sequence[Sequence[Step]]) -> None:
        """Apply the migrations not yet recorded in `schema_version`, in order, in one transaction."""
        with self.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT MAX(version) AS version FROM schema_version").fetchone()
            current = (row or {}).get("version") or 0
            for version, script in enumerate(migrations, start=1):
                if version > current:
                    for statement in script:
                        if callable(statement):
                            statement(db)
                        else:
                            db.execute(statement)
                    db.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()
