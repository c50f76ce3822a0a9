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
