"""Database on a real SQLite file: transactions commit or roll back, sqlite3 errors become StorageError,
migrations run once, and what was written is there after reopening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from workspace_app.errors import StorageError
from workspace_app.storage.sqlite.database import Database, Step

NOTES: list[Step] = ["CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)"]


def texts(database: Database) -> list[str]:
    return [row["text"] for row in database.query("SELECT text FROM notes ORDER BY id")]


def test_a_failing_transaction_writes_nothing_and_reraises(tmp_path: Path) -> None:
    database = Database(tmp_path / "db.sqlite")
    database.migrate([NOTES])
    with pytest.raises(RuntimeError, match="stop"), database.transaction() as db:
        db.execute("INSERT INTO notes (text) VALUES ('lost')")
        raise RuntimeError("stop")
    with database.transaction() as db:
        db.execute("INSERT INTO notes (text) VALUES ('kept')")
    assert texts(database) == ["kept"]
    database.close()


def test_sqlite_errors_become_storage_errors_and_integrity_errors_pass_through(tmp_path: Path) -> None:
    database = Database(tmp_path / "db.sqlite")
    database.migrate([NOTES])
    written_error = pytest.raises(StorageError, match="The catalog could not be written: no such table")
    with written_error as written, database.transaction() as db:
        db.execute("INSERT INTO notes (text) VALUES ('lost')")
        db.execute("INSERT INTO missing VALUES (1)")
    assert isinstance(written.value.__cause__, sqlite3.OperationalError)
    with pytest.raises(StorageError, match="The catalog could not be read: no such table") as read:
        database.query("SELECT * FROM missing")
    assert isinstance(read.value.__cause__, sqlite3.OperationalError)
    with pytest.raises(sqlite3.IntegrityError), database.transaction() as db:
        db.execute("INSERT INTO notes (text) VALUES ('twice')")
        db.execute("INSERT INTO notes (text) VALUES ('twice')")
    assert texts(database) == []
    database.close()


def test_a_path_that_cannot_be_opened_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="Cannot open the catalog at"):
        Database(tmp_path)  # a directory


def test_migrations_run_once_and_new_ones_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    runs: list[int] = []

    def seed(db: sqlite3.Connection) -> None:
        runs.append(1)
        db.execute("INSERT INTO notes (text) VALUES ('seeded')")

    first = Database(path)
    first.migrate([NOTES, [seed]])
    first.migrate([NOTES, [seed]])
    first.close()
    second = Database(path)
    second.migrate([NOTES, [seed], ["INSERT INTO notes (text) VALUES ('added later')"]])
    assert runs == [1]
    assert texts(second) == ["seeded", "added later"]
    assert [row[0] for row in second.query("SELECT version FROM schema_version ORDER BY version")] == [1, 2, 3]
    second.close()


def test_written_rows_are_read_again_after_reopening_with_the_settings_applied(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    database = Database(path)
    database.migrate([NOTES])
    with database.transaction() as db:
        db.execute("INSERT INTO notes (text) VALUES ('persisted')")
    database.close()
    reopened = Database(path)
    assert texts(reopened) == ["persisted"]
    assert reopened.query("PRAGMA journal_mode")[0][0] == "wal"
    assert reopened.query("PRAGMA foreign_keys")[0][0] == 1
    assert reopened.query("PRAGMA synchronous")[0][0] == 1  # NORMAL
    reopened.close()
