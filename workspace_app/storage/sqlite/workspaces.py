"""Workspaces in the SQLite catalog: unique names, and a keyword table created and dropped with each."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import UTC, datetime

from workspace_app.errors import WorkspaceExistsError, WorkspaceNotFoundError
from workspace_app.models.documents import Workspace
from workspace_app.storage.sqlite.database import Database
from workspace_app.storage.sqlite.figures import delete_figure_rows
from workspace_app.storage.sqlite.keywords import create_keyword_table, keyword_table

_SELECT = (
    "SELECT w.*, (SELECT COUNT(*) FROM documents d WHERE d.workspace_id = w.id) AS n, "
    "(SELECT COUNT(*) FROM documents d WHERE d.workspace_id = w.id AND d.status = 'failed') AS failed FROM workspaces w "
)


def now_iso() -> str:
    """Current UTC time as ISO 8601 text."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class SqliteWorkspaces:
    """Workspaces by id and by unique name."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def create_workspace(self, name: str) -> Workspace:
        """Create a workspace with a unique name."""
        workspace = Workspace(uuid.uuid4().hex[:12], name, now_iso())
        try:
            with self._db.transaction() as db:
                db.execute(
                    "INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)",
                    (workspace.id, workspace.name, workspace.created_at),
                )
                create_keyword_table(db, workspace.id)
        except sqlite3.IntegrityError as exc:
            raise WorkspaceExistsError(f"A workspace named '{name}' already exists. Pick another name.") from exc
        return workspace

    def find_workspace(self, name_or_id: str) -> Workspace | None:
        """The workspace with this id or name, if any."""
        rows = self._db.query(
            _SELECT + "WHERE w.id = ? OR w.name = ? ORDER BY w.id = ? DESC LIMIT 1", (name_or_id, name_or_id, name_or_id)
        )
        return _workspace(rows[0]) if rows else None

    def list_workspaces(self) -> list[Workspace]:
        """All workspaces, oldest first."""
        return [_workspace(row) for row in self._db.query(_SELECT + "ORDER BY w.created_at, w.name")]

    def rename_workspace(self, workspace_id: str, new_name: str) -> Workspace:
        """Give a workspace a new unique name."""
        try:
            with self._db.transaction() as db:
                db.execute("UPDATE workspaces SET name = ? WHERE id = ?", (new_name, workspace_id))
        except sqlite3.IntegrityError as exc:
            raise WorkspaceExistsError(f"A workspace named '{new_name}' already exists. Pick another name.") from exc
        found = self.find_workspace(workspace_id)
        if found is None:
            raise WorkspaceNotFoundError(f"Workspace '{workspace_id}' does not exist.")
        return found

    def delete_workspace(self, workspace_id: str) -> None:
        """Delete a workspace with its documents, chunks and keyword index rows."""
        with self._db.transaction() as db:
            db.execute(f"DROP TABLE IF EXISTS {keyword_table(workspace_id)}")
            delete_figure_rows(db, "workspace_id", workspace_id)
            db.execute("DELETE FROM workspaces WHERE id = ?", (workspace_id,))


def _workspace(row: sqlite3.Row) -> Workspace:
    return Workspace(row["id"], row["name"], row["created_at"], int(row["n"]), int(row["failed"]))
