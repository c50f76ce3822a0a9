"""Hybrid retrieval: dense (vector index) and sparse (BM25) candidates fused (z-score or reciprocal rank fusion).

Cross-language: the `Translator` gives the other-language names of the concepts a query names (an English
question's Chinese names, a Chinese question's English names); they are searched in the keyword index as a
second BM25 list (method `translated`) fused beside the others, so an English question reaches a Chinese
guideline's passages and the reverse. `sparse` alone stays the question's own terms. A second, multilingual
embedder's index (`CrossLanguageIndex`, method `crosslingual`) ranks passages of either language by meaning: for a
question the main embedder ranks (its dense weight above 0), only the other language's passages, which that ranking
cannot reach; for one it does not rank (a Chinese question with the English-only default), passages of both
languages, so its own language's passages are ranked by meaning too, on one scale with the other's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from workspace_app.config import RetrievalSettings
from workspace_app.embedding.embedder import Embedder
from workspace_app.models.documents import PROVISIONAL, Chunk
from workspace_app.retrieval.bilingual import NoTranslator, Translator
from workspace_app.retrieval.fusion import Fused, fuse_rankings, fuse_scores
from workspace_app.retrieval.rerank import Reranker
from workspace_app.storage.base import ChunkRepository, VectorIndex
from workspace_app.text.analyzer import expand_with_abbreviations, query_terms
from workspace_app.text.cjk import WIDE_CHAR, is_mostly_cjk

TRANSLATED = "translated"
CROSSLINGUAL = "crosslingual"
# Kinds ranked as body text: a running document's provisional passages are pages of its body (not yet chunked, so
# not yet told apart from its references).
_BODY = frozenset({"body", PROVISIONAL})


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
        # The second thread of every search (see `search`); two, so that concurrent searches do not queue behind one.
        self._background = ThreadPoolExecutor(2, thread_name_prefix="search")

    def search(
        self, workspace_id: str, query: str, top_k: int, document_ids: Sequence[str] | None,
        methods: Sequence[str] = ("dense", "sparse", TRANSLATED, CROSSLINGUAL), keyword_only_ids: Sequence[str] = (),
    ) -> tuple[list[RankedChunk], dict[str, float]]:
        """Best chunks for the query, and milliseconds spent per stage. `keyword_only_ids` are documents the keyword
        searches look in too (running ones: the catalog returns their provisional passages only), never the vector
        indexes (a running document's vectors may be an earlier try's).

        The multilingual embedding, its index and the keyword searches run on a second thread while this one
        embeds the query for the main index and searches it: each embedder computes one short text on one thread
        (embedding.embedder), so on two cores the two halves overlap instead of queueing.
        """
        timings: dict[str, float] = {}
        keyword_ids = None if document_ids is None else [*document_ids, *keyword_only_ids]
        other = self._background.submit(
            self._other_rankings, workspace_id, query, document_ids, keyword_ids, methods, timings
        )
        try:
            dense = self._dense_ranking(workspace_id, query, document_ids, timings) if "dense" in methods else None
        finally:
            found = other.result()
        # The fused score sums the methods in this order (floating point): the order they always had.
        lists = {"dense": dense, CROSSLINGUAL: found.get(CROSSLINGUAL), "sparse": found.get("sparse"),
                 TRANSLATED: found.get(TRANSLATED)}
        scored = {method: items for method, items in lists.items() if items is not None}
        started = time.perf_counter()
        # Fusion reads the kind (and, for the multilingual list, the text) of a few hundred candidates; only the
        # chunks returned are read whole (their boxes decoded).
        candidates = self._chunks.chunk_texts(list(dict.fromkeys(cid for items in scored.values() for cid, _ in items)))
        if CROSSLINGUAL in scored and self._weights(query)["dense"] > 0:
            scored[CROSSLINGUAL] = _other_language(query, scored[CROSSLINGUAL], candidates)
        kinds = {cid: kind for cid, (kind, _) in candidates.items()}
        fused = self._fuse(query, scored, kinds)[: self._settings.rerank_k if self._reranker else top_k]
        chunks = self._chunks.get_chunks([cid for cid, _, _ in fused])
        ranked = [RankedChunk(chunks[cid], score, ranks) for cid, score, ranks in fused if cid in chunks]
        timings["fuse"] = _ms(started)
        if self._reranker and ranked:
            started = time.perf_counter()
            ranked = self._rerank(query, ranked)
            timings["rerank"] = _ms(started)
        return ranked[:top_k], timings

    def _dense_ranking(
        self, workspace_id: str, query: str, document_ids: Sequence[str] | None, timings: dict[str, float]
    ) -> list[tuple[str, float]]:
        started = time.perf_counter()
        vector = self._embedder.embed_query(query)
        timings["embed_query"] = _ms(started)
        started = time.perf_counter()
        found = self._vectors.query(workspace_id, vector.tolist(), self._settings.dense_k, document_ids)
        timings["dense"] = _ms(started)
        return found

    def _other_rankings(
        self, workspace_id: str, query: str, document_ids: Sequence[str] | None,
        keyword_ids: Sequence[str] | None, methods: Sequence[str], timings: dict[str, float],
    ) -> dict[str, list[tuple[str, float]]]:
        """The multilingual index's ranking (in `document_ids`) and the keyword rankings (in `keyword_ids`), on the
        search's second thread."""
        found: dict[str, list[tuple[str, float]]] = {}
        if CROSSLINGUAL in methods and self._crosslingual and self._weights(query)[CROSSLINGUAL] > 0:
            started = time.perf_counter()
            index = self._crosslingual
            vector = index.embedder.embed_query(query)
            found[CROSSLINGUAL] = index.vectors.query(workspace_id, vector.tolist(), self._settings.dense_k, document_ids)
            timings[CROSSLINGUAL] = _ms(started)
        if "sparse" in methods or TRANSLATED in methods:
            started = time.perf_counter()
            terms = expand_with_abbreviations(query, query_terms(query), self._chunks.workspace_abbreviations(workspace_id))
            if "sparse" in methods:
                found["sparse"] = self._chunks.keyword_search(workspace_id, terms, self._settings.sparse_k, keyword_ids)
            wanted = TRANSLATED in methods and self._weights(query)[TRANSLATED] > 0
            translated = self._translated_terms(query, terms) if wanted else []
            if translated:
                found[TRANSLATED] = self._chunks.keyword_search(
                    workspace_id, translated, self._settings.sparse_k, keyword_ids
                )
            timings["sparse"] = _ms(started)
        return found

    def _fuse(self, query: str, scored: dict[str, list[tuple[str, float]]], kinds: dict[str, str]) -> Fused:
        """One ranking of the candidates that exist (`kinds`: each one's chunk kind), bibliography and contents
        chunks after body chunks."""
        scored = {method: [(cid, score) for cid, score in items if cid in kinds] for method, items in scored.items()}
        if self._settings.fusion == "rrf":
            rankings = {method: _body_first([cid for cid, _ in items], kinds) for method, items in scored.items()}
            return fuse_rankings(rankings, self._settings.rrf_k, self._weights(query))
        fused = fuse_scores(scored, self._weights(query))
        return sorted(fused, key=lambda entry: kinds[entry[0]] not in _BODY)  # stable: order kept

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


def _other_language(
    query: str, items: list[tuple[str, float]], chunks: dict[str, tuple[str, str]]
) -> list[tuple[str, float]]:
    """The multilingual ranking of the passages in the other language than the query's, for a query the main
    embedder ranks: it and BM25 rank same-language passages better (bench/README.md), and the multilingual index is
    what lets the other language's passages compete with them at all. `chunks`: (kind, text) by id."""
    chinese = is_mostly_cjk(query)
    return [(cid, score) for cid, score in items if cid in chunks and mostly_cjk(chunks[cid][1]) != chinese]


def mostly_cjk(text: str) -> bool:
    """`is_mostly_cjk` (workspace_app.text.cjk) counted in C: the same letters and the same wide set, without a
    Python step per character. A passage is ~1,000 characters and a search classifies ~100 of them (the
    multilingual list): ~8 ms of CPU the per-character way, ~2 ms this way. Equal results: tests/retrieval."""
    letters = sum(map(str.isalpha, text))
    return bool(letters) and sum(map(str.isalpha, WIDE_CHAR.findall(text))) * 2 > letters


def _body_first(ids: list[str], kinds: dict[str, str]) -> list[str]:
    """Drop ids without a chunk; bibliography and contents chunks go after body chunks (they echo every topic)."""
    present = [cid for cid in ids if cid in kinds]
    return [cid for cid in present if kinds[cid] in _BODY] + [cid for cid in present if kinds[cid] not in _BODY]


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
