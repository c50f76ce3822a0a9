"""SQLite catalog: workspaces, documents, chunks and the FTS5 keyword index (WAL, foreign keys, migrations)."""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from storage.sqlite.chats import SqliteChatStore
from storage.sqlite.leases import SqliteJobLeases
from storage.sqlite.migrations import MIGRATIONS, create_keyword_table, keyword_table
from workspace_app.errors import StorageError, WorkspaceExistsError, WorkspaceNotFoundError
from workspace_app.models.documents import Chunk, Document, Rect, Workspace
from workspace_app.retrieval.lexical import index_text

_DOCUMENT_FIELDS = {
    "name", "pages", "chunks", "status", "stage", "progress", "error", "pages_without_text", "included",
    "pages_parsed", "chunks_embedded", "chunks_total", "eta_s", "cancel_requested",
}


def now_iso() -> str:
    """Current UTC time as ISO 8601 text."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class SqliteCatalog(SqliteJobLeases, SqliteChatStore):
    """The catalog in one SQLite file; safe to use from several threads and processes (WAL)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StorageError(f"Cannot open the catalog at {path}: {exc}. Check the data directory.") from exc
        self._lock = threading.RLock()
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._migrate()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except sqlite3.IntegrityError:
                self._db.execute("ROLLBACK")
                raise
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StorageError(f"The catalog could not be written: {exc}. Try again.") from exc
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"The catalog could not be read: {exc}. Try again.") from exc

    def _migrate(self) -> None:
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = row[0] or 0
            for version, script in enumerate(MIGRATIONS, start=1):
                if version > current:
                    for statement in script:
                        if callable(statement):
                            statement(db)
                        else:
                            db.execute(statement)
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    # Workspaces

    def create_workspace(self, name: str) -> Workspace:
        """Create a workspace with a unique name."""
        workspace = Workspace(uuid.uuid4().hex[:12], name, now_iso())
        try:
            with self._tx() as db:
                db.execute(
                    "INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)",
                    (workspace.id, workspace.name, workspace.created_at),
                )
                create_keyword_table(db, workspace.id)
        except sqlite3.IntegrityError as exc:
            raise WorkspaceExistsError(f"A workspace named '{name}' already exists. Pick another name.") from exc
        return workspace

    def find_workspace(self, name_or_id: str) -> Workspace | None:
        """The workspace with this id or name, if any."""
        rows = self._query(
            "SELECT w.*, (SELECT COUNT(*) FROM documents d WHERE d.workspace_id = w.id) AS n "
            "FROM workspaces w WHERE w.id = ? OR w.name = ? ORDER BY w.id = ? DESC LIMIT 1",
            (name_or_id, name_or_id, name_or_id),
        )
        return _workspace(rows[0]) if rows else None

    def list_workspaces(self) -> list[Workspace]:
        """All workspaces, oldest first."""
        rows = self._query(
            "SELECT w.*, (SELECT COUNT(*) FROM documents d WHERE d.workspace_id = w.id) AS n "
            "FROM workspaces w ORDER BY w.created_at, w.name"
        )
        return [_workspace(row) for row in rows]

    def rename_workspace(self, workspace_id: str, new_name: str) -> Workspace:
        """Give a workspace a new unique name."""
        try:
            with self._tx() as db:
                db.execute("UPDATE workspaces SET name = ? WHERE id = ?", (new_name, workspace_id))
        except sqlite3.IntegrityError as exc:
            raise WorkspaceExistsError(f"A workspace named '{new_name}' already exists. Pick another name.") from exc
        found = self.find_workspace(workspace_id)
        if found is None:
            raise WorkspaceNotFoundError(f"Workspace '{workspace_id}' does not exist.")
        return found

    def delete_workspace(self, workspace_id: str) -> None:
        """Delete a workspace with its documents, chunks and keyword index rows."""
        with self._tx() as db:
            db.execute(f"DROP TABLE IF EXISTS {keyword_table(workspace_id)}")
            db.execute("DELETE FROM workspaces WHERE id = ?", (workspace_id,))

    # Documents

    def add_document(self, document: Document) -> Document:
        """Insert a document row (unique per workspace and content)."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, pages, chunks, "
                "status, stage, progress, error, added_at, updated_at, pages_without_text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    document.id, document.workspace_id, document.name, document.sha256, document.size_bytes,
                    document.media_type, document.pages, document.chunks, document.status, document.stage,
                    document.progress, document.error, document.added_at, now_iso(),
                    json.dumps(list(document.pages_without_text)),
                ),
            )
        return document

    def find_document(self, workspace_id: str, name_id_or_sha: str) -> Document | None:
        """The document with this id, sha256 or name in the workspace."""
        rows = self._query(
            "SELECT * FROM documents WHERE workspace_id = ? AND (id = ? OR sha256 = ? OR name = ?) "
            "ORDER BY id = ? DESC, sha256 = ? DESC LIMIT 1",
            (workspace_id, *([name_id_or_sha] * 5)),
        )
        return _document(rows[0]) if rows else None

    def get_document(self, document_id: str) -> Document | None:
        """The document with this id in any workspace, if any."""
        rows = self._query("SELECT * FROM documents WHERE id = ?", (document_id,))
        return _document(rows[0]) if rows else None

    def list_documents(self, workspace_id: str) -> list[Document]:
        """The workspace's documents in the order they were added."""
        rows = self._query("SELECT * FROM documents WHERE workspace_id = ? ORDER BY added_at, name", (workspace_id,))
        return [_document(row) for row in rows]

    def update_document(self, document_id: str, **fields: object) -> None:
        """Change some columns of a document row."""
        unknown = set(fields) - _DOCUMENT_FIELDS
        if unknown:
            raise ValueError(f"unknown document fields: {sorted(unknown)}")
        values = [json.dumps(list(v)) if k == "pages_without_text" else v for k, v in fields.items()]  # type: ignore[call-overload]
        assignments = ", ".join(f"{name} = ?" for name in fields)
        with self._tx() as db:
            db.execute(
                f"UPDATE documents SET {assignments}, updated_at = ? WHERE id = ?",
                (*values, now_iso(), document_id),
            )

    def delete_document(self, document_id: str) -> None:
        """Delete a document with its chunks and keyword index rows."""
        with self._tx() as db:
            row = db.execute("SELECT workspace_id FROM documents WHERE id = ?", (document_id,)).fetchone()
            if row is not None:
                _delete_keyword_rows(db, row[0], document_id)
            db.execute("DELETE FROM documents WHERE id = ?", (document_id,))

    def count_file_references(self, sha256: str) -> int:
        """How many documents (in any workspace) use this file."""
        return int(self._query("SELECT COUNT(*) FROM documents WHERE sha256 = ?", (sha256,))[0][0])

    # Chunks and the keyword index

    def replace_chunks(self, document_id: str, workspace_id: str, chunks: Sequence[Chunk]) -> None:
        """Swap a document's chunks (and their keyword index rows) for new ones in one transaction."""
        rows = [
            (
                c.id, document_id, workspace_id, c.ordinal, c.text, c.section, c.page_start, c.page_end,
                c.token_count, json.dumps([[r.page, r.x0, r.y0, r.x1, r.y1] for r in c.rects]),
                c.recommendation_class, c.evidence_level, c.kind,
            )
            for c in chunks
        ]
        terms = [(index_text(c.section.split(" > ")[-1]), index_text(c.text)) for c in chunks]
        with self._tx() as db:
            create_keyword_table(db, workspace_id)
            _delete_keyword_rows(db, workspace_id, document_id)
            db.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
            db.executemany(
                "INSERT INTO chunks (id, document_id, workspace_id, ordinal, text, section, page_start, page_end, "
                "token_count, rects, recommendation_class, evidence_level, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.executemany(
                f"INSERT INTO {keyword_table(workspace_id)} (rowid, section, body) SELECT rowid, ?, ? FROM chunks WHERE id = ?",
                [(section, body, c.id) for (section, body), c in zip(terms, chunks, strict=True)],
            )

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are left out)."""
        found: dict[str, Chunk] = {}
        for start in range(0, len(chunk_ids), 500):
            batch = list(chunk_ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            for row in self._query(f"SELECT * FROM chunks WHERE id IN ({marks})", batch):
                found[row["id"]] = _chunk(row)
        return found

    def document_chunk_ids(self, document_id: str) -> list[str]:
        """Ids of a document's chunks in order."""
        rows = self._query("SELECT id FROM chunks WHERE document_id = ? ORDER BY ordinal", (document_id,))
        return [row[0] for row in rows]

    def keyword_search(
        self, workspace_id: str, terms: Sequence[str], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Chunk ids ranked by BM25 over any of the terms (best first), with their BM25 scores."""
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        table = keyword_table(workspace_id)
        if not self._query("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
            return []
        sql = (
            f"SELECT c.id, bm25({table}, 0.4, 1.0) AS score FROM {table} JOIN chunks c ON c.rowid = {table}.rowid "
            "JOIN documents d ON d.id = c.document_id "
            f"WHERE {table} MATCH ? AND c.workspace_id = ? AND d.status = 'ready'"
        )
        params: list[Any] = [match, workspace_id]
        if document_ids is not None:
            sql += f" AND c.document_id IN ({','.join('?' * len(document_ids))})"
            params += list(document_ids)
        sql += " ORDER BY score LIMIT ?"
        params.append(limit)
        return [(row[0], -float(row[1])) for row in self._query(sql, params)]


    def replace_abbreviations(self, document_id: str, workspace_id: str, pairs: Mapping[str, str]) -> None:
        """Swap the abbreviations defined in a document for new ones."""
        with self._tx() as db:
            db.execute("DELETE FROM abbreviations WHERE document_id = ?", (document_id,))
            db.executemany(
                "INSERT INTO abbreviations (document_id, workspace_id, short, long) VALUES (?, ?, ?, ?)",
                [(document_id, workspace_id, short, long) for short, long in pairs.items()],
            )

    def workspace_abbreviations(self, workspace_id: str) -> dict[str, str]:
        """Short form -> long form over the workspace's ready documents (the most common long form wins)."""
        rows = self._query(
            "SELECT a.short, a.long, COUNT(*) AS n FROM abbreviations a JOIN documents d ON d.id = a.document_id "
            "WHERE a.workspace_id = ? AND d.status = 'ready' GROUP BY a.short, a.long ORDER BY n DESC",
            (workspace_id,),
        )
        found: dict[str, str] = {}
        for row in rows:
            found.setdefault(row["short"], row["long"])
        return found


def _delete_keyword_rows(db: sqlite3.Connection, workspace_id: str, document_id: str) -> None:
    db.execute(
        f"DELETE FROM {keyword_table(workspace_id)} WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
        (document_id,),
    )


def _workspace(row: sqlite3.Row) -> Workspace:
    return Workspace(row["id"], row["name"], row["created_at"], int(row["n"]))


def _document(row: sqlite3.Row) -> Document:
    return Document(
        id=row["id"], workspace_id=row["workspace_id"], name=row["name"], sha256=row["sha256"],
        size_bytes=row["size_bytes"], pages=row["pages"], chunks=row["chunks"], status=row["status"],
        stage=row["stage"], progress=row["progress"], error=row["error"], added_at=row["added_at"],
        media_type=row["media_type"], pages_without_text=tuple(json.loads(row["pages_without_text"] or "[]")),
        pages_parsed=row["pages_parsed"], chunks_embedded=row["chunks_embedded"], chunks_total=row["chunks_total"],
        eta_s=row["eta_s"], included=bool(row["included"]), cancel_requested=bool(row["cancel_requested"]),
    )


def _chunk(row: sqlite3.Row) -> Chunk:
    rects = tuple(Rect(int(p), x0, y0, x1, y1) for p, x0, y0, x1, y1 in json.loads(row["rects"]))
    return Chunk(
        id=row["id"], document_id=row["document_id"], ordinal=row["ordinal"], text=row["text"],
        section=row["section"], page_start=row["page_start"], page_end=row["page_end"],
        token_count=row["token_count"], rects=rects, recommendation_class=row["recommendation_class"],
        evidence_level=row["evidence_level"], kind=row["kind"],
    )
