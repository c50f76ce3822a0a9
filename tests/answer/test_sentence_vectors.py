"""Sentence vectors made at ingestion: once a document is ready, asking about it embeds no sentence (only the
question), in English and Chinese; with the stage turned off, an ask embeds the sentences it meets."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_settings

QUESTIONS = [
    "What is recommended for patients with hypertension and diabetes?",
    "How should the physician weigh competing recommendations for a patient with several conditions?",
    "心房颤动患者如何进行抗凝治疗？",
    "What does the guideline say about heart rate control?",
]


def cached(path: Path) -> int:
    """Vectors held in an embedding cache file."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[bool], tuple[Any, list[Path]]]]:
    """fresh(stage_on) -> (app, its embedding cache files): an app whose embedders start with empty caches of
    their own (the session's shared cache would already hold other tests' sentences)."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.embedding.embedder import Embedder
    from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache

    opened: list[Any] = []

    def _fresh(stage_on: bool) -> tuple[Any, list[Path]]:
        folder = tmp_path_factory.mktemp("sentence-vectors")
        settings = make_settings(folder / "data")
        settings.answers.sentence_vectors_at_ingest = stage_on
        cache = SqliteEmbeddingCache(folder / "main-embeddings.sqlite")
        app = build_app(settings, embedder=Embedder(settings.embedding, cache))
        opened.append((app, cache))
        return app, [folder / "main-embeddings.sqlite", folder / "data" / "embeddings.sqlite"]

    yield _fresh
    for app, cache in opened:
        app.catalog.close()
        cache.close()


def ingest(app: Any, excerpt: Callable[..., Path], guidelines: Path) -> None:
    app.workspaces.create("Sentences")
    sources = {"arnett-2014-guideline-strategies.pdf": guidelines / "arnett-2014-guideline-strategies.pdf",
               "zh-acute-af-ed-2024.pdf": excerpt("zh-acute-af-ed-2024.pdf", 3, 4)}
    for name, path in sources.items():
        assert app.documents.ingest("Sentences", path, name).status == "ready"


def test_an_ask_after_ingestion_embeds_no_sentence(
    fresh: Callable[[bool], tuple[Any, list[Path]]], excerpt: Callable[..., Path], guidelines: Path
) -> None:
    app, caches = fresh(True)
    ingest(app, excerpt, guidelines)
    before = [cached(path) for path in caches]
    assert all(before)
    for question in QUESTIONS:
        app.answers.ask("Sentences", question)
        assert [cached(path) for path in caches] == before, question
    # The asks did compare sentences with the question, by both embedders (`explain` reads what an ask reads).
    pool = app.answers.explain("Sentences", QUESTIONS[0]).pool
    assert any(c.features.get("semantic_main") for c in pool) and any(c.features.get("semantic_multi") for c in pool)


def test_without_the_stage_an_ask_embeds_its_sentences(
    fresh: Callable[[bool], tuple[Any, list[Path]]], excerpt: Callable[..., Path], guidelines: Path
) -> None:
    app, caches = fresh(False)
    ingest(app, excerpt, guidelines)
    before = [cached(path) for path in caches]
    for question in QUESTIONS:
        app.answers.ask("Sentences", question)
    after = [cached(path) for path in caches]
    assert after[0] > before[0] and after[1] > before[1]


def test_the_stage_reports_its_progress(
    fresh: Callable[[bool], tuple[Any, list[Path]]], excerpt: Callable[..., Path]
) -> None:
    app, _ = fresh(True)
    app.workspaces.create("Progress")
    seen: list[tuple[str, int, int]] = []
    document = app.documents.ingest(
        "Progress", excerpt("arnett-2014-guideline-strategies.pdf", 1, 2), "arnett.pdf",
        on_progress=lambda p: seen.append((p.stage, p.done, p.total)),
    )
    assert document.status == "ready"
    steps = [(done, total) for stage, done, total in seen if stage == "sentences"]
    assert steps and steps[-1][0] == steps[-1][1] > 0



def test_both_embedders_read_each_group_so_the_count_moves_at_one_pace(
    fresh: Callable[[bool], tuple[Any, list[Path]]], excerpt: Callable[..., Path], tmp_path: Path
) -> None:
    """Issue 29 item 4: the time left is measured on the count's pace, so at the count's halfway point the
    multilingual embedder (~4x faster) has already read sentences and the main one has sentences left (read one
    after the other, the first half was all the slow one's, and the time left shown then ~3x too long)."""
    from workspace_app.answer.extractive import scored_texts
    from workspace_app.answer.sentence_vectors import SentenceVectorsStage
    from workspace_app.embedding.embedder import Embedder
    from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache

    app, _ = fresh(False)
    app.workspaces.create("Pace")
    document = app.documents.ingest("Pace", excerpt("arnett-2014-guideline-strategies.pdf", 1, 2), "arnett.pdf")
    chunks = [hit.chunk for hit in app.search.search("Pace", "guideline", top_k=50).hits]
    embedding = app.settings.embedding
    paths = [tmp_path / "main.sqlite", tmp_path / "multi.sqlite"]
    caches = [SqliteEmbeddingCache(path) for path in paths]
    multi_model = {"model": embedding.crosslingual_model, "backend": "torch", "query_prefix": "", "passage_prefix": ""}
    main, multi = Embedder(embedding, caches[0]), Embedder(embedding.model_copy(update=multi_model), caches[1])
    halfway: list[list[int]] = []

    def report(done: int, total: int) -> None:
        if 2 * done >= total and not halfway:
            halfway.append([cached(path) for path in paths])

    try:
        SentenceVectorsStage(main, multi, group=8).run(document, chunks, report)
    finally:
        for cache in caches:
            cache.close()
    end = [cached(path) for path in paths]
    assert len({t for c in chunks for t in scored_texts(c)}) > 32, "enough sentences for several groups"
    [middle] = halfway
    assert 0 < middle[1] < end[1], "the multilingual embedder read sentences in the first half, and the second"
    assert 0 < middle[0] < end[0], "the main embedder read sentences in the first half, and the second"
