"""Related-event search over one patient's memory (seed 004 §4): recall, then an explained weighted rerank.

Recall (high recall, low precision), merged and de-duplicated:
  - vector: the `top_n` events most similar to the query event (cosine of unit vectors);
  - temporal: every event within ±`window_h` hours of it;
  - type prior: for each event type the query's type points to (R[query type, type] > 0), its `type_prior_n`
    events nearest in time.
Rerank: s = w1·sim_vec + w2·exp(-|Δt|/τ) + w3·concept_overlap + w4·rule_boost + w5·mined_link, where rule_boost is
the type prior R[query type, candidate type] plus the weights of the rules that fire between the two (capped at 1),
and mined_link the strongest weight (1 - 1/lower lift) of the links learned from the record (link_mining.py) that
fire between them, each given in words under `links`. Links match an event's keys: its concepts, the names the
record gives its medication or order ('med:phytonadione'), and the grades of its lab value ('hemoglobin↓↓↓').

Vectors are a numpy matrix per patient (built from the catalog's event vectors, kept by the service): a patient
has at most tens of thousands of events, so one matrix product (~1 ms) beats a round trip to a vector store and
needs no second copy of the vectors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from workspace_app.models.events import Event, epoch_seconds
from workspace_app.patients.concepts import concept_overlap, graded_findings, lab_value, record_keys
from workspace_app.patients.rules import RuleSet, link_hits, rule_hits

# Seed 004 starts from 0.5 / 0.2 / 0.15 / 0.15. On the whole MIMIC-IV demo (`python -m bench.events --all`),
# similarity at 0.5 did not earn its weight: with it at 0.1 Recall@10 rose on every record-link type (emar→poe
# 0.017 -> 0.100, emar→prescription 0.200 -> 0.475, infusions 0.457 -> 0.527, poe→prescription 0.013 -> 0.220,
# prescription→poe 0.125 -> 0.133), and at 0 it fell on infusions (0.309); the vector still recalls candidates.
# mined_link (issue 28): at 0.5 a link of lower lift 2 (weight 0.5) adds 0.25, above what same-time results of one
# panel get from time alone (0.2), so a treatment the record links to an abnormal result can reach its top 10.
DEFAULT_WEIGHTS = {"sim_vec": 0.1, "time_score": 0.2, "concept_overlap": 0.15, "rule_boost": 0.15, "mined_link": 0.5}
_ALIASES = {"w1": "sim_vec", "w2": "time_score", "w3": "concept_overlap", "w4": "rule_boost", "w5": "mined_link",
            "sim": "sim_vec", "time": "time_score", "concept": "concept_overlap", "rule": "rule_boost",
            "link": "mined_link"}
FEATURES = tuple(DEFAULT_WEIGHTS)
TOP_N = 100
TYPE_PRIOR_N = 20


def resolve_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """The four weights: the defaults, with any given ones (by feature name or w1..w4) replacing them."""
    resolved = dict(DEFAULT_WEIGHTS)
    for key, value in (weights or {}).items():
        name = _ALIASES.get(key, key)
        if name not in resolved:
            raise ValueError(f"unknown weight {key!r}; use {', '.join(DEFAULT_WEIGHTS)} (or w1..w4)")
        resolved[name] = float(value)
    return resolved


@dataclass(frozen=True)
class PatientMemory:
    """One patient's events in time order with their times (hours), concepts and unit vectors (row per event;
    zeros for an event without a vector), the keys links match (concepts and record names) and lab values."""

    events: tuple[Event, ...]
    hours: NDArray[np.float64]
    concepts: tuple[frozenset[str], ...]
    vectors: NDArray[np.float32]
    index: Mapping[str, int]
    types: NDArray[np.str_]
    keys: tuple[frozenset[str], ...] = ()
    values: tuple[float | None, ...] = ()

    @classmethod
    def build(cls, events: Sequence[Event], ids: Sequence[str], matrix: NDArray[np.float32]) -> PatientMemory:
        """The memory of these events, their vectors given as (event ids, matrix)."""
        index = {e.event_id: i for i, e in enumerate(events)}
        vectors = np.zeros((len(events), matrix.shape[1] if matrix.size else 1), dtype=np.float32)
        for row, event_id in enumerate(ids):
            if event_id in index:
                vectors[index[event_id]] = matrix[row]
        hours = np.array([epoch_seconds(e.timestamp) / 3600 for e in events], dtype=np.float64)
        types = np.array([e.event_type for e in events], dtype=np.str_)
        concepts = tuple(frozenset(e.concepts) for e in events)
        keys = tuple(c | record_keys(e) for c, e in zip(concepts, events, strict=True))
        values = tuple(lab_value(e.content) if e.event_type == "lab" else None for e in events)
        return cls(tuple(events), hours, concepts, vectors, index, types, keys, values)

    def link_keys(self, position: int, rules: RuleSet) -> frozenset[str]:
        """What links match on the event at `position`: its keys and the grades its lab value reaches."""
        keys = self.keys[position] if self.keys else self.concepts[position]
        value = self.values[position] if self.values else None
        graded = graded_findings([k for k in keys if k.startswith("abnormal:")], value, rules.grades)
        return keys | graded if graded else keys

    def similarities(self, position: int) -> NDArray[np.float32]:
        """Cosine similarity of every event to the one at `position`."""
        return self.vectors @ self.vectors[position]


def recall(memory: PatientMemory, rules: RuleSet, position: int, window_h: float | None,
           top_n: int = TOP_N) -> dict[int, list[str]]:
    """Candidate positions with how each was recalled ('vector', 'window', 'type_prior'); the query excluded."""
    found: dict[int, list[str]] = {}
    sims = memory.similarities(position)
    sims[position] = -np.inf
    for i in np.argsort(-sims, kind="stable")[: min(top_n, len(sims) - 1)]:
        found.setdefault(int(i), []).append("vector")
    gaps = np.abs(memory.hours - memory.hours[position])
    if window_h is not None:
        for i in np.flatnonzero(gaps <= window_h):
            found.setdefault(int(i), []).append("window")
    query_type = memory.events[position].event_type
    for target in (t for t, w in rules.type_prior.get(query_type, {}).items() if w > 0):
        of_type = np.flatnonzero(memory.types == target)
        for i in of_type[np.argsort(gaps[of_type], kind="stable")][:TYPE_PRIOR_N]:
            found.setdefault(int(i), []).append("type_prior")
    found.pop(position, None)
    return found


def related_events(
    memory: PatientMemory, rules: RuleSet, event_id: str, top_k: int = 20, window_h: float | None = 24,
    weights: Mapping[str, float] | None = None, tau_h: float = 6, top_n: int = TOP_N,
) -> list[dict[str, Any]]:
    """The `top_k` events most related to `event_id`, each {"event_id", "score", "reasons"}; [] when the event is
    not in the memory."""
    position = memory.index.get(event_id)
    if position is None:
        return []
    w = resolve_weights(weights)
    sims = memory.similarities(position)
    scored = []
    for i, recalled_by in recall(memory, rules, position, window_h, top_n).items():
        reasons = _reasons(memory, rules, position, i, float(sims[i]), tau_h)
        reasons["recall"] = recalled_by
        score = sum(w[name] * reasons[name] for name in FEATURES)
        scored.append((score, abs(reasons["dt_h"]), memory.events[i].event_id, reasons))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    return [{"event_id": eid, "score": round(s, 4), "reasons": r} for s, _, eid, r in scored[:top_k]]


def _reasons(memory: PatientMemory, rules: RuleSet, q: int, c: int, sim: float, tau_h: float) -> dict[str, Any]:
    """The five features of candidate `c` for query `q`, and what they came from (links in words)."""
    query, candidate = memory.events[q], memory.events[c]
    dt_h = float(memory.hours[c] - memory.hours[q])
    first, second = (q, c) if dt_h >= 0 else (c, q)
    hits = rule_hits(
        rules, (memory.events[first].event_type, memory.concepts[first]),
        (memory.events[second].event_type, memory.concepts[second]), abs(dt_h),
    )
    prior = rules.prior(query.event_type, candidate.event_type)
    links = link_hits(rules, memory.link_keys(first, rules), memory.link_keys(second, rules), abs(dt_h)) if rules.links else []
    links.sort(key=lambda link: (-link.weight, link.name))
    return {
        "sim_vec": round(max(sim, 0.0), 4),
        "time_score": round(math.exp(-abs(dt_h) / tau_h), 4) if tau_h > 0 else 0.0,
        "concept_overlap": round(concept_overlap(memory.concepts[q], memory.concepts[c]), 4),
        "rule_boost": round(min(1.0, prior + sum(rule.weight for rule in hits)), 4),
        "rule_hits": [rule.name for rule in hits],
        "mined_link": round(links[0].weight, 4) if links else 0.0,
        "links": [link.reason for link in links[:3]],
        "type_prior": prior,
        "dt_h": round(dt_h, 2),
    }


def similar_events(memory: PatientMemory, event_id: str, top_k: int = 20) -> list[dict[str, Any]]:
    """Plain vector search (the baseline): the `top_k` events of the patient most similar to `event_id`."""
    position = memory.index.get(event_id)
    if position is None:
        return []
    sims = memory.similarities(position)
    sims[position] = -np.inf
    order = np.argsort(-sims, kind="stable")[:top_k]
    return [{"event_id": memory.events[i].event_id, "score": round(float(sims[i]), 4)} for i in order]
