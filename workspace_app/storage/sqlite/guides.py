"""Source guides and suggested questions in the SQLite catalog, stored as JSON (the core computes them)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from workspace_app.models.guides import SourceGuide, SuggestedQuestion
from workspace_app.storage.sqlite.database import Database
from workspace_app.storage.sqlite.workspaces import now_iso


class SqliteGuides:
    """One guide per document (with the version of the code that made it), and its checked suggestions."""

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

    def save_document_suggestions(self, document_id: str, check_key: str, questions: Sequence[SuggestedQuestion]) -> None:
        """Store a document's checked suggestions under the key of what checked them; a removed document keeps none."""
        payload = json.dumps([q.to_json() for q in questions], ensure_ascii=False)
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO document_suggestions (document_id, check_key, questions, created_at) "
                "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?) "
                "ON CONFLICT (document_id, check_key) DO UPDATE SET questions = excluded.questions, "
                "created_at = excluded.created_at",
                (document_id, check_key, payload, now_iso(), document_id),
            )

    def get_document_suggestions(self, check_keys: Mapping[str, str]) -> dict[str, list[SuggestedQuestion]]:
        """The stored suggestions of these documents (document id -> check key) made under that same key."""
        found: dict[str, list[SuggestedQuestion]] = {}
        for document_id, check_key in check_keys.items():
            rows = self._db.query(
                "SELECT questions FROM document_suggestions WHERE document_id = ? AND check_key = ?",
                (document_id, check_key),
            )
            if rows:
                found[document_id] = [SuggestedQuestion(**q) for q in json.loads(rows[0][0])]
        return found
