"""The catalog on a real SQLite file and on a real PostgreSQL database (`catalog_store`, tests/catalogs.py): chunks
and the BM25 index on both; SQLite's migrations (fresh, reopened, upgraded)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from catalogs import CatalogStore

from workspace_app.ingest.pipeline import keyword_texts
from workspace_app.models.documents import PROVISIONAL, Chunk, Document, Rect
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.storage.sqlite.migrations import MIGRATIONS
from workspace_app.text.analyzer import query_terms

# The catalog schema as the first commit (fd9d3ce) wrote it, at schema_version 1.
FIRST_SCHEMA = [
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE workspaces (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL)",
    """CREATE TABLE documents (
        id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        name TEXT NOT NULL, sha256 TEXT NOT NULL, size_bytes INTEGER NOT NULL, media_type TEXT NOT NULL,
        pages INTEGER NOT NULL DEFAULT 0, chunks INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL,
        stage TEXT NOT NULL, progress REAL NOT NULL DEFAULT 0, error TEXT, added_at TEXT NOT NULL,
        updated_at TEXT NOT NULL, pages_without_text TEXT NOT NULL DEFAULT '[]',
        included INTEGER NOT NULL DEFAULT 1, UNIQUE (workspace_id, sha256))""",
    "CREATE INDEX documents_workspace ON documents(workspace_id)",
    """CREATE TABLE chunks (
        id TEXT NOT NULL UNIQUE, document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        workspace_id TEXT NOT NULL, ordinal INTEGER NOT NULL, text TEXT NOT NULL, section TEXT NOT NULL,
        page_start INTEGER NOT NULL, page_end INTEGER NOT NULL, token_count INTEGER NOT NULL, rects TEXT NOT NULL,
        recommendation_class TEXT, evidence_level TEXT)""",
    "CREATE INDEX chunks_document ON chunks(document_id, ordinal)",
    "CREATE INDEX chunks_workspace ON chunks(workspace_id)",
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(section, body, tokenize = 'porter unicode61 remove_diacritics 2')",
    "INSERT INTO schema_version (version) VALUES (1)",
]


def document(workspace_id: str, doc_id: str, status: str = "ready") -> Document:
    return Document(
        id=doc_id, workspace_id=workspace_id, name=f"{doc_id}.pdf", sha256=doc_id * 4, size_bytes=10, pages=1,
        chunks=0, status=status, stage=status, progress=0.0, error=None, added_at="2024-01-01T00:00:00+00:00",
    )


def chunk(doc_id: str, ordinal: int, text: str, section: str = "1. Intro") -> Chunk:
    return Chunk(
        id=f"{doc_id}-{ordinal:05d}", document_id=doc_id, ordinal=ordinal, text=text, section=section, page_start=1,
        page_end=1, token_count=len(text.split()), rects=(Rect(1, 10.0, 20.0, 300.0, 32.5),),
        recommendation_class="IIa" if "reasonable" in text else None, evidence_level="B-R" if "reasonable" in text else None,
    )


def indexed(chunks: list[Chunk]) -> tuple[list[Chunk], list[tuple[str, str]]]:
    """Chunks with the index terms the pipeline computes for them (section title terms, body terms)."""
    return chunks, keyword_texts(chunks)


def versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT version FROM schema_version ORDER BY version")]


def test_a_new_catalog_gets_every_migration_once(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    SqliteCatalog(path).close()
    SqliteCatalog(path).close()
    assert versions(path) == list(range(1, len(MIGRATIONS) + 1))
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_catalog_of_the_first_schema_is_upgraded_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    with sqlite3.connect(path) as db:
        for statement in FIRST_SCHEMA:
            db.execute(statement)
        db.execute("INSERT INTO workspaces VALUES ('w1', 'Old', '2024-01-01T00:00:00+00:00')")
        db.execute(
            "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, status, stage, added_at, "
            "updated_at) VALUES ('d1', 'w1', 'old.pdf', 'abc', 10, 'application/pdf', 'ready', 'ready', 'x', 'x')"
        )
        db.execute(
            "INSERT INTO chunks (id, document_id, workspace_id, ordinal, text, section, page_start, page_end, "
            "token_count, rects) VALUES ('d1-00000', 'd1', 'w1', 0, 'syncope evaluation', 'Intro', 1, 1, 2, '[]')"
        )
        db.execute("INSERT INTO chunks_fts (rowid, section, body) SELECT rowid, 'intro', 'syncope evaluation' FROM chunks")

    catalog = SqliteCatalog(path)

    assert versions(path) == list(range(1, len(MIGRATIONS) + 1))
    assert catalog.find_workspace("Old") is not None
    assert catalog.get_chunks(["d1-00000"])["d1-00000"].text == "syncope evaluation"
    assert [cid for cid, _ in catalog.keyword_search("w1", ["syncope"], 5, None)] == ["d1-00000"]
    catalog.add_document(document("w1", "d2"))
    catalog.replace_chunks("d2", "w1", *indexed([chunk("d2", 0, "tilt table testing for syncope")]))
    assert [cid for cid, _ in catalog.keyword_search("w1", ["tilt"], 5, None)] == ["d2-00000"]
    catalog.close()


def test_chunks_round_trip_with_rects_and_recommendations(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "d1"))
    written = [chunk("d1", 0, "Beta blockers might be reasonable"), chunk("d1", 1, "Midodrine is reasonable 心率")]
    catalog.replace_chunks("d1", ws.id, *indexed(written))
    read = catalog.get_chunks([c.id for c in written] + ["missing"])
    assert [read[c.id] for c in written] == written
    assert catalog.document_chunk_ids("d1") == ["d1-00000", "d1-00001"]


def test_chunk_texts_give_kind_and_text_of_the_chunks_that_exist(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "d1"))
    written = [chunk("d1", 0, "Beta blockers might be reasonable"), chunk("d1", 1, "Midodrine is reasonable 心率")]
    catalog.replace_chunks("d1", ws.id, *indexed(written))
    assert catalog.chunk_texts(["missing", "d1-00001", "d1-00000"]) == {
        "d1-00001": ("body", "Midodrine is reasonable 心率"), "d1-00000": ("body", "Beta blockers might be reasonable"),
    }
    catalog.replace_chunks("d1", ws.id, *indexed([chunk("d1", 0, "tilt table testing")]))
    assert catalog.chunk_texts(["d1-00000", "d1-00001"]) == {"d1-00000": ("body", "tilt table testing")}


def test_replacing_chunks_leaves_no_stale_index_rows(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "d1"))
    catalog.replace_chunks("d1", ws.id, *indexed([chunk("d1", i, f"orthostatic hypotension part {i}") for i in range(5)]))
    catalog.replace_chunks("d1", ws.id, *indexed([chunk("d1", i, f"vasovagal syncope part {i}") for i in range(3)]))
    assert catalog.keyword_search(ws.id, ["orthostatic"], 10, None) == []
    assert len(catalog.keyword_search(ws.id, ["vasovagal"], 10, None)) == 3
    assert catalog_store.keyword_rows() == 3
    assert catalog_store.scalar("SELECT COUNT(*) FROM chunks") == 3


def test_keyword_search_sees_only_ready_documents_of_its_workspace(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    mine, other = catalog.create_workspace("Mine"), catalog.create_workspace("Other")
    catalog.add_document(document(mine.id, "ready"))
    catalog.add_document(document(mine.id, "running", status="running"))
    catalog.add_document(document(other.id, "elsewhere"))
    for doc_id, ws in (("ready", mine), ("running", mine), ("elsewhere", other)):
        catalog.replace_chunks(doc_id, ws.id, *indexed([chunk(doc_id, 0, "pacemaker for carotid sinus syncope")]))
    terms = query_terms("pacemaker for carotid sinus syncope?")
    assert [cid for cid, _ in catalog.keyword_search(mine.id, terms, 10, None)] == ["ready-00000"]
    assert catalog.keyword_search(mine.id, terms, 10, ["running"]) == []
    assert catalog.keyword_search(mine.id, [], 10, None) == []
    catalog.update_document("running", status="ready")
    assert {cid for cid, _ in catalog.keyword_search(mine.id, terms, 10, None)} == {"ready-00000", "running-00000"}


def test_keyword_search_sees_a_running_documents_provisional_passages_and_nothing_else_of_it(
    catalog_store: CatalogStore,
) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "scan", status="running"))
    left_over = chunk("scan", 0, "pacemaker for carotid sinus syncope")  # an earlier try's chunk
    page = replace(chunk("scan", 0, "pacemaker for carotid sinus syncope"), id="scan-ocr00001", kind=PROVISIONAL)
    terms = query_terms("pacemaker for carotid sinus syncope?")
    catalog.replace_chunks("scan", ws.id, *indexed([left_over]))
    assert catalog.keyword_search(ws.id, terms, 10, ["scan"]) == []

    catalog.replace_chunks("scan", ws.id, *indexed([page]))
    assert [cid for cid, _ in catalog.keyword_search(ws.id, terms, 10, ["scan"])] == ["scan-ocr00001"]
    assert [cid for cid, _ in catalog.keyword_search(ws.id, terms, 10, None)] == ["scan-ocr00001"]
    for status in ("cancelled", "failed", "queued"):
        catalog.update_document("scan", status=status)
        assert catalog.keyword_search(ws.id, terms, 10, None) == [], status


def test_query_terms_with_fts_syntax_are_searched_literally(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "d1"))
    catalog.replace_chunks("d1", ws.id, *indexed([chunk("d1", 0, "NEAR the AND gate, OR not")]))
    for terms in (['"'], ["NEAR(a b)"], ["*"], ["AND"], ["a:b"], ["-x"]):
        catalog.keyword_search(ws.id, terms, 5, None)  # no syntax error reaches the caller
    assert catalog.keyword_search(ws.id, ["near"], 5, None)


def test_deleting_a_document_cascades_to_its_chunks_and_index_rows(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    for doc_id in ("d1", "d2"):
        catalog.add_document(document(ws.id, doc_id))
        catalog.replace_chunks(doc_id, ws.id, *indexed([chunk(doc_id, i, f"syncope {doc_id} {i}") for i in range(4)]))
    catalog.delete_document("d1")
    assert catalog.document_chunk_ids("d1") == []
    assert {cid.split("-")[0] for cid, _ in catalog.keyword_search(ws.id, ["syncope"], 20, None)} == {"d2"}
    assert catalog_store.keyword_rows() == 4
    catalog.delete_workspace(ws.id)
    assert catalog_store.keyword_rows() == 0
    assert catalog_store.scalar("SELECT COUNT(*) FROM documents") == 0
