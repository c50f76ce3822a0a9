"""Query modes over a real workspace (three guideline excerpts, real SQLite, Chroma, embedder and entity graph):
every mode answers dev questions with citations of real chunks, graph modes list the entities they used,
graph expansion stays below the direct hits, and seq_ret routes by document summaries."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.models.answers import Answer
from workspace_app.models.graph import ENTITY_TYPES
from workspace_app.retrieval.modes import MODES, ModeOptions, ModeRetriever
from workspace_app.retrieval.scope import search_scope

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval" / "guidelines_dev.jsonl"
# (corpus PDF, first page, last page) of each excerpt; gold pages are shifted to the excerpt's numbering.
EXCERPTS = {
    "shen-2017-syncope.pdf": (8, 9),
    "mosca-2011-women-cvd.pdf": (10, 11),
    "zh-acute-af-ed-2024.pdf": (1, 3),
}
QUESTIONS = ("gdev-001", "gdev-022", "gdev-033")


def excerpt_name(doc: str) -> str:
    first, last = EXCERPTS[doc]
    return f"{Path(doc).stem}-p{first}-{last}.pdf"


@pytest.fixture(scope="module")
def dev() -> dict[str, dict[str, Any]]:
    """The dev questions by id."""
    if not EVAL.is_file():
        pytest.skip(f"the dev questions are not at {EVAL}")
    rows = [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Any:
    """The app with a workspace 'Dev' holding the three excerpts, ingested with their graph."""
    service = build(tmp_path_factory.mktemp("modes") / "data")
    service.workspaces.create("Dev")
    for doc, (first, last) in EXCERPTS.items():
        report = service.documents.ingest("Dev", excerpt(doc, first, last), excerpt_name(doc))
        assert report.status == "ready", report.error
    assert service.graph.entities(service.workspaces.get("Dev").id), "the ingestion built no entity graph"
    return service


def on_gold_page(citation: Any, row: dict[str, Any]) -> bool:
    first = EXCERPTS[row["doc"]][0]
    pages = [page - first + 1 for page in row["pages"]]
    return citation.document == excerpt_name(row["doc"]) and any(citation.page_start <= p <= citation.page_end for p in pages)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_answers_dev_questions_with_citations_of_real_chunks(
    app: Any, dev: dict[str, dict[str, Any]], mode: str
) -> None:
    workspace = app.workspaces.get("Dev")
    for qid in QUESTIONS:
        answer = app.answers.ask("Dev", dev[qid]["question"], mode=mode)
        assert answer.mode == mode and not answer.refused and answer.citations, (mode, qid, answer.text)
        # The lead quote, or the next (a near tie: in global mode gdev-033's page-1 overview of AF types edges out
        # the page-2 definition by its block's rank), is on a gold page.
        assert any(on_gold_page(c, dev[qid]) for c in answer.citations[:2]), (mode, qid, answer.citations[:2])
        chunks = app.catalog.get_chunks([c.chunk_id for c in answer.citations])
        for citation in answer.citations:
            chunk = chunks[citation.chunk_id]
            assert chunk.document_id == citation.document_id and citation.rects
            assert app.catalog.get_document(chunk.document_id).workspace_id == workspace.id
            assert f"[{citation.n}]" in answer.text


def test_graph_modes_list_the_entities_they_used_and_keep_them(app: Any, dev: dict[str, dict[str, Any]]) -> None:
    workspace = app.workspaces.get("Dev")
    answer = app.answers.ask("Dev", dev["gdev-001"]["question"], mode="hybrid")
    names = {e.name.lower() for e in answer.entities}
    assert "carotid sinus hypersensitivity" in names, names
    assert all(e.workspace_id == workspace.id and e.workspace == "Dev" and e.type in ENTITY_TYPES for e in answer.entities)
    named = {e.id for e in app.graph.match_question(workspace.id, dev["gdev-001"]["question"])}
    assert all(e.id in named or e.citations for e in answer.entities)  # report entities only when cited
    cited = [e for e in answer.entities if e.citations]
    assert cited, "no listed entity is traced to a citation"
    by_n = {c.n: c for c in answer.citations}
    for entity in cited:
        mentioned = {m.chunk_id for m in app.graph.mentions(workspace.id, entity.id)}
        assert all(by_n[n].chunk_id in mentioned for n in entity.citations), entity
    assert answer.to_json()["entities"][0]["name"] == answer.entities[0].name
    chat = app.chats.create_chat("Dev")
    app.chats.record_answer("Dev", chat.id, answer)
    kept = app.chats.chat_messages("Dev", chat.id)[0].answer
    assert kept.entities == answer.entities and kept.mode == "hybrid"
    exported = app.chats.export_chat("Dev", chat.id)
    assert "**Entities (hybrid mode)**:" in exported and "carotid sinus hypersensitivity (" in exported
    assert Answer.from_record(json.loads(json.dumps(answer.to_record()))).entities == answer.entities


def test_naive_direct_hits_are_the_hybrid_search(app: Any, dev: dict[str, dict[str, Any]]) -> None:
    question = dev["gdev-001"]["question"]
    found = app.answers.modes.retrieve(search_scope(app.catalog, "Dev", None), question, "naive", top_k=8)
    direct = [hit.chunk.id for hit in found.hits if hit.origin == "direct"]
    assert direct == [hit.chunk.id for hit in app.search.search("Dev", question, 8).hits]


@pytest.mark.parametrize("mode", MODES)
def test_expansion_is_scored_below_every_direct_hit(app: Any, dev: dict[str, dict[str, Any]], mode: str) -> None:
    workspace = app.workspaces.get("Dev")
    found = app.answers.modes.retrieve(search_scope(app.catalog, "Dev", None), dev["gdev-002"]["question"], mode, top_k=6)
    direct = [hit for hit in found.hits if hit.origin == "direct"]
    expanded = found.hits[len(direct):]
    assert len(direct) == 6 and expanded, [hit.origin for hit in found.hits]
    assert all(hit.origin in ("adjacent", "entity") for hit in expanded)
    assert max(hit.score for hit in expanded) < min(hit.score for hit in direct)
    assert len({hit.chunk.id for hit in found.hits}) == len(found.hits)
    neighbours = {(h.chunk.document_id, h.chunk.ordinal + step) for h in direct[:3] for step in (-1, 1)}
    entity_chunks = {m.chunk_id for e in found.entities for m in app.graph.mentions(workspace.id, e.id)}
    for hit in expanded:
        if hit.origin == "adjacent":
            assert (hit.chunk.document_id, hit.chunk.ordinal) in neighbours
        else:
            assert hit.chunk.id in entity_chunks


def test_seq_ret_routes_to_the_documents_whose_summaries_match(app: Any, dev: dict[str, dict[str, Any]]) -> None:
    documents = {d.name: d.id for d in app.documents.list("Dev")}
    routed = ModeRetriever(app.search, app.catalog, app.embedder, app.graph, ModeOptions(seq_ret=True, seq_ret_min_documents=3, seq_ret_documents=1))
    for qid in ("gdev-022", "gdev-033"):
        found = routed.retrieve(search_scope(app.catalog, "Dev", None), dev[qid]["question"], "hybrid")
        gold = documents[excerpt_name(dev[qid]["doc"])]
        assert found.document_ids == [gold], (qid, found.document_ids)
        assert {hit.chunk.document_id for hit in found.hits} == {gold}
    few = ModeRetriever(app.search, app.catalog, app.embedder, app.graph, ModeOptions(seq_ret=True, seq_ret_min_documents=4))
    assert few.retrieve(search_scope(app.catalog, "Dev", None), dev["gdev-022"]["question"], "hybrid").document_ids is None


def test_local_mode_puts_passages_of_the_most_specific_entity_first(app: Any, dev: dict[str, dict[str, Any]]) -> None:
    workspace = app.workspaces.get("Dev")
    found = app.answers.modes.retrieve(search_scope(app.catalog, "Dev", None), dev["gdev-033"]["question"], "local", top_k=8)
    assert {"paroxysmal atrial fibrillation", "atrial fibrillation"} <= {e.name for e in found.entities}
    specific = min(found.entities, key=lambda e: e.mentions)
    mentioned = {m.chunk_id for m in app.graph.mentions(workspace.id, specific.id)}
    graph_first = next(hit for hit in found.hits if hit.ranks.get("graph") == 1)
    assert graph_first.chunk.id in mentioned
    assert found.hits[0].chunk.id in mentioned and "阵发性房颤" in found.hits[0].chunk.text
