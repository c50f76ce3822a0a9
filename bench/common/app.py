"""The one place where the benchmarks build the application (and the only bench module importing the wiring).

Every benchmark gets the app through `open_app(settings, embedder=None, *, embedding_cache=None)`, which returns
the application object (`workspace_app.app.App`: `.workspaces`, `.documents`, `.search`, `.answers`, `.graph`,
`.catalog`, `.embedder`, `.settings`) with its answerer offline. `vector_index(app)` is the one place that reaches
past the App for the vector index (bench.embedder and bench.ingest read and rewrite vectors). When the way the
application is built changes, only this module changes.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workspace_app.app import App as BenchApp
else:
    BenchApp = Any  # what open_app returns (workspace_app.app.App); the core is imported only when a bench runs


def open_app(settings: Any, embedder: Any = None, *, embedding_cache: Path | None = None) -> BenchApp:
    """The application on `settings.storage.data_dir`.

    `embedder` replaces the one the wiring would build; `embedding_cache` (when no embedder is given) builds one
    whose embedding cache is that SQLite file instead of the data dir's. The answerer is always the offline
    extractive one: that is what the benchmarks measure, whatever the environment configures.
    """
    from workspace_app.adapters.wiring import build_app

    if embedder is None and embedding_cache is not None:
        embedder = new_embedder(settings.embedding, embedding_cache)
    app = build_app(settings, embedder)
    app.answers.llm = None
    return app


def vector_index(app: BenchApp) -> Any:
    """The app's vector index (the benchmarks that inspect vectors use this)."""
    return app.vectors


def query_embedders(app: BenchApp) -> list[Any]:
    """Every embedder a search embeds its query with: the main one and the cross-language index's, if any (a
    reach past the App, like `vector_index`: the latency bench empties their recent-query memos)."""
    crosslingual = getattr(app.search._retriever, "_crosslingual", None)
    return [app.embedder] + ([crosslingual.embedder] if crosslingual is not None else [])


def new_embedder(embedding_settings: Any, cache: Path | None = None) -> Any:
    """An embedder outside any app (bench.embedder compares backends), with a SQLite embedding cache if given."""
    from workspace_app.embedding.embedder import Embedder

    if cache is None:
        return Embedder(embedding_settings)
    return Embedder(embedding_settings, embedding_cache_class()(cache))


def embedding_cache_class() -> type:
    from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache

    return SqliteEmbeddingCache


def embedding_cache_source() -> Path:
    """The source file of the embedding cache (the shared embedding cache's fingerprint hashes it)."""
    return Path(inspect.getsourcefile(embedding_cache_class()) or "")


def bench_settings(data_dir: Path) -> Any:
    """App settings for a bench data dir (never a remote Chroma: the bench owns its stores)."""
    from workspace_app.config import load_settings

    settings = load_settings(data_dir)
    settings.storage.chroma_url = None
    return settings


def load_app_modules() -> None:
    """Import the application's modules, so that the code fingerprinted next is the code in memory."""
    import workspace_app.adapters.wiring  # noqa: F401


def keywords_on_postgres(app: BenchApp, url: str) -> Any:
    """Serve the app's chunk reads, keyword search and abbreviations from a PostgreSQL catalog holding a copy of the
    app's SQLite catalog (its workspaces, documents, chunks with the pipeline's index terms, abbreviations), so a
    retrieval bench measures PostgreSQL's BM25 on the cached workspace (same chunk ids, so the same vectors) with
    everything else unchanged. Workspaces of the same ids already in that database are replaced. A reach past the
    App (the retriever's chunk repository), like `vector_index`. Returns the PostgreSQL catalog."""
    from workspace_app.ingest.pipeline import keyword_texts
    from workspace_app.storage.postgres.catalog import PostgresCatalog

    source, target = app.catalog, PostgresCatalog(url)
    pairs = source.database.query("SELECT document_id, short, long FROM abbreviations")
    for workspace in source.list_workspaces():
        target.delete_workspace(workspace.id)
        target.workspaces.add_workspace(workspace)
        for document in source.list_documents(workspace.id):
            target.add_document(document)
            chunks = list(source.get_chunks(source.document_chunk_ids(document.id)).values())
            chunks.sort(key=lambda chunk: chunk.ordinal)
            target.replace_chunks(document.id, workspace.id, chunks, keyword_texts(chunks))
            defined = {row["short"]: row["long"] for row in pairs if row["document_id"] == document.id}
            target.replace_abbreviations(document.id, workspace.id, defined)
    app.search._retriever._chunks = target
    return target
