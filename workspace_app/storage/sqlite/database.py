"""The one owner of the catalog's SQLite connection: opening, the lock, transactions, reads and migrations.

Repositories run their SQL through a `Database`; sqlite3 errors become `StorageError` here (integrity errors
pass through, so a repository can turn a broken UNIQUE constraint into a message of its own).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workspace_app.errors import StorageError

Step = str | Callable[[sqlite3.Connection], None]
"""One migration statement: SQL text, or a function that runs on the connection inside the migration."""


class Database:
    """One SQLite file in WAL mode with foreign keys on; safe to use from several threads and processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._connection = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StorageError(f"Cannot open the catalog at {path}: {exc}. Check the data directory.") from exc
        self._lock = threading.RLock()
        self._connection.row_factory = sqlite3.Row
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute("PRAGMA foreign_keys=ON")
        self._connection.execute("PRAGMA synchronous=NORMAL")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Hold the lock and a write transaction (BEGIN IMMEDIATE); commit on success, roll back on any error."""
        db = self._connection
        with self._lock:
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except sqlite3.IntegrityError:
                db.execute("ROLLBACK")
                raise
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StorageError(f"The catalog could not be written: {exc}. Try again.") from exc
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """All rows of one read."""
        with self._lock:
            try:
                return self._connection.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"The catalog could not be read: {exc}. Try again.") from exc

    def migrate(self, migrations: Sequence[Sequence[Step]]) -> None:
        """Apply the migrations not yet recorded in `schema_version`, in order, in one transaction."""
        with self.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            current = db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
            for version, script in enumerate(migrations, start=1):
                if version > current:
                    for statement in script:
                        if callable(statement):
                            statement(db)
                        else:
                            db.execute(statement)
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()
