"""Builds the concrete backends from settings: the one place that knows which ones we use."""

from __future__ import annotations

import json
import os
from pathlib import Path

from storage.sqlite.embedding_cache import SqliteEmbeddingCache
from storage.sqlite.catalog import SqliteCatalog
from storage.files import LocalFileStore
from storage.sqlite.graph import SqliteGraphStore
from storage.queue import HueyJobQueue, open_huey
from storage.chroma import ChromaVectorIndex, open_chroma
from workspace_app.answer.service import AnswerService
from workspace_app.config import Settings
from workspace_app.embedding.embedder import Embedder
from workspace_app.graph.llm import LlmEntityExtractor, community_summarizer
from workspace_app.graph.service import GraphService
from workspace_app.service import WorkspaceService

RUN_FILE = "run/serve.json"


def running_chroma_url(data_dir: Path) -> str | None:
    """The Chroma URL of a `serve` that is running on this data dir, if any."""
    path = data_dir / RUN_FILE
    try:
        info = json.loads(path.read_text())
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    url = info.get("chroma_url")
    return str(url) if url else None


def chroma_location(settings: Settings) -> tuple[Path | None, str | None]:
    """(embedded path, server URL): a configured URL first, then a running `serve`, else embedded."""
    data_dir = settings.storage.data_dir
    url = settings.storage.chroma_url or running_chroma_url(data_dir)
    return (None, url) if url else (data_dir / "chroma", None)


def build_queue(settings: Settings) -> HueyJobQueue:
    """The ingestion queue: SQLite in the data dir, or Redis, as configured."""
    return HueyJobQueue(open_huey(settings.queue, settings.storage.data_dir))


def build_service(settings: Settings, embedder: Embedder | None = None) -> WorkspaceService:
    """A service on the data dir named in the settings."""
    data_dir = settings.storage.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    catalog = SqliteCatalog(data_dir / "catalog.sqlite")
    path, url = chroma_location(settings)
    vectors = ChromaVectorIndex(open_chroma(path, url))
    files = LocalFileStore(data_dir / "files")
    if embedder is None:
        embedder = Embedder(settings.embedding, SqliteEmbeddingCache(data_dir / "embeddings.sqlite"))
    return WorkspaceService(settings, catalog, vectors, files, embedder, build_queue(settings), build_graph(settings, catalog))


def build_graph(settings: Settings, catalog: SqliteCatalog) -> GraphService:
    """The entity graph on the catalog: offline extraction, or the configured language model's (cached)."""
    store = SqliteGraphStore(catalog)
    if not (settings.llm.api_key or settings.llm.base_url):
        return GraphService(store, catalog)
    return GraphService(store, catalog, LlmEntityExtractor(settings.llm, store), community_summarizer(settings.llm, store))


def build_answer_service(service: WorkspaceService) -> AnswerService:
    """Answers, chats and notes next to a workspace service (its catalog keeps the chats)."""
    if not isinstance(service.catalog, SqliteCatalog):
        raise TypeError("chats and notes need the SQLite catalog")
    return AnswerService(service, service.catalog, service.catalog)
