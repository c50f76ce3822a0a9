"""Routing by document summaries (seq_ret, QUERY-002): in a large scope, pick the documents to search first.

A document's score is its summary node's match with the question (term coverage, plus embedding similarity for
English questions), normalised to the best document, plus `ROUTING_ENTITY_WEIGHT` times how much it mentions
the entities the question names (specific entities weigh more), normalised likewise. Measured on the dev
questions over the 13 corpus PDFs (`python -m bench.graph`): summaries alone kept the gold PDF out of the 3
chosen for 4 more questions than with the entity mentions added (first-citation 0.75 vs 0.825).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from workspace_app.retrieval.graph_query import GraphQuery
from workspace_app.text.cjk import is_mostly_cjk
from workspace_app.text.terms import Coverage, content_terms

ROUTING_ENTITY_WEIGHT = 1.0


def route_documents(graph: GraphQuery, embedder: Any, workspace_id: str, query: str, candidates: Sequence[str]) -> list[str]:
    """The candidate documents with a positive score, best first."""
    wanted = set(candidates)
    summaries = [s for s in graph.document_summaries(workspace_id) if s.document_id in wanted]
    by_summary = _normalised(summary_scores(embedder, query, summaries))
    by_entities = _normalised(entity_document_scores(graph, workspace_id, query, list(candidates)))
    scores = {d: by_summary.get(d, 0.0) + ROUTING_ENTITY_WEIGHT * by_entities.get(d, 0.0) for d in candidates}
    return sorted((d for d in candidates if scores[d] > 0), key=lambda d: -scores[d])


def summary_scores(embedder: Any, query: str, summaries: Sequence[Any]) -> dict[str, float]:
    """How well each document's summary matches the question (term coverage, plus similarity in English)."""
    if not summaries:
        return {}
    coverage = Coverage(content_terms(query, drop_question_words=True), {})
    scores = np.array([coverage.of(s.text) for s in summaries], dtype=float)
    if not is_mostly_cjk(query):
        similarity = np.asarray(embedder.embed_passages([s.text for s in summaries])) @ embedder.embed_query(query)
        scores = 0.5 * scores + 0.5 * np.clip(similarity, 0.0, None)
    return {s.document_id: float(score) for s, score in zip(summaries, scores, strict=True)}


def entity_document_scores(graph: GraphQuery, workspace_id: str, query: str, candidates: list[str]) -> dict[str, float]:
    """Per document, the question's entities it mentions: sum of specificity x log(1 + mentions there)."""
    scores: dict[str, float] = {}
    for entity in graph.match_question(workspace_id, query, document_ids=candidates):
        weight = 1.0 / math.log(2.0 + max(entity.mentions, 1))
        counts: dict[str, int] = {}
        for mention in graph.mentions(workspace_id, entity.id, candidates):
            counts[mention.document_id] = counts.get(mention.document_id, 0) + mention.count
        for document_id, count in counts.items():
            scores[document_id] = scores.get(document_id, 0.0) + weight * math.log1p(count)
    return scores


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {key: value / top for key, value in scores.items()} if top > 0 else {}
