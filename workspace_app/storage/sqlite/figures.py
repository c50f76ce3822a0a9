"""Figures in the SQLite catalog: one row per figure of a document, and an FTS5 index over the index terms the core
computed from its caption, inner text and nearby text (storage does not tokenize)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from workspace_app.models.documents import Figure, Rect
from workspace_app.storage.sqlite.database import Database


def delete_figure_rows(db: sqlite3.Connection, where: str, value: str) -> None:
    """Remove figures and their index rows by `document_id` or `workspace_id` (`where` names the column)."""
    if where not in ("document_id", "workspace_id"):
        raise ValueError(f"unexpected column {where!r}")
    db.execute(f"DELETE FROM figures_fts WHERE rowid IN (SELECT rowid FROM figures WHERE {where} = ?)", (value,))
    db.execute(f"DELETE FROM figures WHERE {where} = ?", (value,))


class SqliteFigures:
    """A document's figures, replaced as a whole at ingestion, read by document, by id and by the chunks beside
    them, and searched by their index terms."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def replace_figures(
        self, document_id: str, workspace_id: str, figures: Sequence[Figure], index_texts: Sequence[tuple[str, str]]
    ) -> None:
        """Swap a document's figures and their index rows (caption terms, body terms per figure); a document
        removed meanwhile keeps none."""
        with self._db.transaction() as db:
            delete_figure_rows(db, "document_id", document_id)
            if db.execute("SELECT 1 FROM documents WHERE id = ?", (document_id,)).fetchone() is None:
                return
            for figure, (caption_terms, body_terms) in zip(figures, index_texts, strict=True):
                cursor = db.execute(
                    "INSERT INTO figures (id, document_id, workspace_id, ordinal, page, x0, y0, x1, y1, label, caption, "
                    "inner_text, kind, chunk_ids, thumbnail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        figure.id, document_id, workspace_id, figure.ordinal, figure.rect.page, figure.rect.x0,
                        figure.rect.y0, figure.rect.x1, figure.rect.y1, figure.label, figure.caption, figure.text,
                        figure.kind, json.dumps(list(figure.chunk_ids)), figure.thumbnail,
                    ),
                )
                db.execute(
                    "INSERT INTO figures_fts (rowid, caption, body) VALUES (?, ?, ?)",
                    (cursor.lastrowid, caption_terms, body_terms),
                )

    def document_figures(self, document_id: str) -> list[Figure]:
        """A document's figures in reading order (page, then top to bottom)."""
        return [_figure(row) for row in self._db.query(
            "SELECT * FROM figures WHERE document_id = ? ORDER BY ordinal", (document_id,)
        )]

    def get_figures(self, figure_ids: Sequence[str]) -> dict[str, Figure]:
        """Figures by id (missing ids are left out)."""
        ids = list(figure_ids)
        if not ids:
            return {}
        rows = self._db.query(f"SELECT * FROM figures WHERE id IN ({', '.join('?' * len(ids))})", ids)
        return {row["id"]: _figure(row) for row in rows}

    def figures_beside(self, chunk_ids: Sequence[str]) -> list[Figure]:
        """The figures that sit beside any of these chunks, in the chunks' order."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return []
        documents = list(dict.fromkeys(chunk_id.rsplit("-", 1)[0] for chunk_id in ids))
        rows = self._db.query(
            f"SELECT * FROM figures WHERE document_id IN ({', '.join('?' * len(documents))}) ORDER BY ordinal",
            documents,
        )
        figures = [_figure(row) for row in rows]
        order = {chunk_id: position for position, chunk_id in enumerate(ids)}
        beside = [
            (min(order[c] for c in figure.chunk_ids if c in order), figure)
            for figure in figures if any(c in order for c in figure.chunk_ids)
        ]
        return [figure for _, figure in sorted(beside, key=lambda pair: pair[0])]

    def search_figures(
        self, workspace_id: str, terms: Sequence[str], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Figure ids ranked by BM25 over any of the terms (best first; the caption weighs most), with their
        scores; only figures of ready documents."""
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        sql = (
            "SELECT f.id, bm25(figures_fts, 2.0, 1.0) AS score FROM figures_fts JOIN figures f ON "
            "f.rowid = figures_fts.rowid JOIN documents d ON d.id = f.document_id "
            "WHERE figures_fts MATCH ? AND f.workspace_id = ? AND d.status = 'ready'"
        )
        params: list[Any] = [match, workspace_id]
        if document_ids is not None:
            sql += f" AND f.document_id IN ({','.join('?' * len(document_ids))})"
            params += list(document_ids)
        sql += " ORDER BY score LIMIT ?"
        params.append(limit)
        return [(row[0], -float(row[1])) for row in self._db.query(sql, params)]

    def delete_document_figures(self, document_id: str) -> None:
        """Remove a document's figures and their index rows."""
        with self._db.transaction() as db:
            delete_figure_rows(db, "document_id", document_id)


def _figure(row: sqlite3.Row) -> Figure:
    return Figure(
        id=row["id"], document_id=row["document_id"], ordinal=row["ordinal"],
        rect=Rect(row["page"], row["x0"], row["y0"], row["x1"], row["y1"]), label=row["label"],
        caption=row["caption"], text=row["inner_text"], kind=row["kind"],
        chunk_ids=tuple(json.loads(row["chunk_ids"])), thumbnail=row["thumbnail"],
    )
