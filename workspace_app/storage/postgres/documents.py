"""Documents in the PostgreSQL catalog: one row per file in a workspace, with its ingestion state."""

from __future__ import annotations

import json
from typing import Any

from workspace_app.models.documents import Document
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.sqlite.workspaces import now_iso

_FLAGS = {"included", "cancel_requested", "error_retryable", "stage_waiting"}  # BOOLEAN here, 0/1 in SQLite
DOCUMENT_FIELDS = _FLAGS | {
    "name", "pages", "chunks", "status", "stage", "progress", "error", "pages_without_text", "pages_parsed",
    "chunks_embedded", "chunks_total", "eta_s", "stage_done", "stage_total", "attempt", "attempts", "next_try_at",
}


def column_value(name: str, value: object) -> object:
    """A document field's value as its column holds it (flags as booleans, page lists as JSON)."""
    if name in _FLAGS:
        return bool(value)
    if name == "pages_without_text":
        return json.dumps(list(value))  # type: ignore[call-overload]
    return value


class PostgresDocuments:
    """Documents of a workspace and their ingestion state."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def add_document(self, document: Document) -> Document:
        """Insert a document row (unique per workspace and content)."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, pages, chunks, "
                "status, stage, progress, error, added_at, updated_at, pages_without_text) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    document.id, document.workspace_id, document.name, document.sha256, document.size_bytes,
                    document.media_type, document.pages, document.chunks, document.status, document.stage,
                    document.progress, document.error, document.added_at, now_iso(),
                    json.dumps(list(document.pages_without_text)),
                ),
            )
        return document

    def find_document(self, workspace_id: str, name_id_or_sha: str) -> Document | None:
        """The document with this id, sha256 or name in the workspace."""
        rows = self._db.query(
            "SELECT * FROM documents WHERE workspace_id = %s AND (id = %s OR sha256 = %s OR name = %s) "
            "ORDER BY id = %s DESC, sha256 = %s DESC LIMIT 1",
            (workspace_id, *([name_id_or_sha] * 5)),
        )
        return _document(rows[0]) if rows else None

    def get_document(self, document_id: str) -> Document | None:
        """The document with this id in any workspace, if any."""
        rows = self._db.query("SELECT * FROM documents WHERE id = %s", (document_id,))
        return _document(rows[0]) if rows else None

    def list_documents(self, workspace_id: str) -> list[Document]:
        """The workspace's documents in the order they were added."""
        rows = self._db.query(
            'SELECT * FROM documents WHERE workspace_id = %s ORDER BY added_at, name COLLATE "C"', (workspace_id,)
        )
        return [_document(row) for row in rows]

    def update_document(self, document_id: str, **fields: object) -> None:
        """Change some columns of a document row."""
        unknown = set(fields) - DOCUMENT_FIELDS
        if unknown:
            raise ValueError(f"unknown document fields: {sorted(unknown)}")
        assignments = ", ".join(f"{name} = %s" for name in fields)
        with self._db.transaction() as db:
            db.execute(
                f"UPDATE documents SET {assignments}, updated_at = %s WHERE id = %s",
                (*(column_value(k, v) for k, v in fields.items()), now_iso(), document_id),
            )

    def delete_document(self, document_id: str) -> None:
        """Delete a document with its chunks and keyword index rows (foreign keys cascade)."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM documents WHERE id = %s", (document_id,))

    def count_file_references(self, sha256: str) -> int:
        """How many documents (in any workspace) use this file."""
        return int(self._db.query("SELECT COUNT(*) AS n FROM documents WHERE sha256 = %s", (sha256,))[0]["n"])


def _document(row: dict[str, Any]) -> Document:
    return Document(
        id=row["id"], workspace_id=row["workspace_id"], name=row["name"], sha256=row["sha256"],
        size_bytes=row["size_bytes"], pages=row["pages"], chunks=row["chunks"], status=row["status"],
        stage=row["stage"], progress=row["progress"], error=row["error"], added_at=row["added_at"],
        media_type=row["media_type"], pages_without_text=tuple(json.loads(row["pages_without_text"] or "[]")),
        pages_parsed=row["pages_parsed"], chunks_embedded=row["chunks_embedded"], chunks_total=row["chunks_total"],
        eta_s=row["eta_s"], included=row["included"], cancel_requested=row["cancel_requested"],
        stage_done=row["stage_done"], stage_total=row["stage_total"], retryable=row["error_retryable"],
        attempt=row["attempt"], attempts=row["attempts"], next_try_at=row["next_try_at"],
        held_by=row["lease_owner"], heartbeat_at=row["lease_heartbeat"], stage_waiting=row["stage_waiting"],
    )
