"""Source guides and suggested questions in the SQLite catalog, stored as JSON (the core computes them)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from storage.sqlite.database import Database
from storage.sqlite.workspaces import now_iso
from workspace_app.models.guides import SourceGuide, SuggestedQuestion


class SqliteGuides:
    """One guide per document (with the version of the code that made it), suggestions per workspace."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def save_guide(self, workspace_id: str, guide: SourceGuide, version: str) -> None:
        """Store (or replace) a document's guide; a document removed meanwhile keeps none."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO document_guides (document_id, workspace_id, version, guide, created_at) "
                "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?) "
                "ON CONFLICT (document_id) DO UPDATE SET version = excluded.version, guide = excluded.guide, "
                "created_at = excluded.created_at",
                (guide.document_id, workspace_id, version, json.dumps(guide.to_json(), ensure_ascii=False), now_iso(),
                 guide.document_id),
            )

    def get_guides(self, document_ids: Sequence[str], version: str) -> dict[str, SourceGuide]:
        """The stored guides of these documents made by `version` (others are left out: stale or missing)."""
        ids = list(document_ids)
        if not ids:
            return {}
        rows = self._db.query(
            f"SELECT document_id, guide FROM document_guides WHERE version = ? AND document_id IN ({', '.join('?' * len(ids))})",
            (version, *ids),
        )
        return {row[0]: SourceGuide.from_json(json.loads(row[1])) for row in rows}

    def save_suggestions(self, workspace_id: str, sources_key: str, questions: Sequence[SuggestedQuestion]) -> None:
        """Store the workspace's suggested questions, checked against the sources named by `sources_key`."""
        payload = json.dumps([q.to_json() for q in questions], ensure_ascii=False)
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO workspace_suggestions (workspace_id, sources_key, questions, created_at) "
                "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) "
                "ON CONFLICT (workspace_id) DO UPDATE SET sources_key = excluded.sources_key, "
                "questions = excluded.questions, created_at = excluded.created_at",
                (workspace_id, sources_key, payload, now_iso(), workspace_id),
            )

    def get_suggestions(self, workspace_id: str, sources_key: str) -> list[SuggestedQuestion] | None:
        """The stored suggestions when they were checked against these same sources, else None."""
        rows = self._db.query(
            "SELECT questions FROM workspace_suggestions WHERE workspace_id = ? AND sources_key = ?",
            (workspace_id, sources_key),
        )
        return [SuggestedQuestion(**q) for q in json.loads(rows[0][0])] if rows else None
