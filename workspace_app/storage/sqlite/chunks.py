"""Chunks in the SQLite catalog (the source of truth for text, pages, sections and boxes), their FTS5 keyword
rows, and the abbreviations each document defines."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from workspace_app.models.documents import Chunk, Rect
from workspace_app.storage.searchable import SEARCHABLE
from workspace_app.storage.sqlite.database import Database
from workspace_app.storage.sqlite.keywords import create_keyword_table, delete_keyword_rows, keyword_table

_BATCH = 500


class SqliteChunks:
    """Chunk text and boxes with a BM25 keyword index over the index terms the core computed for them."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def replace_chunks(
        self, document_id: str, workspace_id: str, chunks: Sequence[Chunk], keyword_texts: Sequence[tuple[str, str]]
    ) -> None:
        """Swap a document's chunks and keyword rows for new ones in one transaction; `keyword_texts` holds each
        chunk's (section terms, body terms), in the order of `chunks`."""
        if len(keyword_texts) != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {len(keyword_texts)} keyword texts")
        rows = [
            (
                c.id, document_id, workspace_id, c.ordinal, c.text, c.section, c.page_start, c.page_end,
                c.token_count, json.dumps([[r.page, r.x0, r.y0, r.x1, r.y1] for r in c.rects]),
                c.recommendation_class, c.evidence_level, c.kind,
            )
            for c in chunks
        ]
        with self._db.transaction() as db:
            create_keyword_table(db, workspace_id)
            delete_keyword_rows(db, workspace_id, document_id)
            db.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
            db.executemany(
                "INSERT INTO chunks (id, document_id, workspace_id, ordinal, text, section, page_start, page_end, "
                "token_count, rects, recommendation_class, evidence_level, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.executemany(
                f"INSERT INTO {keyword_table(workspace_id)} (rowid, section, body) SELECT rowid, ?, ? FROM chunks WHERE id = ?",
                [(section, body, c.id) for (section, body), c in zip(keyword_texts, chunks, strict=True)],
            )

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are left out)."""
        found: dict[str, Chunk] = {}
        for start in range(0, len(chunk_ids), _BATCH):
            batch = list(chunk_ids[start : start + _BATCH])
            marks = ",".join("?" * len(batch))
            for row in self._db.query(f"SELECT * FROM chunks WHERE id IN ({marks})", batch):
                found[row["id"]] = _chunk(row)
        return found

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(kind, text) of chunks by id (missing ids are left out): what ranking reads of every candidate, without
        decoding the boxes of hundreds of chunks that are not shown (search's fusion stage)."""
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(chunk_ids), _BATCH):
            batch = list(chunk_ids[start : start + _BATCH])
            marks = ",".join("?" * len(batch))
            for chunk_id, kind, text in self._db.query(f"SELECT id, kind, text FROM chunks WHERE id IN ({marks})", batch):
                found[chunk_id] = (kind, text)
        return found

    def document_chunk_ids(self, document_id: str) -> list[str]:
        """Ids of a document's chunks in order."""
        rows = self._db.query("SELECT id FROM chunks WHERE document_id = ? ORDER BY ordinal", (document_id,))
        return [row[0] for row in rows]

    def keyword_search(
        self, workspace_id: str, terms: Sequence[str], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Chunk ids ranked by BM25 over any of the terms (best first), with their BM25 scores."""
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        table = keyword_table(workspace_id)
        if not self._db.query("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
            return []
        sql = (
            f"SELECT c.id, bm25({table}, 0.4, 1.0) AS score FROM {table} JOIN chunks c ON c.rowid = {table}.rowid "
            "JOIN documents d ON d.id = c.document_id "
            f"WHERE {table} MATCH ? AND c.workspace_id = ? AND {SEARCHABLE}"
        )
        params: list[Any] = [match, workspace_id]
        if document_ids is not None:
            sql += f" AND c.document_id IN ({','.join('?' * len(document_ids))})"
            params += list(document_ids)
        sql += " ORDER BY score LIMIT ?"
        params.append(limit)
        return [(row[0], -float(row[1])) for row in self._db.query(sql, params)]

    def replace_abbreviations(self, document_id: str, workspace_id: str, pairs: Mapping[str, str]) -> None:
        """Swap the abbreviations defined in a document for new ones."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM abbreviations WHERE document_id = ?", (document_id,))
            db.executemany(
                "INSERT INTO abbreviations (document_id, workspace_id, short, long) VALUES (?, ?, ?, ?)",
                [(document_id, workspace_id, short, long) for short, long in pairs.items()],
            )

    def workspace_abbreviations(self, workspace_id: str) -> dict[str, str]:
        """Short form -> long form over the workspace's ready documents (the most common long form wins)."""
        rows = self._db.query(
            "SELECT a.short, a.long, COUNT(*) AS n FROM abbreviations a JOIN documents d ON d.id = a.document_id "
            "WHERE a.workspace_id = ? AND d.status = 'ready' GROUP BY a.short, a.long ORDER BY n DESC",
            (workspace_id,),
        )
        found: dict[str, str] = {}
        for row in rows:
            found.setdefault(row["short"], row["long"])
        return found


def _chunk(row: sqlite3.Row) -> Chunk:
    rects = tuple(Rect(int(p), x0, y0, x1, y1) for p, x0, y0, x1, y1 in json.loads(row["rects"]))
    return Chunk(
        id=row["id"], document_id=row["document_id"], ordinal=row["ordinal"], text=row["text"],
        section=row["section"], page_start=row["page_start"], page_end=row["page_end"],
        token_count=row["token_count"], rects=rects, recommendation_class=row["recommendation_class"],
        evidence_level=row["evidence_level"], kind=row["kind"],
    )
