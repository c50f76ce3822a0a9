"""Fixtures shared by every test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from catalogs import catalog_store, module_catalog_environ  # noqa: F401  (SQLite, and PostgreSQL marked `postgres`)
from postgres_cluster import postgres_cluster, postgres_url  # noqa: F401  (fixtures for the `postgres` tests)
from redis_server import redis_url  # noqa: F401  (a redis-server per test module, for the Redis queue tests)
from s3_server import s3_bucket, s3_endpoint  # noqa: F401  (an S3-compatible server per module, for shared files)


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's WORKSPACE_* or OPENAI_* settings (as httpx's `clean_environ`)."""
    for name in list(os.environ):
        if name.startswith(("WORKSPACE_", "OPENAI_")):
            monkeypatch.delenv(name)


# Real PDFs, the real embedding model and real storage (SQLite + embedded Chroma) under tmp_path.

REPO = Path(__file__).resolve().parents[1]
GUIDELINES = REPO / ".." / "shared" / "corpus" / "guidelines"


def _without_app_environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}


def make_settings(data_dir: Path, **ingest: Any) -> Any:
    """Default settings (no environment, no .env) on `data_dir`, with some ingest settings changed."""
    from workspace_app.config import Settings

    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("WORKSPACE_", "OPENAI_")):
                patch.delenv(name)
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = data_dir
    for key, value in ingest.items():
        setattr(settings.ingest, key, value)
    return settings


@pytest.fixture(scope="session")
def guidelines() -> Path:
    """The read-only guideline corpus (never copied into the repo)."""
    if not (GUIDELINES / "MANIFEST.md").is_file():
        pytest.skip(f"the guideline corpus is not at {GUIDELINES}")
    return GUIDELINES


@pytest.fixture(scope="session")
def embedding_cache_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SQLite file of the session embedder's cache."""
    return tmp_path_factory.mktemp("embedding-cache") / "embeddings.sqlite"


@pytest.fixture(scope="session")
def embedder(embedding_cache_file: Path) -> Iterator[Any]:
    """The real MiniLM embedder, loaded once per session, with an embedding cache shared by all tests."""
    from workspace_app.embedding.embedder import Embedder
    from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache

    cache = SqliteEmbeddingCache(embedding_cache_file)
    shared = Embedder(make_settings(Path("unused")).embedding, cache)
    assert shared.dimension == 384  # loads the model now
    yield shared
    cache.close()


@pytest.fixture(scope="session")
def build(embedder: Any) -> Iterator[Callable[..., Any]]:
    """Build a WorkspaceService on a data dir with the shared embedder: build(data_dir, catalog_url="",
    queue_url="", **ingest_settings)."""
    from workspace_app.adapters.wiring import build_app

    services: list[Any] = []

    def _build(data_dir: Path, catalog_url: str = "", queue_url: str = "", **ingest: Any) -> Any:
        settings = make_settings(data_dir, **ingest)
        settings.catalog.url = catalog_url  # empty: the SQLite catalog in the data dir
        if queue_url:  # a Redis queue at this URL; else the SQLite one in the data dir
            settings.queue.backend, settings.queue.redis_url = "redis", queue_url
        service = build_app(settings, embedder=embedder)
        services.append(service)
        return service

    yield _build
    for service in services:
        service.catalog.close()  # closing twice is harmless


@pytest.fixture(scope="session")
def excerpt(guidelines: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int, int], Path]:
    """excerpt(name, first, last): a new PDF of 1-based pages first..last of a corpus PDF (made once)."""
    import pymupdf

    folder = tmp_path_factory.mktemp("excerpts")

    def _excerpt(name: str, first: int, last: int) -> Path:
        target = folder / f"{Path(name).stem}-p{first}-{last}.pdf"
        if not target.exists():
            with pymupdf.open(guidelines / name) as source, pymupdf.open() as new:
                new.insert_pdf(source, from_page=first - 1, to_page=last - 1)
                new.save(target)
        return target

    return _excerpt


@pytest.fixture(scope="session")
def chunk_pdf(embedder: Any) -> Callable[[Path], list[Any]]:
    """chunk_pdf(path): the chunk drafts of a PDF as ingestion makes them (parse + chunk, no embedding)."""
    from workspace_app.ingest.chunking import chunk_paragraphs
    from workspace_app.ingest.readers.pdf import parse_pdf

    ingest = make_settings(Path("unused")).ingest
    done: dict[Path, list[Any]] = {}

    def _chunk(path: Path) -> list[Any]:
        if path not in done:
            parsed = parse_pdf(path, path.name)
            size = min(ingest.chunk_tokens, embedder.max_tokens - 24)
            done[path] = chunk_paragraphs(parsed.paragraphs, embedder.count_tokens, size, ingest.chunk_overlap_tokens)
        return done[path]

    return _chunk


def _cli_command() -> list[str]:
    script = Path(sys.executable).parent / "workspace-app"
    return [str(script)] if script.exists() else [sys.executable, "-m", "workspace_app.adapters.cli"]


def cli_environ(**extra: str) -> dict[str, str]:
    """The environment for a CLI subprocess: no developer settings, offline model loading."""
    env = _without_app_environ()
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"})
    env.update(extra)
    return env


def cli_args(data_dir: Path, *args: str | Path) -> list[str]:
    """The argv of `workspace-app --data-dir DATA ARGS...`."""
    return [*_cli_command(), "--data-dir", str(data_dir), *map(str, args)]


@pytest.fixture(scope="session")
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """cli(data_dir, *args, timeout=...): run `workspace-app` in a subprocess and capture its output."""

    def _run(data_dir: Path, *args: str | Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        return subprocess.run(
            cli_args(data_dir, *args), capture_output=True, text=True, timeout=timeout, env=cli_environ(**env),
            cwd=data_dir.parent, check=False,
        )

    return _run


@pytest.fixture(scope="session")
def cli_popen() -> Callable[..., subprocess.Popen[str]]:
    """cli_popen(data_dir, *args, **env): start `workspace-app` without waiting; stdout is piped, stderr (progress
    bars) goes to `cli-stderr.log` beside the data dir so a full pipe never blocks the child."""

    def _start(data_dir: Path, *args: str | Path, **env: str) -> subprocess.Popen[str]:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        with (data_dir.parent / "cli-stderr.log").open("a", encoding="utf-8") as log:
            return subprocess.Popen(
                cli_args(data_dir, *args), stdout=subprocess.PIPE, stderr=log, text=True,
                env=cli_environ(**env), cwd=data_dir.parent,
            )

    return _start
