"""Search over a workspace: resolve the scope once, run the hybrid retriever, name each hit's document."""

from __future__ import annotations

import time
from collections.abc import Sequence

from workspace_app.models.documents import SearchHit, SearchResult
from workspace_app.retrieval.bilingual import Translator
from workspace_app.retrieval.hybrid import HybridRetriever
from workspace_app.retrieval.scope import Scope, ScopeCatalog, search_scope

# dense vectors, BM25 of the question's terms, BM25 of the other-language names of its concepts, the multilingual
# index (hybrid.py): what "hybrid" means in the CLI, the API and the benchmarks
METHODS = ("dense", "sparse", "translated", "crosslingual")


class SearchService:
    """Hybrid search (dense + BM25, fused, optionally reranked) inside a workspace or some of its documents."""

    def __init__(self, catalog: ScopeCatalog, retriever: HybridRetriever, default_top_k: int) -> None:
        self._catalog = catalog
        self._retriever = retriever
        self._default_top_k = default_top_k

    @property
    def translator(self) -> Translator:
        """The retriever's English <-> Chinese concept names (the answer package matches quotes with it)."""
        return self._retriever.translator

    def search(
        self, workspace: str, query: str, top_k: int | None = None, documents: Sequence[str] | None = None,
        methods: Sequence[str] = METHODS,
    ) -> SearchResult:
        """Hybrid search over a workspace, optionally restricted to some documents (names, ids or sha256)."""
        started = time.perf_counter()
        scope = search_scope(self._catalog, workspace, documents)
        result = self.search_in(scope, query, top_k, methods)
        result.timings_ms["total"] = (time.perf_counter() - started) * 1000
        return result

    def search_in(
        self, scope: Scope, query: str, top_k: int | None = None, methods: Sequence[str] = METHODS
    ) -> SearchResult:
        """Search a scope already resolved (the answerer's and the query modes' way in)."""
        started = time.perf_counter()
        k = top_k or self._default_top_k
        ranked, timings = self._retriever.search(
            scope.workspace.id, query, k, scope.document_ids, methods, keyword_only_ids=scope.partial_ids
        )
        hits = [
            SearchHit(rank, item.chunk, scope.names.get(item.chunk.document_id, "?"), item.score, item.ranks)
            for rank, item in enumerate(ranked, start=1)
        ]
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResult(query, hits, timings)
