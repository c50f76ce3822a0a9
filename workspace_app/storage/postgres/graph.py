"""The entity graph in the PostgreSQL catalog, as storage/sqlite/graph.py keeps it in SQLite.

Mentions and relations are written per document and go with it (foreign keys cascade from chunks and documents);
entity rows carry workspace-wide numbers that `save_refresh` recomputes. `seq` columns stand in for SQLite's rowids:
the graph's version is (highest mention seq, mentions), and relation evidence and summaries read in the order they
were written. Text is ordered byte-wise (COLLATE "C") as SQLite orders it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from workspace_app.models.graph import (
    ChunkInfo,
    CommunityReport,
    DocumentGraph,
    DocumentSummary,
    Entity,
    EntityStats,
    Mention,
    Relation,
)
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.sqlite.graph import _MAX_EVIDENCE, _report, _summary

_VERSION = "SELECT COALESCE(MAX(seq), 0) AS top, COUNT(*) AS n FROM graph_mentions WHERE workspace_id = %s"


class PostgresGraphStore:
    """Graph tables next to the catalog's documents and chunks, on the same database."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def replace_document_graph(self, workspace_id: str, graph: DocumentGraph) -> None:
        """Swap a document's mentions and relations for new ones, adding entities not yet known."""
        with self._db.transaction() as db:
            # Shares the workspace's row lock with other writers; a refresh takes it alone (`save_refresh`), so its
            # version check and writes see no document's graph change in between, as BEGIN IMMEDIATE gives SQLite.
            db.execute("SELECT id FROM workspaces WHERE id = %s FOR SHARE", (workspace_id,))
            _delete_document_rows(db, graph.document_id)
            cursor = db.cursor()
            if graph.entities:
                cursor.executemany(
                    "INSERT INTO graph_entities (workspace_id, id, name, type, description) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (workspace_id, id) DO UPDATE SET description = CASE WHEN graph_entities.description = '' "
                    "THEN excluded.description ELSE graph_entities.description END",
                    [(workspace_id, e.id, e.name, e.type, e.description) for e in graph.entities],
                )
            if graph.mentions:
                cursor.executemany(
                    "INSERT INTO graph_mentions (workspace_id, entity_id, chunk_id, document_id, page_start, count, "
                    "surfaces) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [
                        (workspace_id, m.entity_id, m.chunk_id, graph.document_id, m.page_start, m.count,
                         json.dumps(list(m.surfaces), ensure_ascii=False))
                        for m in graph.mentions
                    ],
                )
            if graph.relations:
                cursor.executemany(
                    "INSERT INTO graph_relations (workspace_id, document_id, source, target, type, weight, chunk_ids) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [
                        (workspace_id, graph.document_id, r.source, r.target, r.type, r.weight, " ".join(r.chunk_ids))
                        for r in graph.relations
                    ],
                )

    def delete_document_graph(self, document_id: str) -> None:
        """Drop a document's mentions, relations and summary (entities go at the next refresh)."""
        with self._db.transaction() as db:
            _delete_document_rows(db, document_id)

    def entity_rows(
        self, workspace_id: str, *, document_ids: Sequence[str] | None = None, types: Sequence[str] | None = None,
        community: int | None = None, min_degree: int = 0, entity_ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Entity]:
        """Entities by degree, then mentions (descending), filtered as asked."""
        sql = "SELECT * FROM graph_entities e WHERE e.workspace_id = %s AND e.degree >= %s"
        params: list[Any] = [workspace_id, min_degree]
        if types is not None:
            sql += " AND e.type = ANY(%s)"
            params.append(list(types))
        if community is not None:
            sql += " AND e.community = %s"
            params.append(community)
        if entity_ids is not None:
            sql += " AND e.id = ANY(%s)"
            params.append(list(entity_ids))
        if document_ids is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM graph_mentions m WHERE m.workspace_id = e.workspace_id AND "
                "m.entity_id = e.id AND m.document_id = ANY(%s))"
            )
            params.append(list(document_ids))
        sql += ' ORDER BY e.degree DESC, e.mentions DESC, e.name COLLATE "C"'
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [_entity(row) for row in self._db.query(sql, params)]

    def mention_stats(self, workspace_id: str) -> dict[str, tuple[int, int, tuple[str, ...]]]:
        """Entity id -> (mentions, documents, surface forms) over the workspace."""
        totals: dict[str, list[Any]] = {}
        rows = self._db.query(
            "SELECT entity_id, document_id, count, surfaces FROM graph_mentions WHERE workspace_id = %s", (workspace_id,)
        )
        for row in rows:
            entry = totals.setdefault(row["entity_id"], [0, set(), set()])
            entry[0] += row["count"]
            entry[1].add(row["document_id"])
            entry[2].update(json.loads(row["surfaces"]))
        return {key: (count, len(docs), tuple(sorted(forms))) for key, (count, docs, forms) in totals.items()}

    def relations(
        self, workspace_id: str, entity_ids: Sequence[str] | None = None, document_ids: Sequence[str] | None = None,
        min_weight: float = 0.0,
    ) -> list[Relation]:
        """Relations summed over documents (strongest first) weighing at least `min_weight`; with `entity_ids`,
        those touching any of them."""
        sql = (
            "SELECT source, target, type, SUM(weight) AS total, string_agg(chunk_ids, ' ' ORDER BY seq) AS chunks "
            "FROM graph_relations WHERE workspace_id = %s"
        )
        params: list[Any] = [workspace_id]
        if entity_ids is not None:
            sql += " AND (source = ANY(%s) OR target = ANY(%s))"
            params += [list(entity_ids), list(entity_ids)]
        if document_ids is not None:
            sql += " AND document_id = ANY(%s)"
            params.append(list(document_ids))
        sql += ' GROUP BY source, target, type HAVING SUM(weight) >= %s ORDER BY total DESC, source COLLATE "C", '
        sql += 'target COLLATE "C"'
        params.append(min_weight)
        return [
            Relation(
                row["source"], row["target"], row["type"], round(row["total"], 3),
                tuple(dict.fromkeys(row["chunks"].split()))[:_MAX_EVIDENCE],
            )
            for row in self._db.query(sql, params)
        ]

    def graph_version(self, workspace_id: str) -> tuple[int, int]:
        """Changes whenever a document's graph rows are replaced or deleted: (highest mention seq, mentions)."""
        row = self._db.query(_VERSION, (workspace_id,))[0]
        return int(row["top"]), int(row["n"])

    def refreshed_version(self, workspace_id: str) -> tuple[int, int] | None:
        """The `graph_version` the stored communities and summaries were computed from (None: never)."""
        rows = self._db.query(
            "SELECT mentions_max, mentions_count FROM graph_refreshed WHERE workspace_id = %s", (workspace_id,)
        )
        return (int(rows[0]["mentions_max"]), int(rows[0]["mentions_count"])) if rows else None

    def save_refresh(
        self, workspace_id: str, stats: Mapping[str, EntityStats], reports: Sequence[CommunityReport],
        summaries: Sequence[DocumentSummary], version: tuple[int, int] | None = None,
    ) -> bool:
        """Store recomputed entity numbers, communities and summaries and drop entities without mentions; False
        (nothing written) when the graph changed since `version` was read, e.g. by another worker process."""
        with self._db.transaction() as db:
            # The workspace's row is locked first, so two refreshes of one workspace run one after the other.
            db.execute("SELECT id FROM workspaces WHERE id = %s FOR UPDATE", (workspace_id,))
            found = db.execute(_VERSION, (workspace_id,)).fetchone() or {"top": 0, "n": 0}
            current = (int(found["top"]), int(found["n"]))
            if version is not None and current != tuple(version):
                return False
            db.execute(
                "INSERT INTO graph_refreshed (workspace_id, mentions_max, mentions_count) VALUES (%s, %s, %s) "
                "ON CONFLICT (workspace_id) DO UPDATE SET mentions_max = excluded.mentions_max, "
                "mentions_count = excluded.mentions_count",
                (workspace_id, *current),
            )
            db.execute(
                "DELETE FROM graph_entities WHERE workspace_id = %s AND id NOT IN "
                "(SELECT DISTINCT entity_id FROM graph_mentions WHERE workspace_id = %s)",
                (workspace_id, workspace_id),
            )
            # A document whose chunks were replaced (a re-run that failed before its graph stage) keeps no relations.
            db.execute(
                "DELETE FROM graph_relations WHERE workspace_id = %s AND document_id NOT IN "
                "(SELECT DISTINCT document_id FROM graph_mentions WHERE workspace_id = %s)",
                (workspace_id, workspace_id),
            )
            _write_refresh(db, workspace_id, stats, reports, summaries)
        return True

    def mentions(
        self, workspace_id: str, entity_ids: Sequence[str] | None, document_ids: Sequence[str] | None = None
    ) -> list[Mention]:
        """Mentions of these entities, or of all (None), most frequent first, optionally in some documents only."""
        sql = (
            "SELECT m.entity_id, m.chunk_id, m.document_id, m.page_start, m.count FROM graph_mentions m "
            "WHERE m.workspace_id = %s"
        )
        params: list[Any] = [workspace_id]
        if entity_ids is not None:
            sql += " AND m.entity_id = ANY(%s)"
            params.append(list(entity_ids))
        if document_ids is not None:
            sql += " AND m.document_id = ANY(%s)"
            params.append(list(document_ids))
        sql += ' ORDER BY m.count DESC, m.chunk_id COLLATE "C"'  # chunk ids are "<document id>-<ordinal>": reading order
        return [
            Mention(r["entity_id"], r["chunk_id"], r["document_id"], r["page_start"], r["count"])
            for r in self._db.query(sql, params)
        ]

    def chunk_info(self, chunk_ids: Sequence[str]) -> dict[str, ChunkInfo]:
        """Text, document, ordinal and page of chunks by id (missing ones left out)."""
        rows = self._db.query(
            "SELECT id, document_id, ordinal, page_start, text FROM chunks WHERE id = ANY(%s)",
            (list(dict.fromkeys(chunk_ids)),),
        )
        return {r["id"]: ChunkInfo(r["id"], r["document_id"], r["ordinal"], r["page_start"], r["text"]) for r in rows}

    def workspace_chunks(self, workspace_id: str) -> list[ChunkInfo]:
        """Every chunk of the workspace's documents that have graph rows, in document order (text left empty)."""
        rows = self._db.query(
            "SELECT id, document_id, ordinal, page_start FROM chunks WHERE workspace_id = %s AND document_id IN "
            "(SELECT DISTINCT document_id FROM graph_mentions WHERE workspace_id = %s) "
            'ORDER BY document_id COLLATE "C", ordinal',
            (workspace_id, workspace_id),
        )
        return [ChunkInfo(r["id"], r["document_id"], r["ordinal"], r["page_start"], "") for r in rows]

    def communities(self, workspace_id: str, level: int) -> list[CommunityReport]:
        """Community reports of one level, by id."""
        rows = self._db.query(
            "SELECT report FROM graph_communities WHERE workspace_id = %s AND level = %s ORDER BY id",
            (workspace_id, level),
        )
        return [_report(json.loads(row["report"])) for row in rows]

    def document_summaries(self, workspace_id: str) -> list[DocumentSummary]:
        """Summary records of the workspace's documents (in the order they were saved)."""
        rows = self._db.query(
            "SELECT summary FROM graph_document_summaries WHERE workspace_id = %s ORDER BY seq", (workspace_id,)
        )
        return [_summary(json.loads(row["summary"])) for row in rows]

    def cached_response(self, model: str, key: str) -> str | None:
        """A cached LLM response, if any."""
        rows = self._db.query("SELECT response FROM graph_llm_cache WHERE model = %s AND key = %s", (model, key))
        return str(rows[0]["response"]) if rows else None

    def cache_response(self, model: str, key: str, response: str) -> None:
        """Keep an LLM response for the next run on the same text."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO graph_llm_cache (model, key, response, created_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (model, key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at",
                (model, key, response, datetime.now(UTC).isoformat(timespec="seconds")),
            )


def _write_refresh(
    db: Any, workspace_id: str, stats: Mapping[str, EntityStats], reports: Sequence[CommunityReport],
    summaries: Sequence[DocumentSummary],
) -> None:
    cursor = db.cursor()
    if stats:
        cursor.executemany(
            "UPDATE graph_entities SET mentions = %s, documents = %s, degree = %s, community = %s, aliases = %s "
            "WHERE workspace_id = %s AND id = %s",
            [
                (s.mentions, s.documents, s.degree, s.community, json.dumps(list(s.aliases), ensure_ascii=False),
                 workspace_id, entity_id)
                for entity_id, s in stats.items()
            ],
        )
    db.execute("DELETE FROM graph_communities WHERE workspace_id = %s", (workspace_id,))
    if reports:
        cursor.executemany(
            "INSERT INTO graph_communities (workspace_id, level, id, parent, report) VALUES (%s, %s, %s, %s, %s)",
            [(workspace_id, r.level, r.id, r.parent, json.dumps(asdict(r), ensure_ascii=False)) for r in reports],
        )
    db.execute("DELETE FROM graph_document_summaries WHERE workspace_id = %s", (workspace_id,))
    if summaries:
        cursor.executemany(
            "INSERT INTO graph_document_summaries (workspace_id, document_id, summary) VALUES (%s, %s, %s)",
            [(workspace_id, s.document_id, json.dumps(asdict(s), ensure_ascii=False)) for s in summaries],
        )


def _delete_document_rows(db: Any, document_id: str) -> None:
    for table in ("graph_mentions", "graph_relations", "graph_document_summaries"):
        db.execute(f"DELETE FROM {table} WHERE document_id = %s", (document_id,))


def _entity(row: dict[str, Any]) -> Entity:
    return Entity(
        id=row["id"], workspace_id=row["workspace_id"], name=row["name"], type=row["type"],
        aliases=tuple(json.loads(row["aliases"])), description=row["description"], mentions=row["mentions"],
        documents=row["documents"], degree=row["degree"], community=row["community"],
    )
