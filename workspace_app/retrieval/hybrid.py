"""Hybrid retrieval: dense (vector index) and sparse (BM25) candidates fused (z-score or reciprocal rank fusion).

Cross-language: the `Translator` gives the other-language names of the concepts a query names (an English
question's Chinese names, a Chinese question's English names); they are searched in the keyword index as a
second BM25 list (method `translated`) fused beside the others, so an English question reaches a Chinese
guideline's passages and the reverse. `sparse` alone stays the question's own terms. A second, multilingual
embedder's index (`CrossLanguageIndex`, method `crosslingual`) ranks passages of either language by meaning.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from storage.base import ChunkRepository, VectorIndex
from workspace_app.config import RetrievalSettings
from workspace_app.embedding.embedder import Embedder
from workspace_app.models.documents import Chunk
from workspace_app.retrieval.bilingual import NoTranslator, Translator
from workspace_app.retrieval.fusion import Fused, fuse_rankings, fuse_scores
from workspace_app.retrieval.rerank import Reranker
from workspace_app.text.analyzer import expand_with_abbreviations, query_terms
from workspace_app.text.cjk import is_mostly_cjk

TRANSLATED = "translated"
CROSSLINGUAL = "crosslingual"


@dataclass(frozen=True)
class CrossLanguageIndex:
    """The multilingual embedder and the companion vector index it filled at ingestion."""

    embedder: Embedder
    vectors: VectorIndex


@dataclass
class RankedChunk:
    """A chunk with its fused score and its rank in each method."""

    chunk: Chunk
    score: float
    ranks: dict[str, int | None] = field(default_factory=dict)


class HybridRetriever:
    """Dense + BM25 + RRF (+ an optional reranker) over one workspace."""

    def __init__(
        self, embedder: Embedder, vectors: VectorIndex, chunks: ChunkRepository, settings: RetrievalSettings,
        reranker: Reranker | None = None, translator: Translator | None = None,
        crosslingual: CrossLanguageIndex | None = None,
    ) -> None:
        self._embedder = embedder
        self._vectors = vectors
        self._chunks = chunks
        self._settings = settings
        self._reranker = reranker
        self.translator: Translator = translator or NoTranslator()
        self._crosslingual = crosslingual

    def search(
        self, workspace_id: str, query: str, top_k: int, document_ids: Sequence[str] | None,
        methods: Sequence[str] = ("dense", "sparse", TRANSLATED, CROSSLINGUAL),
    ) -> tuple[list[RankedChunk], dict[str, float]]:
        """Best chunks for the query, and milliseconds spent per stage."""
        timings: dict[str, float] = {}
        scored: dict[str, list[tuple[str, float]]] = {}
        if "dense" in methods:
            started = time.perf_counter()
            vector = self._embedder.embed_query(query)
            timings["embed_query"] = _ms(started)
            started = time.perf_counter()
            scored["dense"] = self._vectors.query(workspace_id, vector.tolist(), self._settings.dense_k, document_ids)
            timings["dense"] = _ms(started)
        if CROSSLINGUAL in methods and self._crosslingual and self._weights(query)[CROSSLINGUAL] > 0:
            started = time.perf_counter()
            index = self._crosslingual
            vector = index.embedder.embed_query(query)
            scored[CROSSLINGUAL] = index.vectors.query(workspace_id, vector.tolist(), self._settings.dense_k, document_ids)
            timings[CROSSLINGUAL] = _ms(started)
        if "sparse" in methods or TRANSLATED in methods:
            started = time.perf_counter()
            terms = expand_with_abbreviations(query, query_terms(query), self._chunks.workspace_abbreviations(workspace_id))
            if "sparse" in methods:
                scored["sparse"] = self._chunks.keyword_search(workspace_id, terms, self._settings.sparse_k, document_ids)
            wanted = TRANSLATED in methods and self._weights(query)[TRANSLATED] > 0
            translated = self._translated_terms(query, terms) if wanted else []
            if translated:
                scored[TRANSLATED] = self._chunks.keyword_search(
                    workspace_id, translated, self._settings.sparse_k, document_ids
                )
            timings["sparse"] = _ms(started)
        started = time.perf_counter()
        candidates = self._chunks.get_chunks(list(dict.fromkeys(cid for items in scored.values() for cid, _ in items)))
        if CROSSLINGUAL in scored:
            scored[CROSSLINGUAL] = _other_language(query, scored[CROSSLINGUAL], candidates)
        fused = self._fuse(query, scored, candidates)
        depth = self._settings.rerank_k if self._reranker else top_k
        ranked = [RankedChunk(candidates[cid], score, ranks) for cid, score, ranks in fused[:depth]]
        timings["fuse"] = _ms(started)
        if self._reranker and ranked:
            started = time.perf_counter()
            ranked = self._rerank(query, ranked)
            timings["rerank"] = _ms(started)
        return ranked[:top_k], timings

    def _fuse(self, query: str, scored: dict[str, list[tuple[str, float]]], candidates: dict[str, Chunk]) -> Fused:
        """One ranking of the candidates that exist, bibliography and contents chunks after body chunks."""
        scored = {method: [(cid, score) for cid, score in items if cid in candidates] for method, items in scored.items()}
        if self._settings.fusion == "rrf":
            rankings = {method: _body_first([cid for cid, _ in items], candidates) for method, items in scored.items()}
            return fuse_rankings(rankings, self._settings.rrf_k, self._weights(query))
        fused = fuse_scores(scored, self._weights(query))
        return sorted(fused, key=lambda entry: candidates[entry[0]].kind != "body")  # stable: order kept

    def _translated_terms(self, query: str, terms: list[str]) -> list[str]:
        """Keyword terms of the other-language names of the query's concepts that the query lacks."""
        names = self.translator.other_language(query)
        present = set(terms)
        return [term for term in query_terms(" ".join(names)) if term not in present]

    def _weights(self, query: str) -> dict[str, float]:
        """Method weights; Chinese queries use their own dense and translated weights (the default embedder is
        English-only, so their Chinese sources have the BM25 ranking alone to hold them against English ones)."""
        settings = self._settings
        if is_mostly_cjk(query):
            return {"dense": settings.dense_weight_cjk, "sparse": settings.sparse_weight,
                    TRANSLATED: settings.translated_weight_cjk, CROSSLINGUAL: settings.crosslingual_weight_cjk}
        return {"dense": settings.dense_weight, "sparse": settings.sparse_weight, TRANSLATED: settings.translated_weight,
                CROSSLINGUAL: settings.crosslingual_weight}

    def _rerank(self, query: str, ranked: list[RankedChunk]) -> list[RankedChunk]:
        assert self._reranker is not None
        scores = self._reranker.rerank(query, [item.chunk.text for item in ranked])
        for item, score in zip(ranked, scores, strict=True):
            item.score = score
        return sorted(ranked, key=lambda item: -item.score)


def _other_language(query: str, items: list[tuple[str, float]], chunks: dict[str, Chunk]) -> list[tuple[str, float]]:
    """The multilingual ranking of the passages in the other language than the query's: the main embedder and
    BM25 rank same-language passages better (bench/README.md), and the multilingual index is what lets the other
    language's passages compete with them at all."""
    chinese = is_mostly_cjk(query)
    return [(cid, score) for cid, score in items if cid in chunks and is_mostly_cjk(chunks[cid].text) != chinese]


def _body_first(ids: list[str], chunks: dict[str, Chunk]) -> list[str]:
    """Drop ids without a chunk; bibliography and contents chunks go after body chunks (they echo every topic)."""
    present = [cid for cid in ids if cid in chunks]
    return [cid for cid in present if chunks[cid].kind == "body"] + [cid for cid in present if chunks[cid].kind != "body"]


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
