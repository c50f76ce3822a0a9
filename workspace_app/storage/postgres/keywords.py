"""The keyword index on PostgreSQL: postings of FTS5's tokens, and BM25 computed in SQL as FTS5's `bm25()` does.

SQLite ranks with `bm25(fts_<workspace>, 0.4, 1.0)` over a per-workspace FTS5 table; this reproduces it:
- each query term is a phrase of FTS5 tokens (storage/postgres/tokens.py); a phrase of several tokens matches where
  they stand at consecutive positions of one column;
- a phrase's frequency in a chunk is its matches weighted by column (section 0.4, body 1.0);
- idf = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6, with N the workspace's chunks and n those that contain the
  phrase (in any column, whatever their document's status);
- score = sum over phrases of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgD)), k1 = 1.2, b = 0.75, D the
  chunk's tokens in all columns, avgD the workspace's mean; a phrase listed twice counts twice, as in FTS5.
SEE: https://www.sqlite.org/fts5.html#the_bm25_function and fts5_aux.c (fts5Bm25Function) in SQLite's sources.
"""

from __future__ import annotations

from collections.abc import Sequence

from workspace_app.storage.searchable import SEARCHABLE

K1 = 1.2
B = 0.75
COLUMN_WEIGHTS = (0.4, 1.0)  # section, body: the weights storage/sqlite/chunks.py passes to bm25()
MIN_IDF = 1e-6


def postings(tokens: Sequence[str]) -> dict[str, list[int]]:
    """Each token's positions in one column."""
    found: dict[str, list[int]] = {}
    for position, token in enumerate(tokens):
        found.setdefault(token, []).append(position)
    return found


def phrase_hits(index: int, phrase: Sequence[str]) -> tuple[str, list[object]]:
    """SQL (and its parameters) of (phrase, chunk_id, col, n): where phrase `index` matches in the workspace (the
    workspace id is the first parameter left open), n times per column."""
    if len(phrase) == 1:
        single = (
            "SELECT %s AS phrase, chunk_id, col, cardinality(positions) AS n FROM keyword_postings "
            "WHERE workspace_id = %s AND term = %s"
        )
        return single, [index, None, phrase[0]]
    joins = "".join(
        f" JOIN keyword_postings p{k} ON p{k}.workspace_id = p0.workspace_id AND p{k}.term = %s "
        f"AND p{k}.chunk_id = p0.chunk_id AND p{k}.col = p0.col AND at.pos + {k} = ANY(p{k}.positions)"
        for k in range(1, len(phrase))
    )
    sql = (
        "SELECT %s AS phrase, p0.chunk_id, p0.col, COUNT(*) AS n FROM keyword_postings p0 "
        f"CROSS JOIN LATERAL unnest(p0.positions) AS at(pos){joins} "
        "WHERE p0.workspace_id = %s AND p0.term = %s GROUP BY p0.chunk_id, p0.col"
    )
    return sql, [index, *phrase[1:], None, phrase[0]]


def bm25_sql(phrases: Sequence[Sequence[str]], workspace_id: str, filtered: bool) -> tuple[str, list[object]]:
    """The ranking query: (id, score) of the ready chunks of the workspace matching any phrase, best first;
    parameters for the document ids (when `filtered`) and the limit are appended by the caller, in that order."""
    parts, params = [], []
    for index, phrase in enumerate(phrases):
        sql, values = phrase_hits(index, phrase)
        parts.append(sql)
        params += [workspace_id if value is None else value for value in values]
    section, body = (f"{w!r}::float8" for w in COLUMN_WEIGHTS)
    k1, b = f"{K1!r}::float8", f"{B!r}::float8"
    sql = (
        f"WITH hits AS ({' UNION ALL '.join(parts)}), "
        "stats AS (SELECT COUNT(*)::float8 AS nrow, COALESCE(SUM(tokens), 0)::float8 AS ntok "
        "FROM keyword_lengths WHERE workspace_id = %s), "
        "idf AS (SELECT h.phrase, GREATEST(ln((s.nrow - COUNT(DISTINCT h.chunk_id) + 0.5::float8) "
        f"/ (COUNT(DISTINCT h.chunk_id) + 0.5::float8)), {MIN_IDF!r}::float8) AS idf "
        "FROM hits h CROSS JOIN stats s GROUP BY h.phrase, s.nrow), "
        f"freq AS (SELECT phrase, chunk_id, SUM(n * CASE col WHEN 0 THEN {section} ELSE {body} END) AS f "
        "FROM hits GROUP BY phrase, chunk_id), "
        f"scores AS MATERIALIZED (SELECT q.chunk_id, SUM(i.idf * ((q.f * ({k1} + 1.0::float8)) / (q.f + {k1} * "
        f"(1.0::float8 - {b} + {b} * l.tokens::float8 / (s.ntok / s.nrow))))) AS score "
        "FROM freq q JOIN idf i ON i.phrase = q.phrase JOIN keyword_lengths l ON l.chunk_id = q.chunk_id "
        "CROSS JOIN stats s GROUP BY q.chunk_id) "
        "SELECT c.id, sc.score FROM scores sc JOIN chunks c ON c.id = sc.chunk_id "
        f"JOIN documents d ON d.id = c.document_id WHERE c.workspace_id = %s AND {SEARCHABLE}"
    )
    params += [workspace_id, workspace_id]
    if filtered:
        sql += " AND c.document_id = ANY(%s)"
    return sql + " ORDER BY sc.score DESC, c.seq LIMIT %s", params
