"""The graph facade (`WorkspaceService.graph`): index a document's entities, refresh communities, query.

`index_document` is the ingestion pipeline's `graph` stage; `refresh` recomputes everything derived
(entity numbers, communities, reports, document summaries) from the stored mentions and relations;
`remove_document` drops a document's rows and refreshes. While a batch of documents of one workspace is being
ingested the pipeline stores each document's rows without refreshing (`refresh=False`); the last document of
the batch refreshes, and every query first refreshes a workspace whose mentions changed since its last
refresh, so nothing stale is ever read.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

import networkx as nx

from workspace_app.graph.build import build_document_graph
from workspace_app.graph.communities import MIN_WEIGHT, detect_communities, weighted_graph
from workspace_app.graph.entities import EntityExtractor, LexiconEntityExtractor
from workspace_app.graph.lexicon import looks_like_abbreviation, normalize_key
from workspace_app.graph.reports import EntityView, community_report, document_summaries, parent_report
from workspace_app.graph.views import entity_graph, full_graph, graphml_bytes
from workspace_app.models.documents import Chunk, Document
from workspace_app.models.graph import CommunityReport, DocumentSummary, Entity, EntityStats, Mention, Relation
from workspace_app.storage.base import GraphStore
from workspace_app.text.cjk import has_cjk

log = logging.getLogger(__name__)
ProgressCallback = Callable[[int, int], None]
Summarizer = Callable[[CommunityReport], str]
# Another process (a second worker) may store a document while this one refreshes; then it computes again.
_REFRESH_ATTEMPTS = 3
_NAME_CACHE = 16  # (workspace, version, documents) name tables kept for matching questions


class _Documents(Protocol):
    """What the graph needs to know of documents: names and the workspace's abbreviations."""

    def list_documents(self, workspace_id: str) -> list[Document]: ...
    def workspace_abbreviations(self, workspace_id: str) -> dict[str, str]: ...


class GraphService:
    """Entity graph of each workspace: built per document, communities refreshed per workspace."""

    def __init__(
        self, store: GraphStore, documents: _Documents, extractor: EntityExtractor | None = None,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.store = store
        self.documents = documents
        self.extractor: EntityExtractor = extractor or LexiconEntityExtractor()
        self.summarizer = summarizer
        self.timings: dict[str, float] = {}  # seconds of the last index_document's steps (for benchmarks)
        self._lock = threading.RLock()
        # The entities' names read for matching questions, per (workspace, graph version, documents): every ask
        # matches its question, and reading and normalising thousands of names each time cost more than the match.
        self._names: dict[tuple[str, tuple[int, int], tuple[str, ...] | None], list[tuple[Entity, list[NameTest]]]] = {}

    # Building

    def index_document(
        self, document: Document, chunks: Sequence[Chunk], on_progress: ProgressCallback | None = None,
        refresh: bool = True, on_storing: Callable[[], None] | None = None,
    ) -> None:
        """Extract and store one document's entities and relations (replacing earlier ones), then refresh
        (unless `refresh` is False: more documents of the workspace are on their way). `on_progress` hears the
        extraction's count of passages; `on_storing`, that it ended and storing and refreshing begin."""
        started = time.perf_counter()
        abbreviations = self.documents.workspace_abbreviations(document.workspace_id)
        found = self.extractor.extract(chunks, abbreviations, on_progress)
        graph = build_document_graph(document.id, found, {c.id: c.page_start for c in chunks})
        extracted = time.perf_counter()
        if on_storing is not None:
            on_storing()
        with self._lock:  # the last refresh of concurrent jobs (worker threads) sees every stored document
            self.store.replace_document_graph(document.workspace_id, graph)
            stored = time.perf_counter()
            if refresh:
                self.refresh(document.workspace_id)
        self.timings = {
            "extract_s": extracted - started, "store_s": stored - extracted, "refresh_s": time.perf_counter() - stored,
        }

    def remove_document(self, workspace_id: str, document_id: str) -> None:
        """Drop a document's graph rows, the entities only it mentioned, and refresh."""
        with self._lock:
            self.store.delete_document_graph(document_id)
            self.refresh(workspace_id)

    def refresh(self, workspace_id: str) -> None:
        """Recompute entity numbers, communities, reports and document summaries from the stored rows."""
        with self._lock:
            for _ in range(_REFRESH_ATTEMPTS):
                if self._refresh(workspace_id, self.store.graph_version(workspace_id)):
                    return
            log.warning("the graph of workspace %s kept changing during its refresh; the next one catches up", workspace_id)

    def _refresh(self, workspace_id: str, version: tuple[int, int]) -> bool:
        stats = self.store.mention_stats(workspace_id)
        chunk_mentions = self._chunk_mentions(workspace_id)
        entities = {e.id: e for e in self.store.entity_rows(workspace_id) if e.id in stats}
        relations = [
            r for r in self.store.relations(workspace_id, document_ids=sorted(chunk_mentions), min_weight=MIN_WEIGHT)
            if r.source in entities and r.target in entities
        ]
        graph = weighted_graph(entities, relations)
        partition = detect_communities(graph)
        views = {e: EntityView(entities[e].name, entities[e].type, stats[e][0], stats[e][2]) for e in entities}
        reports = self._reports(graph, partition.community, partition.parent, views, relations)
        summaries = document_summaries(chunk_mentions, views, self.store.chunk_info)
        new_stats = {
            e: EntityStats(stats[e][0], stats[e][1], graph.degree(e), partition.community.get(e), _aliases(entities[e].name, stats[e][2]))
            for e in entities
        }
        return self.store.save_refresh(workspace_id, new_stats, reports, summaries, version)

    def _reports(
        self, graph: nx.Graph, community: Mapping[str, int], parent: Mapping[int, int],
        views: Mapping[str, EntityView], relations: Sequence[Relation],
    ) -> list[CommunityReport]:
        by_pair = {(r.source, r.target) if r.source < r.target else (r.target, r.source): r for r in relations}
        members: dict[int, list[str]] = defaultdict(list)
        for entity_id, community_id in community.items():
            members[community_id].append(entity_id)
        level0 = [
            community_report(cid, sorted(ids), graph, views, by_pair, self.store.chunk_info, parent.get(cid))
            for cid, ids in sorted(members.items())
        ]
        if self.summarizer is not None:
            level0 = [self._summarized(report) for report in level0]
        children: dict[int, list[CommunityReport]] = defaultdict(list)
        for report in level0:
            if report.parent is not None:
                children[report.parent].append(report)
        level1 = [parent_report(pid, group, views) for pid, group in sorted(children.items())]
        return [*level0, *level1]

    def is_stale(self, workspace_id: str) -> bool:
        """Whether mentions changed since the stored communities, reports and summaries were computed."""
        return self.store.refreshed_version(workspace_id) != self.store.graph_version(workspace_id)

    def _fresh(self, workspace_id: str) -> tuple[int, int]:
        """Refresh the stored communities, reports and summaries when mentions changed; the graph version read."""
        version = self.store.graph_version(workspace_id)
        if self.store.refreshed_version(workspace_id) != version:
            self.refresh(workspace_id)
        return version

    def _summarized(self, report: CommunityReport) -> CommunityReport:
        assert self.summarizer is not None
        try:
            return replace(report, summary=self.summarizer(report) or report.summary)
        except Exception:
            log.warning("community summary by the language model failed; keeping the extractive one", exc_info=True)
            return report

    def _chunk_mentions(self, workspace_id: str) -> dict[str, dict[str, dict[str, int]]]:
        found: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
        for mention in self.store.mentions(workspace_id, None):
            found[mention.document_id][mention.chunk_id][mention.entity_id] = mention.count
        return found

    # Queries

    def entities(
        self, workspace_id: str, *, document_ids: Sequence[str] | None = None, types: Sequence[str] | None = None,
        community: int | None = None, min_degree: int = 0, limit: int | None = None,
    ) -> list[Entity]:
        """Entities by degree, then mentions (descending), filtered by documents, types, community, degree."""
        self._fresh(workspace_id)
        return self.store.entity_rows(
            workspace_id, document_ids=document_ids, types=types, community=community, min_degree=min_degree, limit=limit
        )

    def get_entity(self, workspace_id: str, entity_id: str) -> Entity | None:
        """One entity by id."""
        self._fresh(workspace_id)
        found = self.store.entity_rows(workspace_id, entity_ids=[entity_id])
        return found[0] if found else None

    def present(self, workspace_id: str, entity_ids: Sequence[str]) -> dict[str, Entity]:
        """The entities of these ids that the workspace's graph holds, by id."""
        self._fresh(workspace_id)
        wanted = sorted(set(entity_ids))
        return {e.id: e for e in self.store.entity_rows(workspace_id, entity_ids=wanted)} if wanted else {}

    def find_entities(self, workspace_id: str, text: str, limit: int = 10) -> list[Entity]:
        """Entities whose name or an alias contains the text (exact matches first), for a search box."""
        self._fresh(workspace_id)
        needle = text.strip().lower()
        if not needle:
            return []
        scored = []
        for entity in self.store.entity_rows(workspace_id):
            names = [entity.name.lower(), *(a.lower() for a in entity.aliases)]
            if needle in names:
                scored.append((0, entity))
            elif any(needle in name for name in names):
                scored.append((1, entity))
        scored.sort(key=lambda item: (item[0], -item[1].degree, -item[1].mentions))
        return [entity for _, entity in scored[:limit]]

    def match_question(self, workspace_id: str, question: str, document_ids: Sequence[str] | None = None) -> list[Entity]:
        """Entities the question names (by name or alias, as whole words; Chinese by substring), best first."""
        version = self._fresh(workspace_id)
        words = f" {normalize_key(question)} "
        named = self._named(workspace_id, version, document_ids)
        found = [entity for entity, tests in named if any(t(question, words) for t in tests)]
        return sorted(found, key=lambda e: (-len(e.name), -e.degree))

    def _named(
        self, workspace_id: str, version: tuple[int, int], document_ids: Sequence[str] | None
    ) -> list[tuple[Entity, list[NameTest]]]:
        """The entities of the workspace (of these documents) with a test for each of their names, read once per
        graph version."""
        key = (workspace_id, version, tuple(sorted(document_ids)) if document_ids is not None else None)
        with self._lock:
            named = self._names.get(key)
        if named is None:
            named = [
                (entity, tests) for entity in self.store.entity_rows(workspace_id, document_ids=document_ids)
                for tests in [[t for t in map(name_test, (entity.name, *entity.aliases)) if t is not None]] if tests
            ]
            with self._lock:
                if len(self._names) >= _NAME_CACHE:
                    self._names.pop(next(iter(self._names)))
                self._names[key] = named
        return named

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], depth: int = 1, limit: int = 50) -> list[tuple[Entity, float]]:
        """Entities related to these (up to `depth` steps), with the summed weight that links them, strongest first."""
        self._fresh(workspace_id)
        scores: dict[str, float] = defaultdict(float)
        frontier = set(entity_ids)
        seen = set(entity_ids)
        for _ in range(max(depth, 1)):
            step: set[str] = set()
            for relation in self.store.relations(workspace_id, sorted(frontier), min_weight=MIN_WEIGHT):
                for a, b in ((relation.source, relation.target), (relation.target, relation.source)):
                    if a in frontier and b not in seen:
                        scores[b] += relation.weight
                        step.add(b)
            seen |= step
            frontier = step
            if not frontier:
                break
        best = sorted(scores, key=lambda e: -scores[e])[:limit]
        known = {e.id: e for e in self.store.entity_rows(workspace_id, entity_ids=best)} if best else {}
        return [(known[e], round(scores[e], 3)) for e in best if e in known]

    def chunks_for_entities(
        self, workspace_id: str, entity_ids: Sequence[str], document_ids: Sequence[str] | None = None, limit: int = 50
    ) -> list[tuple[str, float]]:
        """Chunks mentioning these entities, scored by how many of them (and how often) they name."""
        scores: dict[str, float] = defaultdict(float)
        for mention in self.store.mentions(workspace_id, list(entity_ids), document_ids):
            scores[mention.chunk_id] += 1.0 + 0.1 * min(mention.count, 5)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return [(chunk_id, round(score, 3)) for chunk_id, score in ranked[:limit]]

    def mentions(self, workspace_id: str, entity_id: str, document_ids: Sequence[str] | None = None) -> list[Mention]:
        """Where an entity is mentioned."""
        return self.store.mentions(workspace_id, [entity_id], document_ids)

    def relations(self, workspace_id: str, entity_ids: Sequence[str] | None = None) -> list[Relation]:
        """Relations summed over documents, strongest first (touching `entity_ids` when given)."""
        return self.store.relations(workspace_id, entity_ids)

    def communities(self, workspace_id: str, level: int = 0) -> list[CommunityReport]:
        """Community reports of a level (0: Louvain communities, 1: groups of them)."""
        self._fresh(workspace_id)
        return self.store.communities(workspace_id, level)

    def document_entity_chunks(
        self, workspace_id: str, document_id: str, limit: int
    ) -> list[tuple[Entity, dict[str, int]]]:
        """The entities a document mentions most, each with its number of mentions per chunk (most first)."""
        per_chunk: dict[str, dict[str, int]] = defaultdict(dict)
        for mention in self.store.mentions(workspace_id, None, [document_id]):
            per_chunk[mention.entity_id][mention.chunk_id] = mention.count
        top = sorted(per_chunk, key=lambda e: (-sum(per_chunk[e].values()), e))[:limit]
        rows = {e.id: e for e in self.store.entity_rows(workspace_id, entity_ids=top)} if top else {}
        return [(rows[e], per_chunk[e]) for e in top if e in rows]

    def document_summaries(self, workspace_id: str) -> list[DocumentSummary]:
        """A summary node per document: key sentences and key entities."""
        self._fresh(workspace_id)
        return self.store.document_summaries(workspace_id)

    def entity_graph(self, workspace_id: str, document_ids: Sequence[str] | None = None) -> nx.Graph:
        """Entities and their `related` edges of weight >= 1 (the ones degree counts), optionally of some documents."""
        self._fresh(workspace_id)
        entities = self.store.entity_rows(workspace_id, document_ids=document_ids)
        return entity_graph(entities, self.store.relations(workspace_id, document_ids=document_ids, min_weight=MIN_WEIGHT))

    def full_graph(self, workspace_id: str) -> nx.MultiDiGraph:
        """Document -contains-> Chunk, Chunk -next-> Chunk, Chunk -mentions-> Entity, Entity -related-> Entity."""
        self._fresh(workspace_id)
        names = {d.id: d.name for d in self.documents.list_documents(workspace_id)}
        chunks = self.store.workspace_chunks(workspace_id)
        return full_graph(
            {d: names[d] for d in dict.fromkeys(c.document_id for c in chunks) if d in names}, chunks,
            self.store.entity_rows(workspace_id), self.store.mentions(workspace_id, None), self.store.relations(workspace_id),
        )

    def export_graphml(self, workspace_id: str) -> bytes:
        """GraphML of the full graph."""
        return graphml_bytes(self.full_graph(workspace_id))


def _aliases(name: str, surfaces: Sequence[str]) -> tuple[str, ...]:
    """Surface forms other than the name itself, one per spelling that differs beyond case."""
    seen = {name.lower()}
    kept = []
    for form in surfaces:
        if form.lower() not in seen:
            seen.add(form.lower())
            kept.append(form)
    return tuple(kept)


NameTest = Callable[[str, str], bool]  # (the question, its normalised words padded with spaces) -> named there


def name_test(name: str) -> NameTest | None:
    """How a question names this entity name (None: it never can): Chinese by substring, abbreviations with their
    case as a whole word (a plural s allowed), other names by their normalised words."""
    if has_cjk(name):
        return (lambda question, words: name in question) if len(name) >= 2 else None
    if looks_like_abbreviation(name):
        pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}s?(?![A-Za-z0-9])")
        return lambda question, words: name in question and pattern.search(question) is not None
    key = normalize_key(name)
    if len(key) < 3:
        return None
    padded = f" {key} "
    return lambda question, words: padded in words
