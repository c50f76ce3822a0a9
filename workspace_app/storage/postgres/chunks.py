"""Chunks in the PostgreSQL catalog (the source of truth for text, pages, sections and boxes), their keyword
postings (ranked by BM25 as SQLite's FTS5 ranks them: storage/postgres/keywords.py), and the abbreviations each
document defines."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from workspace_app.models.documents import Chunk, Rect
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.postgres.keywords import bm25_sql, postings
from workspace_app.storage.postgres.tokens import Fts5Tokenizer


class PostgresChunks:
    """Chunk text and boxes with a BM25 keyword index over the index terms the core computed for them."""

    def __init__(self, database: PostgresDatabase, tokenizer: Fts5Tokenizer) -> None:
        self._db = database
        self._tokenizer = tokenizer

    def replace_chunks(
        self, document_id: str, workspace_id: str, chunks: Sequence[Chunk], keyword_texts: Sequence[tuple[str, str]]
    ) -> None:
        """Swap a document's chunks and keyword rows for new ones in one transaction; `keyword_texts` holds each
        chunk's (section terms, body terms), in the order of `chunks`."""
        if len(keyword_texts) != len(chunks):
            raise ValueError(f"{len(chunks)} chunks but {len(keyword_texts)} keyword texts")
        tokens = self._tokenizer.tokenize([text for pair in keyword_texts for text in pair])
        with self._db.transaction() as db:
            db.execute("DELETE FROM chunks WHERE document_id = %s", (document_id,))  # postings and lengths cascade
            with db.cursor().copy(
                "COPY chunks (id, document_id, workspace_id, ordinal, text, section, page_start, page_end, "
                "token_count, rects, recommendation_class, evidence_level, kind) FROM STDIN"
            ) as copy:
                for c in chunks:
                    copy.write_row((
                        c.id, document_id, workspace_id, c.ordinal, c.text, c.section, c.page_start, c.page_end,
                        c.token_count, json.dumps([[r.page, r.x0, r.y0, r.x1, r.y1] for r in c.rects]),
                        c.recommendation_class, c.evidence_level, c.kind,
                    ))
            with db.cursor().copy("COPY keyword_lengths (chunk_id, workspace_id, tokens) FROM STDIN") as copy:
                for i, c in enumerate(chunks):
                    copy.write_row((c.id, workspace_id, len(tokens[2 * i]) + len(tokens[2 * i + 1])))
            with db.cursor().copy(
                "COPY keyword_postings (workspace_id, term, chunk_id, col, positions) FROM STDIN"
            ) as copy:
                for i, c in enumerate(chunks):
                    for col in (0, 1):
                        for term, positions in postings(tokens[2 * i + col]).items():
                            copy.write_row((workspace_id, term, c.id, col, positions))
        # Fresh statistics after a bulk change: with none, the planner takes the ranking query's few scored chunks
        # for one row and loops over every chunk of the workspace (measured: 45-150 ms a query instead of a few).
        self._db.analyze("chunks", "keyword_postings", "keyword_lengths", "documents")

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are left out)."""
        rows = self._db.query("SELECT * FROM chunks WHERE id = ANY(%s)", (list(chunk_ids),))
        return {row["id"]: _chunk(row) for row in rows}

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(kind, text) of chunks by id (missing ids are left out), without decoding their boxes."""
        rows = self._db.query("SELECT id, kind, text FROM chunks WHERE id = ANY(%s)", (list(chunk_ids),))
        return {row["id"]: (row["kind"], row["text"]) for row in rows}

    def document_chunk_ids(self, document_id: str) -> list[str]:
        """Ids of a document's chunks in order."""
        rows = self._db.query("SELECT id FROM chunks WHERE document_id = %s ORDER BY ordinal", (document_id,))
        return [row["id"] for row in rows]

    def keyword_search(
        self, workspace_id: str, terms: Sequence[str], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Chunk ids ranked by BM25 over any of the terms (best first), with their BM25 scores (as FTS5's)."""
        phrases = [phrase for phrase in self._tokenizer.tokenize(list(terms)) if phrase]
        if not phrases or limit <= 0 or document_ids == []:
            return []
        sql, params = bm25_sql(phrases, workspace_id, document_ids is not None)
        if document_ids is not None:
            params.append(list(document_ids))
        params.append(limit)
        return [(row["id"], float(row["score"])) for row in self._db.query(sql, params)]

    def replace_abbreviations(self, document_id: str, workspace_id: str, pairs: Mapping[str, str]) -> None:
        """Swap the abbreviations defined in a document for new ones."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM abbreviations WHERE document_id = %s", (document_id,))
            if pairs:
                db.cursor().executemany(
                    "INSERT INTO abbreviations (document_id, workspace_id, short, long) VALUES (%s, %s, %s, %s)",
                    [(document_id, workspace_id, short, long) for short, long in pairs.items()],
                )

    def workspace_abbreviations(self, workspace_id: str) -> dict[str, str]:
        """Short form -> long form over the workspace's ready documents (the most common long form wins)."""
        rows = self._db.query(
            "SELECT a.short, a.long, COUNT(*) AS n FROM abbreviations a JOIN documents d ON d.id = a.document_id "
            "WHERE a.workspace_id = %s AND d.status = 'ready' GROUP BY a.short, a.long "
            # Ties as SQLite breaks them: in the GROUP BY's (byte) order.
            'ORDER BY n DESC, a.short COLLATE "C", a.long COLLATE "C"',
            (workspace_id,),
        )
        found: dict[str, str] = {}
        for row in rows:
            found.setdefault(row["short"], row["long"])
        return found


def _chunk(row: dict[str, Any]) -> Chunk:
    rects = tuple(Rect(int(p), x0, y0, x1, y1) for p, x0, y0, x1, y1 in json.loads(row["rects"]))
    return Chunk(
        id=row["id"], document_id=row["document_id"], ordinal=row["ordinal"], text=row["text"],
        section=row["section"], page_start=row["page_start"], page_end=row["page_end"],
        token_count=row["token_count"], rects=rects, recommendation_class=row["recommendation_class"],
        evidence_level=row["evidence_level"], kind=row["kind"],
    )
