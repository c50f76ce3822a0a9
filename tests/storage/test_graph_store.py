"""The entity graph's store on SQLite and on PostgreSQL (`catalog_store`, tests/catalogs.py): a document's graph
replaced and deleted, filtered reads, relations summed over documents, the version a refresh checks, the refresh
itself, and the language model's reply cache."""

from __future__ import annotations

from catalogs import CatalogStore

from workspace_app.ingest.pipeline import keyword_texts
from workspace_app.models.documents import Chunk, Document
from workspace_app.models.graph import (
    ChunkInfo,
    CommunityReport,
    DocumentGraph,
    DocumentSummary,
    EntityRecord,
    EntityStats,
    Mention,
    MentionRecord,
    Relation,
    ReportSentence,
)


def graph_store(store: CatalogStore, catalog: object) -> object:
    """The graph store over the catalog's database, as the wiring builds it."""
    if store.kind == "sqlite":
        from workspace_app.storage.sqlite.graph import SqliteGraphStore

        return SqliteGraphStore(catalog.database)  # type: ignore[attr-defined]
    from workspace_app.storage.postgres.graph import PostgresGraphStore

    return PostgresGraphStore(catalog.database)  # type: ignore[attr-defined]


def add_document(catalog: object, workspace_id: str, doc_id: str, texts: list[str]) -> None:
    catalog.add_document(Document(  # type: ignore[attr-defined]
        id=doc_id, workspace_id=workspace_id, name=f"{doc_id}.pdf", sha256=doc_id * 8, size_bytes=1, pages=2, chunks=0,
        status="ready", stage="ready", progress=0.0, error=None, added_at=f"2024-01-0{len(doc_id)}",
    ))
    chunks = [
        Chunk(id=f"{doc_id}-{i:05d}", document_id=doc_id, ordinal=i, text=t, section="S", page_start=i + 1,
              page_end=i + 1, token_count=3, rects=())
        for i, t in enumerate(texts)
    ]
    catalog.replace_chunks(doc_id, workspace_id, chunks, keyword_texts(chunks))  # type: ignore[attr-defined]


def document_graph(doc_id: str, weight: float) -> DocumentGraph:
    return DocumentGraph(
        doc_id,
        [EntityRecord("warfarin", "Warfarin", "drug", "an anticoagulant"), EntityRecord("af", "AF", "disease")],
        [MentionRecord("warfarin", f"{doc_id}-00000", 1, 2, ("warfarin",)),
         MentionRecord("af", f"{doc_id}-00000", 1, 1, ("AF", "atrial fibrillation")),
         MentionRecord("af", f"{doc_id}-00001", 2, 3, ("AF",))],
        [Relation("warfarin", "af", "TREATS", weight, (f"{doc_id}-00000",))],
    )


def test_the_graph_of_documents_is_stored_read_refreshed_and_removed(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    add_document(catalog, ws.id, "d1", ["Warfarin for AF.", "AF again."])
    add_document(catalog, ws.id, "d2", ["Warfarin and AF.", "AF."])
    graph = graph_store(catalog_store, catalog)
    assert graph.graph_version(ws.id) == (0, 0) and graph.refreshed_version(ws.id) is None
    graph.replace_document_graph(ws.id, document_graph("d1", 1.0))
    graph.replace_document_graph(ws.id, document_graph("d2", 0.5))
    version = graph.graph_version(ws.id)
    assert version[1] == 6

    [relation] = graph.relations(ws.id)
    assert (relation.weight, relation.chunk_ids) == (1.5, ("d1-00000", "d2-00000"))
    assert graph.relations(ws.id, document_ids=["d2"])[0].weight == 0.5 and graph.relations(ws.id, min_weight=2) == []
    assert graph.mention_stats(ws.id)["af"] == (8, 2, ("AF", "atrial fibrillation"))
    assert graph.mentions(ws.id, ["af"], ["d1"]) == [Mention("af", "d1-00001", "d1", 2, 3), Mention("af", "d1-00000", "d1", 1, 1)]
    assert graph.chunk_info(["d1-00001", "nope"]) == {"d1-00001": ChunkInfo("d1-00001", "d1", 1, 2, "AF again.")}
    assert [c.id for c in graph.workspace_chunks(ws.id)] == ["d1-00000", "d1-00001", "d2-00000", "d2-00001"]

    stats = {"warfarin": EntityStats(4, 2, 1, 0, ("warfarin",)), "af": EntityStats(8, 2, 1, 0, ("AF",))}
    report = CommunityReport(0, 0, None, "Warfarin and AF", ("af", "warfarin"), (relation,),
                             (ReportSentence("Warfarin for AF.", "d1-00000"),), "Warfarin treats AF.", ("d1-00000",), 2, 1.5)
    summaries = [DocumentSummary("d2", "AF.", ("af",), ("d2-00001",)), DocumentSummary("d1", "AF again.", ("af",), ())]
    assert not graph.save_refresh(ws.id, stats, [report], summaries, (version[0], version[1] - 1)), "the graph changed"
    assert graph.save_refresh(ws.id, stats, [report], summaries, version)
    assert graph.refreshed_version(ws.id) == version
    assert [(e.id, e.mentions, e.community) for e in graph.entity_rows(ws.id)] == [("af", 8, 0), ("warfarin", 4, 0)]
    assert [e.id for e in graph.entity_rows(ws.id, types=["drug"], document_ids=["d2"], min_degree=1)] == ["warfarin"]
    assert graph.entity_rows(ws.id, entity_ids=["af"], limit=1)[0].description == ""
    assert graph.communities(ws.id, 0) == [report] and graph.communities(ws.id, 1) == []
    assert graph.document_summaries(ws.id) == summaries

    graph.delete_document_graph("d1")
    assert graph.graph_version(ws.id) != version and graph.relations(ws.id)[0].weight == 0.5
    graph.save_refresh(ws.id, {"af": EntityStats(4, 1, 1, 0, ("AF",))}, [], [])
    assert [e.id for e in graph_store(catalog_store, catalog_store.open()).entity_rows(ws.id)] == ["af", "warfarin"]
    catalog.delete_document("d2")
    graph.save_refresh(ws.id, {}, [], [])
    assert graph.entity_rows(ws.id) == [] and graph.relations(ws.id) == [] and graph.graph_version(ws.id)[1] == 0


def test_replies_of_the_language_model_are_cached_by_model_and_key(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    cache = graph_store(catalog_store, catalog)
    assert cache.cached_response("m", "k") is None
    cache.cache_response("m", "k", '{"entities": []}')
    cache.cache_response("m", "k", '{"entities": [1]}')
    assert graph_store(catalog_store, catalog_store.open()).cached_response("m", "k") == '{"entities": [1]}'
    assert cache.cached_response("other", "k") is None
