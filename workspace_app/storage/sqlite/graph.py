"""The entity graph in the SQLite catalog (tables of migration 7), on the catalog's `Database`.

Mentions and relations are written per document and go with it (foreign keys cascade from chunks and
documents); entity rows carry workspace-wide numbers that `save_refresh` recomputes, and entities left
without mentions are deleted there. Community reports and document summaries are JSON records; a relation's evidence chunk ids are kept
space-separated (ids have no spaces), which reads much faster than JSON for tens of thousands of rows.
"""

from __future__ import annotations

import json
import sqlite3
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
    ReportSentence,
)
from workspace_app.storage.sqlite.database import Database

_MAX_EVIDENCE = 20
_BATCH = 500


class SqliteGraphStore:
    """Graph tables next to the catalog's documents and chunks, on the same database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def replace_document_graph(self, workspace_id: str, graph: DocumentGraph) -> None:
        """Swap a document's mentions and relations for new ones, adding entities not yet known."""
        with self._db.transaction() as db:
            _delete_document_rows(db, graph.document_id)
            db.executemany(
                "INSERT INTO graph_entities (workspace_id, id, name, type, description) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (workspace_id, id) DO UPDATE SET description = CASE WHEN graph_entities.description = '' "
                "THEN excluded.description ELSE graph_entities.description END",
                [(workspace_id, e.id, e.name, e.type, e.description) for e in graph.entities],
            )
            db.executemany(
                "INSERT INTO graph_mentions (workspace_id, entity_id, chunk_id, document_id, page_start, count, surfaces) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (workspace_id, m.entity_id, m.chunk_id, graph.document_id, m.page_start, m.count,
                     json.dumps(list(m.surfaces), ensure_ascii=False))
                    for m in graph.mentions
                ],
            )
            db.executemany(
                "INSERT INTO graph_relations (workspace_id, document_id, source, target, type, weight, chunk_ids) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
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
        sql = "SELECT * FROM graph_entities e WHERE e.workspace_id = ? AND e.degree >= ?"
        params: list[Any] = [workspace_id, min_degree]
        if types is not None:
            sql += f" AND e.type IN ({_marks(types)})"
            params += list(types)
        if community is not None:
            sql += " AND e.community = ?"
            params.append(community)
        if entity_ids is not None:
            sql += f" AND e.id IN ({_marks(entity_ids)})"
            params += list(entity_ids)
        if document_ids is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM graph_mentions m WHERE m.workspace_id = e.workspace_id AND "
                f"m.entity_id = e.id AND m.document_id IN ({_marks(document_ids)}))"
            )
            params += list(document_ids)
        sql += " ORDER BY e.degree DESC, e.mentions DESC, e.name"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_entity(row) for row in self._db.query(sql, params)]

    def mention_stats(self, workspace_id: str) -> dict[str, tuple[int, int, tuple[str, ...]]]:
        """Entity id -> (mentions, documents, surface forms) over the workspace."""
        totals: dict[str, list[Any]] = {}
        rows = self._db.query(
            "SELECT entity_id, document_id, count, surfaces FROM graph_mentions WHERE workspace_id = ?", (workspace_id,)
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
            "SELECT source, target, type, SUM(weight) AS total, GROUP_CONCAT(chunk_ids, ' ') FROM graph_relations "
            "WHERE workspace_id = ?"
        )
        params: list[Any] = [workspace_id]
        if entity_ids is not None:
            sql += f" AND (source IN ({_marks(entity_ids)}) OR target IN ({_marks(entity_ids)}))"
            params += [*entity_ids, *entity_ids]
        if document_ids is not None:
            sql += f" AND document_id IN ({_marks(document_ids)})"
            params += list(document_ids)
        sql += " GROUP BY source, target, type HAVING total >= ? ORDER BY total DESC, source, target"
        params.append(min_weight)
        return [
            Relation(row[0], row[1], row[2], round(row[3], 3), tuple(dict.fromkeys(row[4].split()))[:_MAX_EVIDENCE])
            for row in self._db.query(sql, params)
        ]

    def graph_version(self, workspace_id: str) -> tuple[int, int]:
        """Changes whenever a document's graph rows are replaced or deleted: (highest mention rowid, mentions)."""
        row = self._db.query(
            "SELECT COALESCE(MAX(rowid), 0), COUNT(*) FROM graph_mentions WHERE workspace_id = ?", (workspace_id,)
        )[0]
        return int(row[0]), int(row[1])

    def refreshed_version(self, workspace_id: str) -> tuple[int, int] | None:
        """The `graph_version` the stored communities and summaries were computed from (None: never)."""
        rows = self._db.query(
            "SELECT mentions_max, mentions_count FROM graph_refreshed WHERE workspace_id = ?", (workspace_id,)
        )
        return (int(rows[0][0]), int(rows[0][1])) if rows else None

    def save_refresh(
        self, workspace_id: str, stats: Mapping[str, EntityStats], reports: Sequence[CommunityReport],
        summaries: Sequence[DocumentSummary], version: tuple[int, int] | None = None,
    ) -> bool:
        """Store recomputed entity numbers, communities and summaries and drop entities without mentions; False
        (nothing written) when the graph changed since `version` was read, e.g. by another worker process."""
        with self._db.transaction() as db:
            current = tuple(db.execute(
                "SELECT COALESCE(MAX(rowid), 0), COUNT(*) FROM graph_mentions WHERE workspace_id = ?", (workspace_id,)
            ).fetchone())
            if version is not None and current != version:
                return False
            db.execute(
                "INSERT INTO graph_refreshed (workspace_id, mentions_max, mentions_count) VALUES (?, ?, ?) "
                "ON CONFLICT (workspace_id) DO UPDATE SET mentions_max = excluded.mentions_max, "
                "mentions_count = excluded.mentions_count",
                (workspace_id, *current),
            )
            db.execute(
                "DELETE FROM graph_entities WHERE workspace_id = ? AND id NOT IN "
                "(SELECT DISTINCT entity_id FROM graph_mentions WHERE workspace_id = ?)",
                (workspace_id, workspace_id),
            )
            # A document whose chunks were replaced (a re-run that failed before its graph stage) keeps no relations.
            db.execute(
                "DELETE FROM graph_relations WHERE workspace_id = ? AND document_id NOT IN "
                "(SELECT DISTINCT document_id FROM graph_mentions WHERE workspace_id = ?)",
                (workspace_id, workspace_id),
            )
            db.executemany(
                "UPDATE graph_entities SET mentions = ?, documents = ?, degree = ?, community = ?, aliases = ? "
                "WHERE workspace_id = ? AND id = ?",
                [
                    (s.mentions, s.documents, s.degree, s.community, json.dumps(list(s.aliases), ensure_ascii=False),
                     workspace_id, entity_id)
                    for entity_id, s in stats.items()
                ],
            )
            db.execute("DELETE FROM graph_communities WHERE workspace_id = ?", (workspace_id,))
            db.executemany(
                "INSERT INTO graph_communities (workspace_id, level, id, parent, report) VALUES (?, ?, ?, ?, ?)",
                [(workspace_id, r.level, r.id, r.parent, json.dumps(asdict(r), ensure_ascii=False)) for r in reports],
            )
            db.execute("DELETE FROM graph_document_summaries WHERE workspace_id = ?", (workspace_id,))
            db.executemany(
                "INSERT INTO graph_document_summaries (workspace_id, document_id, summary) VALUES (?, ?, ?)",
                [(workspace_id, s.document_id, json.dumps(asdict(s), ensure_ascii=False)) for s in summaries],
            )
        return True

    def mentions(
        self, workspace_id: str, entity_ids: Sequence[str] | None, document_ids: Sequence[str] | None = None
    ) -> list[Mention]:
        """Mentions of these entities, or of all (None), most frequent first, optionally in some documents only."""
        sql = "SELECT m.entity_id, m.chunk_id, m.document_id, m.page_start, m.count FROM graph_mentions m WHERE m.workspace_id = ?"
        params: list[Any] = [workspace_id]
        if entity_ids is not None:
            sql += f" AND m.entity_id IN ({_marks(entity_ids)})"
            params += list(entity_ids)
        if document_ids is not None:
            sql += f" AND m.document_id IN ({_marks(document_ids)})"
            params += list(document_ids)
        sql += " ORDER BY m.count DESC, m.chunk_id"  # chunk ids are "<document id>-<ordinal>", so in reading order
        return [Mention(*row) for row in self._db.query(sql, params)]

    def chunk_info(self, chunk_ids: Sequence[str]) -> dict[str, ChunkInfo]:
        """Text, document, ordinal and page of chunks by id (missing ones left out)."""
        found: dict[str, ChunkInfo] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            rows = self._db.query(
                f"SELECT id, document_id, ordinal, page_start, text FROM chunks WHERE id IN ({_marks(batch)})", batch
            )
            found.update({row[0]: ChunkInfo(*row) for row in rows})
        return found

    def workspace_chunks(self, workspace_id: str) -> list[ChunkInfo]:
        """Every chunk of the workspace's documents that have graph rows, in document order (text left empty)."""
        rows = self._db.query(
            "SELECT id, document_id, ordinal, page_start, '' FROM chunks WHERE workspace_id = ? AND document_id IN "
            "(SELECT DISTINCT document_id FROM graph_mentions WHERE workspace_id = ?) ORDER BY document_id, ordinal",
            (workspace_id, workspace_id),
        )
        return [ChunkInfo(*row) for row in rows]

    def communities(self, workspace_id: str, level: int) -> list[CommunityReport]:
        """Community reports of one level, by id."""
        rows = self._db.query(
            "SELECT report FROM graph_communities WHERE workspace_id = ? AND level = ? ORDER BY id", (workspace_id, level)
        )
        return [_report(json.loads(row[0])) for row in rows]

    def document_summaries(self, workspace_id: str) -> list[DocumentSummary]:
        """Summary records of the workspace's documents."""
        rows = self._db.query("SELECT summary FROM graph_document_summaries WHERE workspace_id = ?", (workspace_id,))
        return [_summary(json.loads(row[0])) for row in rows]

    def cached_response(self, model: str, key: str) -> str | None:
        """A cached LLM response, if any."""
        rows = self._db.query("SELECT response FROM graph_llm_cache WHERE model = ? AND key = ?", (model, key))
        return str(rows[0][0]) if rows else None

    def cache_response(self, model: str, key: str, response: str) -> None:
        """Keep an LLM response for the next run on the same text."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO graph_llm_cache (model, key, response, created_at) VALUES (?, ?, ?, ?)",
                (model, key, response, datetime.now(UTC).isoformat(timespec="seconds")),
            )


def _delete_document_rows(db: sqlite3.Connection, document_id: str) -> None:
    for table in ("graph_mentions", "graph_relations", "graph_document_summaries"):
        db.execute(f"DELETE FROM {table} WHERE document_id = ?", (document_id,))


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _entity(row: sqlite3.Row) -> Entity:
    return Entity(
        id=row["id"], workspace_id=row["workspace_id"], name=row["name"], type=row["type"],
        aliases=tuple(json.loads(row["aliases"])), description=row["description"], mentions=row["mentions"],
        documents=row["documents"], degree=row["degree"], community=row["community"],
    )


def _relation(data: dict[str, Any]) -> Relation:
    return Relation(data["source"], data["target"], data["type"], data["weight"], tuple(data["chunk_ids"]))


def _report(data: dict[str, Any]) -> CommunityReport:
    return CommunityReport(
        id=data["id"], level=data["level"], parent=data["parent"], title=data["title"],
        entity_ids=tuple(data["entity_ids"]), relations=tuple(_relation(r) for r in data["relations"]),
        sentences=tuple(ReportSentence(s["text"], s["chunk_id"]) for s in data["sentences"]),
        summary=data["summary"], chunk_ids=tuple(data["chunk_ids"]), size=data["size"], rank=data["rank"],
    )


def _summary(data: dict[str, Any]) -> DocumentSummary:
    return DocumentSummary(data["document_id"], data["text"], tuple(data["entity_ids"]), tuple(data["chunk_ids"]))

