"""Figures in the PostgreSQL catalog: one row per figure of a document with the core's index terms of its caption and
body (storage does not tokenize), searched as SQLite's `figures_fts` is.

A workspace holds tens to hundreds of figures, not the tens of thousands of chunks the keyword index holds, so the
search ranks them in an in-memory FTS5 table built per query from the workspace's ready figures: the same tokenizer
and the same `bm25(…, 2.0, 1.0)` as SQLite's, with the workspace's figures as the collection (SQLite's statistics are
over every workspace's figures, so scores can differ slightly; the order within one workspace rarely does).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from workspace_app.models.documents import Figure, Rect
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.sqlite.keywords import FTS_TOKENIZER

_COLUMNS = "id, document_id, ordinal, page, x0, y0, x1, y1, label, caption, inner_text, kind, chunk_ids, thumbnail"


class PostgresFigures:
    """A document's figures, replaced as a whole at ingestion, read by document, by id and by the chunks beside
    them, and searched by their index terms."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database
        self._ranker = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._ranker.execute(f"CREATE VIRTUAL TABLE ranked USING fts5(caption, body, tokenize = '{FTS_TOKENIZER}')")
        self._lock = threading.Lock()

    def replace_figures(
        self, document_id: str, workspace_id: str, figures: Sequence[Figure], index_texts: Sequence[tuple[str, str]]
    ) -> None:
        """Swap a document's figures and their index terms; a document removed meanwhile keeps none."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM figures WHERE document_id = %s", (document_id,))
            if db.execute("SELECT 1 FROM documents WHERE id = %s", (document_id,)).fetchone() is None:
                return
            for figure, (caption_terms, body_terms) in zip(figures, index_texts, strict=True):
                db.execute(
                    "INSERT INTO figures (id, document_id, workspace_id, ordinal, page, x0, y0, x1, y1, label, caption, "
                    "inner_text, kind, chunk_ids, thumbnail, caption_terms, body_terms) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        figure.id, document_id, workspace_id, figure.ordinal, figure.rect.page, figure.rect.x0,
                        figure.rect.y0, figure.rect.x1, figure.rect.y1, figure.label, figure.caption, figure.text,
                        figure.kind, json.dumps(list(figure.chunk_ids)), figure.thumbnail, caption_terms, body_terms,
                    ),
                )

    def document_figures(self, document_id: str) -> list[Figure]:
        """A document's figures in reading order."""
        return [_figure(row) for row in self._db.query(
            f"SELECT {_COLUMNS} FROM figures WHERE document_id = %s ORDER BY ordinal", (document_id,)
        )]

    def get_figures(self, figure_ids: Sequence[str]) -> dict[str, Figure]:
        """Figures by id (missing ids are left out)."""
        ids = list(figure_ids)
        if not ids:
            return {}
        rows = self._db.query(f"SELECT {_COLUMNS} FROM figures WHERE id = ANY(%s)", (ids,))
        return {row["id"]: _figure(row) for row in rows}

    def figures_beside(self, chunk_ids: Sequence[str]) -> list[Figure]:
        """The figures that sit beside any of these chunks, in the chunks' order."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return []
        documents = list(dict.fromkeys(chunk_id.rsplit("-", 1)[0] for chunk_id in ids))
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM figures WHERE document_id = ANY(%s) ORDER BY document_id, ordinal", (documents,)
        )
        order = {chunk_id: position for position, chunk_id in enumerate(ids)}
        beside = [
            (min(order[c] for c in figure.chunk_ids if c in order), figure)
            for figure in map(_figure, rows) if any(c in order for c in figure.chunk_ids)
        ]
        return [figure for _, figure in sorted(beside, key=lambda pair: pair[0])]

    def search_figures(
        self, workspace_id: str, terms: Sequence[str], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Figure ids ranked by BM25 over any of the terms (best first; the caption weighs most), with their
        scores; only figures of ready documents."""
        if not terms:
            return []
        sql = (
            "SELECT f.id, f.caption_terms, f.body_terms FROM figures f JOIN documents d ON d.id = f.document_id "
            "WHERE f.workspace_id = %s AND d.status = 'ready'"
        )
        params: list[Any] = [workspace_id]
        if document_ids is not None:
            sql += " AND f.document_id = ANY(%s)"
            params.append(list(document_ids))
        rows = self._db.query(sql + " ORDER BY f.id", params)
        if not rows:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        with self._lock:
            self._ranker.execute("BEGIN")
            try:
                self._ranker.executemany(
                    "INSERT INTO ranked (rowid, caption, body) VALUES (?, ?, ?)",
                    [(n, row["caption_terms"], row["body_terms"]) for n, row in enumerate(rows, start=1)],
                )
                found = self._ranker.execute(
                    "SELECT rowid, bm25(ranked, 2.0, 1.0) AS score FROM ranked WHERE ranked MATCH ? ORDER BY score "
                    "LIMIT ?", (match, limit),
                ).fetchall()
            finally:
                self._ranker.execute("ROLLBACK")
        return [(rows[rowid - 1]["id"], -float(score)) for rowid, score in found]

    def delete_document_figures(self, document_id: str) -> None:
        """Remove a document's figures."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM figures WHERE document_id = %s", (document_id,))

    def close(self) -> None:
        """Close the in-memory ranking table."""
        self._ranker.close()


def _figure(row: dict[str, Any]) -> Figure:
    return Figure(
        id=row["id"], document_id=row["document_id"], ordinal=row["ordinal"],
        rect=Rect(row["page"], row["x0"], row["y0"], row["x1"], row["y1"]), label=row["label"],
        caption=row["caption"], text=row["inner_text"], kind=row["kind"],
        chunk_ids=tuple(json.loads(row["chunk_ids"])), thumbnail=row["thumbnail"],
    )
