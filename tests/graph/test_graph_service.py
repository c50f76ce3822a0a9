"""The entity graph of a workspace built by ingestion (real PDFs, SQLite catalog, embedded Chroma): consistent
after adding and removing documents, reports quoting real chunks, NetworkX views, GraphML, the CLI export."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from workspace_app.adapters.ownership import release_data_dir
from workspace_app.ingest.pipeline import keyword_texts

HCM = "hcm-p38-39.pdf"
DAPT = "dapt-p7-8.pdf"
HFPEF = "hfpef-p1-2.pdf"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Any:
    """A workspace with an English and a Chinese excerpt, ingested through the pipeline (graph stage included)."""
    built = build(tmp_path_factory.mktemp("graph") / "data")
    built.workspaces.create("Graph")
    for source, name in ((excerpt("ommen-2024-hcm.pdf", 38, 39), HCM), (excerpt("zh-dapt-chd-consensus-2021.pdf", 7, 8), DAPT)):
        report = built.documents.ingest("Graph", source, name)
        assert report.status == "ready", report
    return built


def workspace_id(service: Any) -> str:
    return str(service.workspaces.get("Graph").id)


def graph_rows(service: Any, table: str, document_id: str | None = None) -> int:
    """Rows of a graph table in the catalog file (for the workspace, or for one document)."""
    with sqlite3.connect(service.settings.storage.data_dir / "catalog.sqlite") as db:
        if document_id is None:
            return int(db.execute(f"SELECT COUNT(*) FROM {table} WHERE workspace_id = ?", (workspace_id(service),)).fetchone()[0])
        return int(db.execute(f"SELECT COUNT(*) FROM {table} WHERE document_id = ?", (document_id,)).fetchone()[0])


def assert_consistent(service: Any) -> None:
    """Every entity is mentioned, every relation and report names existing entities, reports cite real chunks."""
    ws = workspace_id(service)
    entities = {e.id: e for e in service.graph.entities(ws)}
    mentioned = {m.entity_id for e in entities for m in service.graph.mentions(ws, e)}
    assert set(entities) == mentioned, "no entity without mentions"
    for relation in service.graph.relations(ws):
        assert relation.source in entities and relation.target in entities
    ready = {d.id for d in service.documents.list("Graph")}
    chunks = service.catalog.get_chunks([m.chunk_id for e in entities for m in service.graph.mentions(ws, e)])
    assert {c.document_id for c in chunks.values()} <= ready
    for report in [*service.graph.communities(ws, 0), *service.graph.communities(ws, 1)]:
        assert set(report.entity_ids) <= set(entities)
        quoted = service.catalog.get_chunks([s.chunk_id for s in report.sentences])
        for sentence in report.sentences:
            assert sentence.text in quoted[sentence.chunk_id].text, "a report quotes the chunk it cites"
    communities = {e.community for e in entities.values() if e.community is not None}
    assert communities == {r.id for r in service.graph.communities(ws, 0)}


def test_ingestion_builds_the_graph_of_both_languages(service: Any) -> None:
    ws = workspace_id(service)
    names = {e.name for e in service.graph.entities(ws)}
    assert {"mavacamten", "hypertrophic cardiomyopathy", "aspirin", "ticagrelor"} <= names
    documents = {d.name: d for d in service.documents.list("Graph")}
    aspirin = service.graph.find_entities(ws, "阿司匹林")[0]
    assert aspirin.name == "aspirin" and "阿司匹林" in aspirin.aliases
    assert {m.document_id for m in service.graph.mentions(ws, aspirin.id)} == {documents[DAPT].id}
    top = service.graph.entities(ws, limit=5)
    assert [e.degree for e in top] == sorted((e.degree for e in top), reverse=True) and top[0].degree > 0
    assert_consistent(service)


def test_relations_keep_their_evidence_chunks(service: Any) -> None:
    ws = workspace_id(service)
    relation = service.graph.relations(ws)[0]
    assert relation.type == "co-occurs" and relation.weight >= 1
    chunks = service.catalog.get_chunks(list(relation.chunk_ids))
    assert len(chunks) == len(relation.chunk_ids) > 0
    for chunk_id in relation.chunk_ids:
        mentioned = {m.entity_id for m in service.graph.store.mentions(ws, [relation.source, relation.target])
                     if m.chunk_id == chunk_id}
        assert mentioned == {relation.source, relation.target}, "both entities are mentioned in each evidence chunk"


def test_queries_for_modes(service: Any) -> None:
    ws = workspace_id(service)
    named = service.graph.match_question(ws, "Is mavacamten used in obstructive HCM?")
    assert {"mavacamten", "obstructive hypertrophic cardiomyopathy"} <= {e.name for e in named}
    assert "hypertrophic cardiomyopathy" not in {e.name for e in service.graph.match_question(ws, "What about PCI?")}
    mavacamten = next(e for e in named if e.name == "mavacamten")
    neighbours = service.graph.neighbours(ws, [mavacamten.id])
    assert neighbours and all(weight > 0 for _, weight in neighbours)
    chunks = service.graph.chunks_for_entities(ws, [mavacamten.id])
    texts = service.catalog.get_chunks([c for c, _ in chunks])
    assert all("mavacamten" in texts[c].text.lower() for c, _ in chunks)
    summaries = {s.document_id: s for s in service.graph.document_summaries(ws)}
    assert set(summaries) == {d.id for d in service.documents.list("Graph")}
    for summary in summaries.values():
        assert summary.entity_ids and summary.text
        quoted = service.catalog.get_chunks(list(summary.chunk_ids))
        assert all(c.document_id == summary.document_id for c in quoted.values())


def test_networkx_views_and_graphml_export(service: Any, tmp_path: Path) -> None:
    ws = workspace_id(service)
    entities = service.graph.entities(ws)
    view = service.graph.entity_graph(ws)
    assert view.number_of_nodes() == len(entities)
    node = view.nodes[entities[0].id]
    assert {node["name"], node["type"]} == {entities[0].name, entities[0].type}
    full = service.graph.full_graph(ws)
    kinds = {data["kind"] for _, _, data in full.edges(data=True)}
    assert kinds == {"contains", "next", "mentions", "related"}
    path = tmp_path / "graph.graphml"
    path.write_bytes(service.graph.export_graphml(ws))
    parsed = nx.read_graphml(path)
    assert parsed.number_of_nodes() == full.number_of_nodes()
    assert sum(1 for _, data in parsed.nodes(data=True) if data["kind"] == "entity") == len(entities)


def test_removing_a_document_leaves_no_orphans_and_recomputes_communities(service: Any, excerpt: Callable[..., Path]) -> None:
    ws = workspace_id(service)
    report = service.documents.ingest("Graph", excerpt("zh-hfpef-consensus-2023.pdf", 1, 2), HFPEF)
    assert report.status == "ready"
    hfpef = service.graph.find_entities(ws, "HFpEF")
    assert hfpef and hfpef[0].documents == 1
    assert graph_rows(service, "graph_mentions", report.document_id) > 0
    assert graph_rows(service, "graph_relations", report.document_id) > 0
    assert_consistent(service)
    service.documents.remove("Graph", HFPEF)
    for table in ("graph_mentions", "graph_relations", "graph_document_summaries"):
        assert graph_rows(service, table, report.document_id) == 0, table
    assert service.graph.find_entities(ws, "HFpEF") == []
    assert_consistent(service)


def test_indexing_a_document_again_changes_nothing(service: Any) -> None:
    ws = workspace_id(service)
    before = [(e.id, e.mentions, e.degree) for e in service.graph.entities(ws)]
    document = service.documents.get("Graph", HCM)
    chunks = service.catalog.get_chunks(service.catalog.document_chunk_ids(document.id))
    service.graph.index_document(document, sorted(chunks.values(), key=lambda c: c.ordinal))
    assert [(e.id, e.mentions, e.degree) for e in service.graph.entities(ws)] == before


@pytest.mark.slow
def test_cli_exports_graphml_and_workspace_deletion_drops_the_graph(
    tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    data = tmp_path / "data"
    own = build(data)
    own.workspaces.create("Export")
    assert own.documents.ingest("Export", excerpt("ommen-2024-hcm.pdf", 38, 39), HCM).status == "ready"
    out = tmp_path / "export.graphml"
    release_data_dir(data)  # this process's App is idle while the CLI process owns the embedded store
    result = cli(data, "graph", "export", "--workspace", "Export", "--out", out, timeout=120)
    assert result.returncode == 0, result.stderr
    assert any(d.get("name") == "mavacamten" for _, d in nx.read_graphml(out).nodes(data=True))
    own.workspaces.delete("Export")
    with sqlite3.connect(data / "catalog.sqlite") as db:
        for table in ("graph_entities", "graph_mentions", "graph_relations", "graph_communities"):
            assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table


def test_a_refresh_that_raced_with_another_writer_is_not_saved(service: Any) -> None:
    """A second worker process may store or drop a document while this one computes communities."""
    ws = workspace_id(service)
    store = service.graph.store
    version = store.graph_version(ws)
    document = service.documents.get("Graph", DAPT)
    store.delete_document_graph(document.id)  # what the other process did meanwhile
    assert store.graph_version(ws) != version
    reports = service.graph.communities(ws)
    assert store.save_refresh(ws, {}, [], [], version) is False
    assert service.graph.communities(ws) == reports, "the stale result was not written"
    chunks = service.catalog.get_chunks(service.catalog.document_chunk_ids(document.id))
    service.graph.index_document(document, sorted(chunks.values(), key=lambda c: c.ordinal))
    assert service.graph.find_entities(ws, "ticagrelor")
    assert_consistent(service)


def test_a_document_whose_chunks_were_replaced_keeps_no_graph_rows_after_a_refresh(service: Any) -> None:
    """A re-run replaces the chunks (mentions go with them) and may fail before its graph stage."""
    ws = workspace_id(service)
    document = service.documents.get("Graph", HCM)
    chunks = sorted(service.catalog.get_chunks(service.catalog.document_chunk_ids(document.id)).values(), key=lambda c: c.ordinal)
    service.catalog.replace_chunks(document.id, ws, chunks, keyword_texts(chunks))
    assert graph_rows(service, "graph_mentions", document.id) == 0
    service.graph.refresh(ws)
    assert graph_rows(service, "graph_relations", document.id) == 0
    assert not service.graph.find_entities(ws, "mavacamten")
    assert_consistent(service)
    service.graph.index_document(document, chunks)
    assert service.graph.find_entities(ws, "mavacamten")


def test_a_batch_refreshes_once_and_no_query_reads_a_stale_graph(service: Any) -> None:
    """Documents stored with refresh=False (more of the batch on their way) leave the communities stale; the
    first query refreshes them, so it answers as if every document had refreshed."""
    ws = workspace_id(service)
    document = service.documents.get("Graph", DAPT)
    chunks = sorted(service.catalog.get_chunks(service.catalog.document_chunk_ids(document.id)).values(), key=lambda c: c.ordinal)
    service.graph.store.delete_document_graph(document.id)
    service.graph.refresh(ws)
    assert not service.graph.find_entities(ws, "ticagrelor")
    without = {r.id for r in service.graph.communities(ws)}

    service.graph.index_document(document, chunks, refresh=False)
    assert service.graph.is_stale(ws)
    assert service.graph.store.communities(ws, 0) and {r.id for r in service.graph.store.communities(ws, 0)} == without
    assert service.graph.find_entities(ws, "ticagrelor"), "the query refreshed first"
    assert not service.graph.is_stale(ws)
    assert_consistent(service)


def test_the_pipeline_leaves_the_refresh_to_the_last_document_of_a_batch(
    tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path]
) -> None:
    own = build(tmp_path / "data")
    own.workspaces.create("Batch")
    first = own.documents.submit("Batch", excerpt("ommen-2024-hcm.pdf", 38, 39), HCM).document_id
    own.documents.submit("Batch", excerpt("zh-dapt-chd-consensus-2021.pdf", 7, 8), DAPT)  # queued: the batch goes on
    ws = own.workspaces.get("Batch").id
    assert own.documents.jobs.run(first, "test@nowhere:1:x") == "ready"
    assert own.graph.is_stale(ws), "the first document of the batch did not refresh"
    assert own.documents.ingest("Batch", excerpt("zh-dapt-chd-consensus-2021.pdf", 7, 8), DAPT).status == "ready"
    assert not own.graph.is_stale(ws), "the last one did"
    assert own.graph.find_entities(ws, "mavacamten") and own.graph.find_entities(ws, "ticagrelor")
