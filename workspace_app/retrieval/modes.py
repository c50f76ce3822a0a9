"""Query modes: which chunks answer a question, found through the text indexes, the entity graph or both.

    naive   the hybrid search (dense + BM25, fused as `retrieval.fusion` says) alone
    local   + chunks mentioning the entities the question names, their neighbours' chunks, and the chunks quoted
            by the community reports of those entities
    global  + the chunks quoted by the community reports that best match the question (embedding similarity
            of the report text, and the share of the question's terms it covers)
    hybrid  local and global together

A graph mode merges its graph rankings into one and fuses it with the question's search ranking (reciprocal
rank fusion; `GRAPH_PARTS`, `GRAPH_WEIGHT`): the graph promotes passages of the question's most specific
entities and of the matching communities within the search's good region, and brings in passages the search
missed. Every mode then adds graph expansion: the chunks before and after the best direct hits (ordinal ±1)
and chunks mentioning the question's entities, always scored below the last direct hit. Reports never become
evidence themselves: they contribute the chunks they quote, so every answer cites real passages.

With `seq_ret` (routing by document summaries, QUERY-002, see `routing.py`), a scope of many documents first
picks the documents whose summaries and entity mentions best match the question, and retrieves inside them.

# SEE: LightRAG's local/global/hybrid modes, https://github.com/HKUDS/LightRAG#query-modes
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from workspace_app.models.answers import Citation, EntityRef
from workspace_app.models.documents import Chunk, SearchResult, Workspace
from workspace_app.models.graph import CommunityReport, Entity
from workspace_app.retrieval.fusion import fuse_rankings
from workspace_app.retrieval.graph_query import GraphQuery
from workspace_app.retrieval.routing import route_documents
from workspace_app.retrieval.scope import Scope
from workspace_app.text.cjk import is_mostly_cjk
from workspace_app.text.terms import Coverage, content_terms

MODES = ("naive", "local", "global", "hybrid")
# The graph's rankings of a mode are merged into one graph ranking (each chunk at its best weighted position,
# `GRAPH_PARTS`), which joins the search ranking by RRF with the mode's `GRAPH_WEIGHT` and k=`FUSION_K`.
# Measured on the dev questions (`python -m bench.graph`, 5 and 13 PDFs): summing the entity, neighbour and
# community rankings as separate RRF inputs let well-connected passages naming common entities, but not the
# answer, overtake the best search hit; a graph weight of 0.3 still cost local/hybrid 2 of 40 first citations on
# 13 PDFs, and global at 0.3 moved a best search hit outside its reports to third place (the extractive answer
# then refused). At 0.15 a graph rank can lift a search hit one place at most: the graph breaks near-ties
# (hybrid 0.875 vs naive 0.85 on 5 PDFs, level on 13) and refuses more unanswerable questions.
GRAPH_PARTS: dict[str, dict[str, float]] = {
    "naive": {},
    "local": {"entity": 1.0, "neighbour": 0.3, "community": 0.3},
    "global": {"community": 1.0},
    "hybrid": {"entity": 1.0, "neighbour": 0.3, "community": 0.6},
}
GRAPH_WEIGHT = {"naive": 0.0, "local": 0.15, "global": 0.15, "hybrid": 0.15}
# A small constant: with k=60 a chunk deep in the search ranking overtook the best search hit on the strength
# of the graph alone; with k=10 the graph reorders the search's good region and adds what the search missed.
FUSION_K = 10
SEARCH_POOL = 40
ENTITY_POOL = 40
REPORTS_PER_QUESTION = 3
ENTITIES_LISTED = 12
EXPANSION_FROM = 3
EXPANSION_SCORE = 0.5


@dataclass(frozen=True)
class ModeHit:
    """A chunk chosen for the evidence: its score, how it was found ('direct', 'adjacent', 'entity')."""

    chunk: Chunk
    document_name: str
    score: float
    origin: str
    ranks: dict[str, int | None] = field(default_factory=dict)


@dataclass
class ModeRetrieval:
    """What a mode found: direct hits then expansion hits, the entities and reports it used.

    `entities` are the entities the question names, then the key entities of the reports drawn on.
    """

    mode: str
    hits: list[ModeHit]
    entities: list[Entity]
    reports: list[CommunityReport]
    document_ids: list[str] | None
    timings: dict[str, float] = field(default_factory=dict)
    named: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ModeOptions:
    """Knobs of the mode retriever (defaults measured with `python -m bench.graph`)."""

    top_k: int = 8
    expansion: int = 3
    seq_ret: bool = False
    seq_ret_min_documents: int = 6
    seq_ret_documents: int = 3


class Searcher(Protocol):
    """The text search a mode starts from, inside a resolved scope."""

    def search_in(self, scope: Scope, query: str, top_k: int | None = None) -> SearchResult: ...


class ChunkReader(Protocol):
    """Chunks by id and a document's chunk order (for adjacent chunks)."""

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]: ...
    def document_chunk_ids(self, document_id: str) -> list[str]: ...


class QueryEmbedder(Protocol):
    """Embeds community report texts and the question (global mode)."""

    def embed_passages(self, texts: list[str]) -> Any: ...
    def embed_query(self, text: str) -> Any: ...


class ModeRetriever:
    """Evidence chunks for a question in one of `MODES`, from the search and (when there is one) the graph."""

    def __init__(
        self, searcher: Searcher, chunks: ChunkReader, embedder: QueryEmbedder, graph: GraphQuery | None,
        options: ModeOptions | None = None,
    ) -> None:
        self.searcher = searcher
        self.chunks = chunks
        self.embedder = embedder
        self.graph = graph
        self.options = options or ModeOptions()

    def retrieve(self, within: Scope, query: str, mode: str, top_k: int | None = None) -> ModeRetrieval:
        """The evidence for `query` in `mode`, inside the scope's documents (None: the whole workspace).

        Args:
            within: the resolved scope; routing may choose among its `ready_ids` when `document_ids` is None.
            top_k: direct hits wanted (default `options.top_k`); expansion adds up to `options.expansion`.
        """
        top_k = top_k or self.options.top_k
        timings: dict[str, float] = {}
        workspace_id = within.workspace.id
        scope = list(within.document_ids) if within.document_ids is not None else None
        if self.options.seq_ret:
            scope = self._route(workspace_id, query, scope, list(within.ready_ids), timings)
        started = time.perf_counter()
        search = self.searcher.search_in(within.narrowed(scope), query, SEARCH_POOL if mode != "naive" else top_k)
        timings["search"] = _ms(started)
        names = {hit.chunk.document_id: hit.document_name for hit in search.hits}
        chunks = {hit.chunk.id: hit.chunk for hit in search.hits}
        search_ids = [hit.chunk.id for hit in search.hits]
        entities: list[Entity] = []
        reports: list[CommunityReport] = []
        parts: dict[str, list[str]] = {}
        started = time.perf_counter()
        if self.graph is not None:
            entities = self._question_entities(workspace_id, query, scope)
            if mode in ("local", "hybrid"):
                parts.update(self._local_rankings(workspace_id, entities, scope, search_ids))
                reports += self._entity_reports(workspace_id, entities)
            if mode in ("global", "hybrid"):
                reports += [r for r in self._ranked_reports(workspace_id, query) if r not in reports]
            if reports:
                parts["community"] = by_search_rank(_report_chunks(reports), search_ids)
        timings["graph"] = _ms(started)
        started = time.perf_counter()
        rankings = {"search": search_ids}
        if parts and GRAPH_WEIGHT[mode] > 0:
            rankings["graph"] = merge_by_best_position(parts, GRAPH_PARTS[mode])
        direct = self._direct(rankings, {"search": 1.0, "graph": GRAPH_WEIGHT[mode]}, chunks, scope, search.hits, top_k)
        hits = direct + self._expansion(workspace_id, direct, entities, scope)
        self._name(within, hits, names)
        timings["fuse_expand"] = _ms(started)
        used = entities + [e for e in self._report_entities(workspace_id, reports, mode) if e not in entities]
        named = frozenset(e.id for e in entities)
        return ModeRetrieval(mode, hits, used[:ENTITIES_LISTED], reports, scope, timings, named)

    # Graph rankings

    def _question_entities(self, workspace_id: str, query: str, scope: list[str] | None) -> list[Entity]:
        assert self.graph is not None
        return list(self.graph.match_question(workspace_id, query, document_ids=scope))[:ENTITIES_LISTED]

    def _local_rankings(
        self, workspace_id: str, entities: list[Entity], scope: list[str] | None, search: list[str]
    ) -> dict[str, list[str]]:
        """Chunks mentioning the question's entities, and (weaker) those of their nearest neighbours.

        Chunks naming more of the entities come first; among chunks naming as many, the search's order decides.
        """
        assert self.graph is not None
        if not entities:
            return {}
        ids = [e.id for e in entities]
        found = {"entity": self._entity_ranking(workspace_id, entities, scope, search)}
        neighbours = [e.id for e, _ in self.graph.neighbours(workspace_id, ids, depth=1, limit=8) if e.id not in ids]
        if neighbours:
            related = self.graph.chunks_for_entities(workspace_id, neighbours, scope, ENTITY_POOL // 2)
            found["neighbour"] = by_search_rank([cid for cid, _ in related], search)
        return found

    def _entity_ranking(
        self, workspace_id: str, entities: list[Entity], scope: list[str] | None, search: list[str]
    ) -> list[str]:
        """Chunks by the specificity of the question's entities they name, then by the search's order.

        An entity's weight falls with its mentions in the workspace: a passage naming "paroxysmal atrial
        fibrillation" outranks one naming only "atrial fibrillation", which half the workspace mentions.
        """
        assert self.graph is not None
        scores: dict[str, float] = {}
        for entity in entities:
            weight = 1.0 / math.log(2.0 + max(entity.mentions, 1))
            for mention in self.graph.mentions(workspace_id, entity.id, scope):
                scores[mention.chunk_id] = scores.get(mention.chunk_id, 0.0) + weight
        rank = {cid: i for i, cid in enumerate(search)}
        ordered = sorted(scores, key=lambda cid: (-round(scores[cid], 6), rank.get(cid, len(rank)), cid))
        return ordered[:ENTITY_POOL]

    def _entity_reports(self, workspace_id: str, entities: list[Entity]) -> list[CommunityReport]:
        """The community reports of the question's entities (best-ranked community first)."""
        assert self.graph is not None
        wanted = {e.community for e in entities if e.community is not None}
        reports = [r for r in self.graph.communities(workspace_id) if r.id in wanted]
        return sorted(reports, key=lambda r: -r.rank)[:REPORTS_PER_QUESTION]

    def _ranked_reports(self, workspace_id: str, query: str) -> list[CommunityReport]:
        """The community reports most similar to the question (embedding for English, term coverage always)."""
        assert self.graph is not None
        reports = [r for r in self.graph.communities(workspace_id) if r.sentences or r.chunk_ids]
        if not reports:
            return []
        texts = [f"{r.title}. {r.summary}" for r in reports]
        coverage = Coverage(content_terms(query, drop_question_words=True), {})
        scores = np.array([coverage.of(text) for text in texts], dtype=float)
        if not is_mostly_cjk(query):
            embedder = self.embedder
            similarity = np.asarray(embedder.embed_passages(texts)) @ embedder.embed_query(query)
            scores = 0.5 * scores + 0.5 * np.clip(similarity, 0.0, None)
        order = np.argsort(-scores, kind="stable")[:REPORTS_PER_QUESTION]
        return [reports[i] for i in order if scores[i] > 0]

    def _report_entities(self, workspace_id: str, reports: list[CommunityReport], mode: str) -> list[Entity]:
        """The key entities of the reports a global or hybrid answer drew on (three per report)."""
        if mode not in ("global", "hybrid") or self.graph is None:
            return []
        found = []
        for report in reports:
            for entity_id in report.entity_ids[:3]:
                entity = self.graph.get_entity(workspace_id, entity_id)
                if entity is not None:
                    found.append(entity)
        return list(dict.fromkeys(found))

    # Fusion and expansion

    def _direct(
        self, rankings: dict[str, list[str]], weights: dict[str, float], chunks: dict[str, Chunk],
        scope: list[str] | None, search_hits: Sequence[Any], top_k: int,
    ) -> list[ModeHit]:
        """The top_k chunks of the weighted fusion of the rankings (the search alone in naive mode)."""
        if list(rankings) == ["search"]:
            return [ModeHit(h.chunk, h.document_name, h.score, "direct", dict(h.ranks)) for h in search_hits][:top_k]
        missing = [cid for ids in rankings.values() for cid in ids if cid not in chunks]
        chunks.update(self.chunks.get_chunks(list(dict.fromkeys(missing))))
        allowed = {
            method: [cid for cid in ids if cid in chunks and _in_scope(chunks[cid], scope) and chunks[cid].kind == "body"]
            for method, ids in rankings.items()
        }
        fused = fuse_rankings(allowed, FUSION_K, {m: weights.get(m, 0.0) for m in allowed})
        return [ModeHit(chunks[cid], "", score, "direct", ranks) for cid, score, ranks in fused[:top_k]]

    def _expansion(
        self, workspace_id: str, direct: list[ModeHit], entities: list[Entity], scope: list[str] | None
    ) -> list[ModeHit]:
        """Neighbouring chunks of the best direct hits, then chunks of the question's entities, below every hit."""
        if not direct or self.options.expansion <= 0:
            return []
        taken = {hit.chunk.id for hit in direct}
        wanted: list[tuple[str, str]] = []
        for hit in direct[:EXPANSION_FROM]:
            wanted += [(cid, "adjacent") for cid in self._adjacent(hit.chunk)]
        if entities and self.graph is not None:
            related = self.graph.chunks_for_entities(workspace_id, [e.id for e in entities], scope, ENTITY_POOL // 4)
            wanted += [(cid, "entity") for cid, _ in related]
        chosen = []
        for cid, origin in wanted:
            if cid not in taken:
                taken.add(cid)
                chosen.append((cid, origin))
        found = self.chunks.get_chunks([cid for cid, _ in chosen])
        # Below the weakest direct hit whatever its sign (fused z-scores can be negative), each a little lower.
        low = min(hit.score for hit in direct)
        step = max(abs(low), 1e-6) * EXPANSION_SCORE
        expanded: list[ModeHit] = []
        for cid, origin in chosen:
            chunk = found.get(cid)
            if chunk is None or chunk.kind != "body" or not _in_scope(chunk, scope):
                continue
            expanded.append(ModeHit(chunk, "", low - step * (1 + 0.1 * len(expanded)), origin))
            if len(expanded) == self.options.expansion:
                break
        return expanded

    def _adjacent(self, chunk: Chunk) -> list[str]:
        """Ids of the chunks just before and after this one in its document."""
        ids = self.chunks.document_chunk_ids(chunk.document_id)
        at = chunk.ordinal if 0 <= chunk.ordinal < len(ids) and ids[chunk.ordinal] == chunk.id else ids.index(chunk.id)
        return [ids[i] for i in (at - 1, at + 1) if 0 <= i < len(ids)]

    def _name(self, within: Scope, hits: list[ModeHit], names: dict[str, str]) -> None:
        """Fill in document names the search did not already give."""
        if any(hit.chunk.document_id not in names for hit in hits):
            names.update(within.names)
        hits[:] = [
            hit if hit.document_name else ModeHit(hit.chunk, names.get(hit.chunk.document_id, "?"), hit.score, hit.origin, hit.ranks)
            for hit in hits
        ]

    # Routing by document summaries (seq_ret)

    def _route(
        self, workspace_id: str, query: str, scope: list[str] | None, ready_ids: list[str], timings: dict[str, float]
    ) -> list[str] | None:
        """The documents best matching the question, when the scope has many documents (else the scope)."""
        candidates = scope if scope is not None else ready_ids
        if self.graph is None or len(candidates) < self.options.seq_ret_min_documents:
            return scope
        started = time.perf_counter()
        chosen = route_documents(self.graph, self.embedder, workspace_id, query, candidates)
        timings["route"] = _ms(started)
        return chosen[: self.options.seq_ret_documents] or scope


def entity_refs(graph: GraphQuery | None, found: ModeRetrieval, citations: Sequence[Citation], workspace: Workspace) -> list[EntityRef]:
    """The entities a mode used, each with the numbers of the citations whose chunk mentions it.

    The question's entities are always listed; a report's key entity only when a cited chunk mentions it.
    Entities mentioned by a cited chunk come first; without a graph the list is empty.
    """
    if graph is None or not found.entities:
        return []
    cited: dict[str, list[int]] = {}
    for citation in citations:
        cited.setdefault(citation.chunk_id, []).append(citation.n)
    refs = []
    for entity in found.entities:
        chunks = {m.chunk_id for m in graph.mentions(workspace.id, entity.id, found.document_ids)} if cited else set()
        numbers = sorted({n for chunk_id in chunks & set(cited) for n in cited[chunk_id]})
        if not numbers and entity.id not in found.named:
            continue
        refs.append(EntityRef(entity.id, entity.name, entity.type, workspace.id, workspace.name, tuple(numbers)))
    return sorted(refs, key=lambda ref: not ref.citations)


def merge_by_best_position(parts: dict[str, list[str]], weights: dict[str, float]) -> list[str]:
    """One ranking from several: each chunk placed by its best weighted position, (position + 1) / weight.

    A maximum, not a sum: a passage every graph ranking lists (a hub naming the most common entities) gains
    nothing over one that a single ranking puts first.
    """
    best: dict[str, float] = {}
    for name, ids in parts.items():
        weight = weights.get(name, 0.0)
        if weight <= 0:
            continue
        for position, cid in enumerate(ids):
            best[cid] = min(best.get(cid, math.inf), (position + 1) / weight)
    return sorted(best, key=lambda cid: best[cid])


def by_search_rank(chunk_ids: Sequence[str], search: Sequence[str]) -> list[str]:
    """The chunks in the search's order first, then the others in their own order."""
    rank = {cid: i for i, cid in enumerate(search)}
    return sorted(chunk_ids, key=lambda cid: rank.get(cid, len(rank)))


def _report_chunks(reports: Sequence[CommunityReport]) -> list[str]:
    """The chunks reports quote, report by report (their quoted sentences first, then the other chunks)."""
    ids: list[str] = []
    for report in reports:
        ids += [s.chunk_id for s in report.sentences]
    for report in reports:
        ids += list(report.chunk_ids[:10])
    return list(dict.fromkeys(ids))


def _in_scope(chunk: Chunk, scope: list[str] | None) -> bool:
    return scope is None or chunk.document_id in scope


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
