"""Workspaces in the PostgreSQL catalog: unique names; their documents, chunks and keyword rows go with them."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from workspace_app.errors import WorkspaceExistsError, WorkspaceNotFoundError
from workspace_app.models.documents import Workspace
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.sqlite.workspaces import now_iso

_SELECT = (
    "SELECT w.*, (SELECT COUNT(*) FROM documents d WHERE d.workspace_id = w.id) AS n, "
    "(SELECT COUNT(*) FROM documents d WHERE d.workspace_id = w.id AND d.status = 'failed') AS failed FROM workspaces w "
)


class PostgresWorkspaces:
    """Workspaces by id and by unique name."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def create_workspace(self, name: str) -> Workspace:
        """Create a workspace with a unique name."""
        return self.add_workspace(Workspace(uuid.uuid4().hex[:12], name, now_iso()))

    def add_workspace(self, workspace: Workspace) -> Workspace:
        """Insert a workspace as given (id and creation time too): what copying a catalog needs."""
        try:
            with self._db.transaction() as db:
                db.execute(
                    "INSERT INTO workspaces (id, name, created_at) VALUES (%s, %s, %s)",
                    (workspace.id, workspace.name, workspace.created_at),
                )
        except psycopg.errors.UniqueViolation as exc:
            message = f"A workspace named '{workspace.name}' already exists. Pick another name."
            raise WorkspaceExistsError(message) from exc
        return Workspace(workspace.id, workspace.name, workspace.created_at)

    def find_workspace(self, name_or_id: str) -> Workspace | None:
        """The workspace with this id or name, if any."""
        rows = self._db.query(
            _SELECT + "WHERE w.id = %s OR w.name = %s ORDER BY w.id = %s DESC LIMIT 1", (name_or_id,) * 3
        )
        return _workspace(rows[0]) if rows else None

    def list_workspaces(self) -> list[Workspace]:
        """All workspaces, oldest first."""
        return [_workspace(row) for row in self._db.query(_SELECT + 'ORDER BY w.created_at, w.name COLLATE "C"')]

    def rename_workspace(self, workspace_id: str, new_name: str) -> Workspace:
        """Give a workspace a new unique name."""
        try:
            with self._db.transaction() as db:
                db.execute("UPDATE workspaces SET name = %s WHERE id = %s", (new_name, workspace_id))
        except psycopg.errors.UniqueViolation as exc:
            raise WorkspaceExistsError(f"A workspace named '{new_name}' already exists. Pick another name.") from exc
        found = self.find_workspace(workspace_id)
        if found is None:
            raise WorkspaceNotFoundError(f"Workspace '{workspace_id}' does not exist.")
        return found

    def delete_workspace(self, workspace_id: str) -> None:
        """Delete a workspace with its documents, chunks and keyword index rows (foreign keys cascade)."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM workspaces WHERE id = %s", (workspace_id,))


def _workspace(row: dict[str, Any]) -> Workspace:
    return Workspace(row["id"], row["name"], row["created_at"], int(row["n"]), int(row["failed"]))
