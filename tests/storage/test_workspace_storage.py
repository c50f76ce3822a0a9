"""Workspaces and documents on real storage: the SQLite catalog + FTS5 or a PostgreSQL catalog (marked `postgres`),
embedded Chroma and the file store under tmp_path."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from keyword_index import keyword_rows, orphan_keyword_rows

from workspace_app.errors import DocumentNotFoundError, WorkspaceError, WorkspaceExistsError, WorkspaceNotFoundError
from workspace_app.storage.chroma import open_chroma
from workspace_app.text.analyzer import query_terms

ARNETT = "arnett-2014-guideline-strategies.pdf"
QUERY = "guidelines for patients with multiple chronic conditions and comorbidities"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def catalog_url(request: pytest.FixtureRequest) -> str:
    """Empty for the SQLite catalog in the data dir, else a new PostgreSQL database's URL."""
    return "" if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def build(build: Callable[..., Any], catalog_url: str) -> Callable[..., Any]:
    """The session's `build`, on this test's catalog."""
    return lambda data_dir, **ingest: build(data_dir, catalog_url=catalog_url, **ingest)


@pytest.fixture
def arnett(guidelines: Path) -> Path:
    return guidelines / ARNETT


@pytest.fixture
def women(excerpt: Callable[..., Path]) -> Path:
    """Two pages of recommendations from the 2011 women's prevention guideline."""
    return excerpt("mosca-2011-women-cvd.pdf", 10, 11)


def sql(data_dir: Path, catalog_url: str, query: str, *params: object) -> list[tuple[Any, ...]]:
    """Read the catalog directly (the data dir's SQLite file, or the PostgreSQL database), through a connection of
    its own; `?` marks parameters."""
    if catalog_url:
        with psycopg.connect(catalog_url) as pg:
            return pg.execute(query.replace("?", "%s"), params).fetchall()
    with sqlite3.connect(data_dir / "catalog.sqlite") as db:
        return db.execute(query, params).fetchall()


def index_rows(data_dir: Path, catalog_url: str) -> tuple[int, int]:
    """(rows of the keyword index, those whose chunk no longer exists), in either catalog."""
    if catalog_url:
        total = sql(data_dir, catalog_url, "SELECT COUNT(*) FROM keyword_lengths")[0][0]
        orphans = sql(
            data_dir, catalog_url, "SELECT COUNT(*) FROM keyword_lengths WHERE chunk_id NOT IN (SELECT id FROM chunks)"
        )
        return int(total), int(orphans[0][0])
    with sqlite3.connect(data_dir / "catalog.sqlite") as db:
        return keyword_rows(db), orphan_keyword_rows(db)


def collections(data_dir: Path) -> set[str]:
    return {c if isinstance(c, str) else c.name for c in open_chroma(data_dir / "chroma", None).list_collections()}


def stored_files(data_dir: Path) -> set[str]:
    return {p.name for p in (data_dir / "files").iterdir() if not p.name.startswith(".")}


def ingest(service: Any, workspace: str, path: Path, name: str | None = None) -> Any:
    report = service.documents.ingest(workspace, path, name)
    assert report.status == "ready", report
    return service.documents.get(workspace, report.document_id)


def hit_keys(result: Any) -> list[tuple[str, int, str]]:
    return [(hit.chunk.id, hit.chunk.page_start, hit.chunk.text) for hit in result.hits]


# Persistence


def test_documents_and_search_survive_closing_and_reopening(
    build: Callable[..., Any], data_dir: Path, arnett: Path, women: Path
) -> None:
    service = build(data_dir)
    service.workspaces.create("Prevention")
    ingest(service, "Prevention", arnett)
    ingest(service, "Prevention", women, "women-p10-11.pdf")
    before = service.search.search("Prevention", QUERY)
    documents = service.documents.list("Prevention")
    vectors = service.vectors.count(service.workspaces.get("Prevention").id)
    service.catalog.close()

    reopened = build(data_dir)
    assert [w.name for w in reopened.workspaces.list()] == ["Prevention"]
    assert reopened.documents.list("Prevention") == documents
    assert reopened.vectors.count(reopened.workspaces.get("Prevention").id) == vectors == sum(d.chunks for d in documents)
    after = reopened.search.search("Prevention", QUERY)
    assert len(before.hits) == 8
    assert hit_keys(after) == hit_keys(before)
    assert [hit.ranks for hit in after.hits] == [hit.ranks for hit in before.hits]


# Workspaces


def test_workspace_create_rename_and_name_rules(build: Callable[..., Any], data_dir: Path) -> None:
    service = build(data_dir)
    created = service.workspaces.create("  Heart   failure ")
    assert created.name == "Heart failure"
    with pytest.raises(WorkspaceExistsError):
        service.workspaces.create("Heart failure")
    for bad in ("", "   ", "\u200e\u202e", "x" * 81):
        with pytest.raises(WorkspaceError):
            service.workspaces.create(bad)
    service.workspaces.create("Arrhythmia")

    renamed = service.workspaces.rename("Heart failure", "HFpEF 心衰")
    assert renamed.id == created.id and renamed.name == "HFpEF 心衰"
    assert service.workspaces.get(created.id).name == "HFpEF 心衰"
    with pytest.raises(WorkspaceNotFoundError):
        service.workspaces.get("Heart failure")
    with pytest.raises(WorkspaceExistsError):
        service.workspaces.rename("HFpEF 心衰", "Arrhythmia")
    with pytest.raises(WorkspaceNotFoundError):
        service.workspaces.rename("nope", "other")
    assert sorted(w.name for w in service.workspaces.list()) == ["Arrhythmia", "HFpEF 心衰"]


def test_deleting_a_workspace_removes_everything_it_alone_used(
    build: Callable[..., Any], data_dir: Path, catalog_url: str, arnett: Path, women: Path
) -> None:
    service = build(data_dir)
    doomed = service.workspaces.create("Doomed")
    kept = service.workspaces.create("Kept")
    ingest(service, "Doomed", arnett)
    women_doc = ingest(service, "Doomed", women, "women.pdf")
    kept_doc = ingest(service, "Kept", arnett)
    kept_hits = hit_keys(service.search.search("Kept", QUERY))
    assert {f"ws-{doomed.id}", f"xl-{doomed.id}"} <= collections(data_dir)  # the main and cross-language indexes

    service.workspaces.delete("Doomed")

    with pytest.raises(WorkspaceNotFoundError):
        service.workspaces.get("Doomed")
    assert sql(data_dir, catalog_url, "SELECT COUNT(*) FROM documents WHERE workspace_id = ?", doomed.id) == [(0,)]
    assert sql(data_dir, catalog_url, "SELECT COUNT(*) FROM chunks WHERE workspace_id = ?", doomed.id) == [(0,)]
    assert index_rows(data_dir, catalog_url) == (kept_doc.chunks, 0)
    assert not {f"ws-{doomed.id}", f"xl-{doomed.id}"} & collections(data_dir)
    assert {f"ws-{kept.id}", f"xl-{kept.id}"} <= collections(data_dir)
    # The arnett file is still used by "Kept"; the women's excerpt was only in "Doomed".
    assert stored_files(data_dir) == {f"{kept_doc.sha256}.pdf"}
    assert women_doc.sha256 != kept_doc.sha256
    assert hit_keys(service.search.search("Kept", QUERY)) == kept_hits
    assert service.vectors.count(kept.id) == kept_doc.chunks


def test_deleting_an_empty_workspace_works(build: Callable[..., Any], data_dir: Path) -> None:
    service = build(data_dir)
    service.workspaces.create("Empty")
    service.workspaces.delete("Empty")
    assert service.workspaces.list() == []
    with pytest.raises(WorkspaceNotFoundError):
        service.workspaces.delete("Empty")


# Documents


def test_removing_a_document_removes_its_chunks_index_rows_vectors_and_file(
    build: Callable[..., Any], data_dir: Path, catalog_url: str, arnett: Path, women: Path
) -> None:
    service = build(data_dir)
    workspace = service.workspaces.create("W")
    kept = ingest(service, "W", arnett)
    removed = ingest(service, "W", women, "women.pdf")
    terms = query_terms("omega-3 fatty acids warfarin dabigatran")
    assert service.catalog.keyword_search(workspace.id, terms, 50, [removed.id])
    assert service.vectors.count(workspace.id, removed.id) == removed.chunks > 0
    crosslingual = service.vectors.companions[0]  # the multilingual index, written by its ingestion stage
    assert crosslingual.count(workspace.id, removed.id) == removed.chunks

    service.documents.remove("W", "women.pdf")

    with pytest.raises(DocumentNotFoundError):
        service.documents.get("W", removed.id)
    assert service.catalog.document_chunk_ids(removed.id) == []
    assert service.catalog.keyword_search(workspace.id, terms, 50, [removed.id]) == []
    remaining = service.catalog.keyword_search(workspace.id, terms, 50, None)
    found = service.catalog.get_chunks([chunk_id for chunk_id, _ in remaining])
    assert {chunk.document_id for chunk in found.values()} <= {kept.id}
    assert index_rows(data_dir, catalog_url)[0] == kept.chunks
    assert service.vectors.count(workspace.id, removed.id) == 0
    assert service.vectors.count(workspace.id) == kept.chunks
    assert crosslingual.count(workspace.id, removed.id) == 0
    assert crosslingual.count(workspace.id) == kept.chunks
    assert stored_files(data_dir) == {f"{kept.sha256}.pdf"}
    assert [d.name for d in service.documents.list("W")] == [ARNETT]
    assert all(hit.document_name == ARNETT for hit in service.search.search("W", "warfarin in atrial fibrillation").hits)
    with pytest.raises(DocumentNotFoundError):
        service.documents.remove("W", "women.pdf")


def test_a_file_used_by_two_workspaces_stays_until_the_last_one_removes_it(
    build: Callable[..., Any], data_dir: Path, arnett: Path
) -> None:
    service = build(data_dir)
    first, second = service.workspaces.create("First"), service.workspaces.create("Second")
    in_first = ingest(service, "First", arnett)
    in_second = ingest(service, "Second", arnett, "renamed copy.pdf")
    assert in_first.sha256 == in_second.sha256 and in_first.id != in_second.id
    stored = data_dir / "files" / f"{in_first.sha256}.pdf"

    service.documents.remove("First", ARNETT)
    assert stored.is_file()
    assert service.vectors.count(first.id) == 0
    assert service.vectors.count(second.id) == in_second.chunks
    assert service.search.search("Second", QUERY).hits

    service.documents.remove("Second", "renamed copy.pdf")
    assert not stored.exists()


def test_the_same_file_twice_in_a_workspace_is_one_document(
    build: Callable[..., Any], data_dir: Path, catalog_url: str, arnett: Path, tmp_path: Path
) -> None:
    service = build(data_dir)
    workspace = service.workspaces.create("W")
    first = ingest(service, "W", arnett)
    copy = tmp_path / "another name.pdf"
    copy.write_bytes(arnett.read_bytes())

    again = service.documents.ingest("W", copy, "another name.pdf")

    assert again.status == "duplicate"
    assert again.document_id == first.id
    assert again.chunks == first.chunks
    assert ARNETT in (again.error or "")
    assert [d.id for d in service.documents.list("W")] == [first.id]
    assert service.vectors.count(workspace.id) == first.chunks
    assert sql(data_dir, catalog_url, "SELECT COUNT(*) FROM chunks") == [(first.chunks,)]


def test_a_second_workspace_reuses_cached_embeddings(
    build: Callable[..., Any], data_dir: Path, excerpt: Callable[..., Path], embedding_cache_file: Path,
    catalog_url: str,
) -> None:
    # Pages no other test ingests, so the first ingestion has to embed them: other pages on each catalog, since the
    # session's embedding cache is shared and this test runs once on each.
    pdf = excerpt("mosca-2011-women-cvd.pdf", *((16, 17) if catalog_url else (12, 13)))

    def cached() -> int:
        with sqlite3.connect(embedding_cache_file) as db:
            return int(db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    service = build(data_dir)
    service.workspaces.create("A")
    service.workspaces.create("B")
    start = cached()
    first = ingest(service, "A", pdf)
    after_first = cached()
    second = ingest(service, "B", pdf)

    assert after_first > start and first.chunks > 0
    assert cached() == after_first
    assert second.chunks == first.chunks
    assert service.vectors.count(service.workspaces.get("B").id) == second.chunks


def test_search_in_a_workspace_does_not_depend_on_other_workspaces(
    build: Callable[..., Any], data_dir: Path, arnett: Path, excerpt: Callable[..., Path]
) -> None:
    service = build(data_dir)
    service.workspaces.create("Mine")
    service.workspaces.create("Theirs")
    ingest(service, "Mine", arnett)
    queries = ["multiple chronic conditions in Medicare beneficiaries", "clinical practice guideline comorbidity"]

    def results() -> list[list[tuple[str, float]]]:
        hits = [service.search.search("Mine", query, top_k=10, methods=("sparse",)).hits for query in queries]
        return [[(hit.chunk.id, round(hit.score, 9)) for hit in found] for found in hits]

    before = results()
    ingest(service, "Theirs", excerpt("mosca-2011-women-cvd.pdf", 3, 4))
    assert results() == before, "BM25 ranks in one workspace changed when another workspace got a document"


def test_reindex_rebuilds_an_index_the_workspace_lacks(build: Callable[..., Any], data_dir: Path, arnett: Path) -> None:
    # A workspace ingested before the cross-language index existed has no `xl-` collection; reindex fills it.
    service = build(data_dir)
    workspace = service.workspaces.create("Old")
    document = ingest(service, "Old", arnett)
    crosslingual = service.vectors.companions[0]
    crosslingual.drop_workspace(workspace.id)
    assert crosslingual.count(workspace.id) == 0
    hits_before = hit_keys(service.search.search("Old", QUERY))

    queued = service.documents.reindex("Old")

    assert [d.id for d in queued] == [document.id] and queued[0].status == "queued"
    assert service.documents.jobs.run_until_settled(document.id, "test") == "ready"
    again = service.documents.get("Old", document.id)
    assert again.status == "ready" and again.chunks == document.chunks
    assert crosslingual.count(workspace.id) == document.chunks == service.vectors.count(workspace.id)
    assert hit_keys(service.search.search("Old", QUERY)) == hits_before
    assert service.documents.reindex("Old", [ARNETT])[0].id == document.id  # by name too
    with pytest.raises(DocumentNotFoundError):
        service.documents.reindex("Old", ["missing.pdf"])
