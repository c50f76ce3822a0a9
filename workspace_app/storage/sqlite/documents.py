"""Documents in the SQLite catalog: one row per file in a workspace, with its ingestion state."""

from __future__ import annotations

import json
import sqlite3

from workspace_app.models.documents import Document
from workspace_app.storage.sqlite.database import Database
from workspace_app.storage.sqlite.figures import delete_figure_rows
from workspace_app.storage.sqlite.keywords import delete_keyword_rows
from workspace_app.storage.sqlite.workspaces import now_iso

_DOCUMENT_FIELDS = {
    "name", "pages", "chunks", "status", "stage", "progress", "error", "pages_without_text", "included",
    "pages_parsed", "chunks_embedded", "chunks_total", "eta_s", "cancel_requested", "stage_done", "stage_total",
    "error_retryable", "attempt", "attempts", "next_try_at", "stage_waiting",
}


class SqliteDocuments:
    """Documents of a workspace and their ingestion state."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def add_document(self, document: Document) -> Document:
        """Insert a document row (unique per workspace and content)."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, pages, chunks, "
                "status, stage, progress, error, added_at, updated_at, pages_without_text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            "SELECT * FROM documents WHERE workspace_id = ? AND (id = ? OR sha256 = ? OR name = ?) "
            "ORDER BY id = ? DESC, sha256 = ? DESC LIMIT 1",
            (workspace_id, *([name_id_or_sha] * 5)),
        )
        return _document(rows[0]) if rows else None

    def get_document(self, document_id: str) -> Document | None:
        """The document with this id in any workspace, if any."""
        rows = self._db.query("SELECT * FROM documents WHERE id = ?", (document_id,))
        return _document(rows[0]) if rows else None

    def list_documents(self, workspace_id: str) -> list[Document]:
        """The workspace's documents in the order they were added."""
        rows = self._db.query("SELECT * FROM documents WHERE workspace_id = ? ORDER BY added_at, name", (workspace_id,))
        return [_document(row) for row in rows]

    def update_document(self, document_id: str, **fields: object) -> None:
        """Change some columns of a document row."""
        unknown = set(fields) - _DOCUMENT_FIELDS
        if unknown:
            raise ValueError(f"unknown document fields: {sorted(unknown)}")
        values = [json.dumps(list(v)) if k == "pages_without_text" else v for k, v in fields.items()]  # type: ignore[call-overload]
        assignments = ", ".join(f"{name} = ?" for name in fields)
        with self._db.transaction() as db:
            db.execute(
                f"UPDATE documents SET {assignments}, updated_at = ? WHERE id = ?",
                (*values, now_iso(), document_id),
            )

    def delete_document(self, document_id: str) -> None:
        """Delete a document with its chunks, figures and their index rows."""
        with self._db.transaction() as db:
            row = db.execute("SELECT workspace_id FROM documents WHERE id = ?", (document_id,)).fetchone()
            if row is not None:
                delete_keyword_rows(db, row[0], document_id)
            delete_figure_rows(db, "document_id", document_id)
            db.execute("DELETE FROM documents WHERE id = ?", (document_id,))

    def count_file_references(self, sha256: str) -> int:
        """How many documents (in any workspace) use this file."""
        return int(self._db.query("SELECT COUNT(*) FROM documents WHERE sha256 = ?", (sha256,))[0][0])


def _document(row: sqlite3.Row) -> Document:
    return Document(
        id=row["id"], workspace_id=row["workspace_id"], name=row["name"], sha256=row["sha256"],
        size_bytes=row["size_bytes"], pages=row["pages"], chunks=row["chunks"], status=row["status"],
        stage=row["stage"], progress=row["progress"], error=row["error"], added_at=row["added_at"],
        media_type=row["media_type"], pages_without_text=tuple(json.loads(row["pages_without_text"] or "[]")),
        pages_parsed=row["pages_parsed"], chunks_embedded=row["chunks_embedded"], chunks_total=row["chunks_total"],
        eta_s=row["eta_s"], included=bool(row["included"]), cancel_requested=bool(row["cancel_requested"]),
        stage_done=row["stage_done"], stage_total=row["stage_total"], retryable=bool(row["error_retryable"]),
        attempt=row["attempt"], attempts=row["attempts"], next_try_at=row["next_try_at"],
        held_by=row["lease_owner"], heartbeat_at=row["lease_heartbeat"], stage_waiting=bool(row["stage_waiting"]),
    )
