"""Entity extraction and community summaries by a language model, against a local server speaking the OpenAI
chat-completions protocol: typed entities with descriptions and typed relations merged with the offline finds,
replies cached in the catalog (no call on re-ingestion), offline fallback when the model fails."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_entities import chunks_of

from workspace_app.config import LlmSettings
from workspace_app.graph.llm import PROMPT_VERSION, LlmEntityExtractor, cache_key, community_summarizer
from workspace_app.graph.service import GraphService
from workspace_app.ingest.pipeline import keyword_texts
from workspace_app.models.documents import Chunk, Document
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.storage.sqlite.graph import SqliteGraphStore

_spec = importlib.util.spec_from_file_location("fake_openai", Path(__file__).parents[1] / "fake_openai.py")
assert _spec is not None and _spec.loader is not None
fake_openai = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_openai)

DESCRIPTION = "A cardiac myosin inhibitor that reduces LVOT obstruction."


def reply(request: dict[str, Any]) -> str:
    """Extraction JSON naming mavacamten where the chunk does; a fixed summary for summary prompts."""
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if not system.startswith("You extract"):
        return "Mavacamten and beta blockers relieve obstruction in HCM."
    if "mavacamten" not in user.lower():
        return json.dumps({"entities": [], "relations": []})
    return "```json\n" + json.dumps({
        "entities": [
            {"name": "mavacamten", "type": "drug", "description": DESCRIPTION},
            {"name": "obstructive HCM", "type": "disease", "description": "HCM with LVOT obstruction."},
            {"name": "septal reduction", "type": "procedure", "description": "Myectomy or ablation."},
        ],
        "relations": [{"source": "mavacamten", "target": "obstructive HCM", "type": "treats"}],
    }) + "\n```"


@pytest.fixture
def fake() -> Iterator[Any]:
    with fake_openai.fake_openai_server() as server:
        server.replies = [reply]
        yield server


@pytest.fixture(scope="module")
def chunks(excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]) -> list[Chunk]:
    """Pages 38-39 of the HCM guideline (mavacamten in some chunks, not all)."""
    return chunks_of(chunk_pdf(excerpt("ommen-2024-hcm.pdf", 38, 39)), "hcmdoc")


def settings(url: str, model: str = "graph-model") -> LlmSettings:
    return LlmSettings(api_key="test-key", base_url=url, model=model, timeout_s=5)


def test_entities_and_typed_relations_from_the_model_are_merged_and_cached(
    tmp_path: Path, fake: Any, chunks: list[Chunk]
) -> None:
    store = SqliteGraphStore(SqliteCatalog(tmp_path / "catalog.sqlite").database)
    body = [c for c in chunks if c.kind == "body"]
    found = LlmEntityExtractor(settings(fake.url), store).extract(chunks)
    assert len(fake.requests) == len(body) == len(found)
    assert sorted(r["body"]["messages"][-1]["content"] for r in fake.requests) == sorted(c.text for c in body)
    with_drug = [f for f in found if any(e.key == "mavacamten" for e in f.entities)]
    assert with_drug
    for chunk in with_drug:
        drug = next(e for e in chunk.entities if e.key == "mavacamten")
        assert drug.type == "drug" and drug.description == DESCRIPTION
        assert any(r.type == "treats" and {r.source, r.target} == {"mavacamten", "obstructive hypertrophic cardiomyopathy"}
                   for r in chunk.relations), "the relation uses the lexicon keys of both entities"
        assert any(e.key == "septal reduction" and e.type == "procedure" for e in chunk.entities)
    offline_only = [f for f in found if f not in with_drug]
    assert any(f.entities for f in offline_only), "chunks the model found nothing in keep the offline entities"

    calls = len(fake.requests)
    again = LlmEntityExtractor(settings(fake.url), store).extract(chunks)
    assert len(fake.requests) == calls, "re-ingesting the same text asks nothing"
    assert again == found
    LlmEntityExtractor(settings(fake.url, "another-model"), store).extract(chunks[:2])
    assert len(fake.requests) > calls, "the cache is per model"


def test_a_failing_model_leaves_the_offline_entities_and_caches_nothing(tmp_path: Path, fake: Any, chunks: list[Chunk]) -> None:
    store = SqliteGraphStore(SqliteCatalog(tmp_path / "catalog.sqlite").database)
    fake.status = 500
    some = [c for c in chunks if c.kind == "body" and "mavacamten" in c.text.lower()][:1]
    found = LlmEntityExtractor(settings(fake.url), store).extract(some)
    drug = next(e for e in found[0].entities if e.key == "mavacamten")
    assert drug.description == "" and fake.requests
    assert store.cached_response("graph-model", cache_key(PROMPT_VERSION, some[0].text)) is None


def test_graph_service_stores_model_relations_and_writes_community_summaries(
    tmp_path: Path, fake: Any, chunks: list[Chunk]
) -> None:
    catalog = SqliteCatalog(tmp_path / "catalog.sqlite")
    store = SqliteGraphStore(catalog.database)
    workspace = catalog.create_workspace("LLM graph")
    document = Document(
        id="hcmdoc", workspace_id=workspace.id, name="hcm.pdf", sha256="0" * 64, size_bytes=1, pages=2, chunks=len(chunks),
        status="ready", stage="ready", progress=1.0, error=None, added_at="2026-01-01T00:00:00+00:00",
    )
    catalog.add_document(document)
    catalog.replace_chunks(
        document.id, workspace.id, chunks, keyword_texts(chunks)
    )
    llm = settings(fake.url)
    graph = GraphService(store, catalog, LlmEntityExtractor(llm, store), community_summarizer(llm, store))
    graph.index_document(document, chunks)
    treats = [r for r in graph.relations(workspace.id) if r.type == "treats"]
    assert treats and treats[0].source == "drug:mavacamten"
    assert treats[0].target == "disease:obstructive hypertrophic cardiomyopathy"
    assert set(treats[0].chunk_ids) <= set(catalog.document_chunk_ids(document.id))
    assert graph.get_entity(workspace.id, "drug:mavacamten").description == DESCRIPTION  # type: ignore[union-attr]
    reports = graph.communities(workspace.id)
    assert reports and all(r.summary == "Mavacamten and beta blockers relieve obstruction in HCM." for r in reports)
    calls = len(fake.requests)
    graph.index_document(document, chunks)
    assert len(fake.requests) == calls, "extraction and summaries come from the cache the second time"
