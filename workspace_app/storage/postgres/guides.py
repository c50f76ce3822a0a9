"""Source guides and suggested questions in the PostgreSQL catalog, stored as JSON text (the core computes them)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from workspace_app.models.guides import SourceGuide, SuggestedQuestion
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.sqlite.workspaces import now_iso


class PostgresGuides:
    """One guide per document (with the version of the code that made it), and its checked suggestions."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def save_guide(self, workspace_id: str, guide: SourceGuide, version: str) -> None:
        """Store (or replace) a document's guide; a document removed meanwhile keeps none."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO document_guides (document_id, workspace_id, version, guide, created_at) "
                "SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM documents WHERE id = %s) "
                "ON CONFLICT (document_id) DO UPDATE SET version = excluded.version, guide = excluded.guide, "
                "created_at = excluded.created_at",
                (guide.document_id, workspace_id, version, json.dumps(guide.to_json(), ensure_ascii=False), now_iso(),
                 guide.document_id),
            )

    def get_guides(self, document_ids: Sequence[str], version: str) -> dict[str, SourceGuide]:
        """The stored guides of these documents made by `version` (others are left out: stale or missing)."""
        rows = self._db.query(
            "SELECT document_id, guide FROM document_guides WHERE version = %s AND document_id = ANY(%s)",
            (version, list(document_ids)),
        )
        return {row["document_id"]: SourceGuide.from_json(json.loads(row["guide"])) for row in rows}

    def save_document_suggestions(self, document_id: str, check_key: str, questions: Sequence[SuggestedQuestion]) -> None:
        """Store a document's checked suggestions under the key of what checked them; a removed document keeps none."""
        payload = json.dumps([q.to_json() for q in questions], ensure_ascii=False)
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO document_suggestions (document_id, check_key, questions, created_at) "
                "SELECT %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM documents WHERE id = %s) "
                "ON CONFLICT (document_id, check_key) DO UPDATE SET questions = excluded.questions, "
                "created_at = excluded.created_at",
                (document_id, check_key, payload, now_iso(), document_id),
            )

    def get_document_suggestions(self, check_keys: Mapping[str, str]) -> dict[str, list[SuggestedQuestion]]:
        """The stored suggestions of these documents (document id -> check key) made under that same key."""
        rows = self._db.query(
            "SELECT s.document_id, s.questions FROM document_suggestions s "
            "JOIN unnest(%s::text[], %s::text[]) AS k(document_id, check_key) "
            "ON k.document_id = s.document_id AND k.check_key = s.check_key",
            (list(check_keys), list(check_keys.values())),
        )
        return {row["document_id"]: [SuggestedQuestion(**q) for q in json.loads(row["questions"])] for row in rows}
