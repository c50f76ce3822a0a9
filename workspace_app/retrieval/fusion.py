"""Fusion of several rankings into one: reciprocal rank fusion, or normalised score fusion.

RRF looks at positions only, so a passage first in one list and absent from the other loses to any passage
both lists hold among their candidates. Score fusion keeps how far ahead a hit is: each method's scores become
z-scores over its own candidates, and a candidate a method did not return counts as that method's weakest.
The candidate lists are 100 deep: the mean and spread of a longer list describe the method's scores better
(depths 20/30/50/100 measured, bench/README.md). The setting keeps RRF one switch away.

SEE: Cormack, Clarke, Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual rank
learning methods", SIGIR 2009 (k = 60). Montague, Aslam, "Relevance score normalization for metasearch",
CIKM 2001 (z-score normalisation, "ZMUV").
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

Fused = list[tuple[str, float, dict[str, int | None]]]


def fuse_rankings(
    rankings: Mapping[str, Sequence[str]], k: int = 60, weights: Mapping[str, float] | None = None
) -> list[tuple[str, float, dict[str, int | None]]]:
    """Fuse ranked id lists into one: (id, score, 1-based rank per method or None), best first."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int | None]] = {}
    for method, ids in rankings.items():
        weight = (weights or {}).get(method, 1.0)
        for position, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + position)
            ranks.setdefault(item, {name: None for name in rankings})[method] = position
    ordered = sorted(scores, key=lambda item: (-scores[item], _best_rank(ranks[item])))
    return [(item, scores[item], ranks[item]) for item in ordered]


def fuse_scores(scored: Mapping[str, Sequence[tuple[str, float]]], weights: Mapping[str, float] | None = None) -> Fused:
    """Fuse (id, score) lists, best first within each, by the weighted sum of per-list z-scores:
    (id, fused score, 1-based rank per method or None), best first."""
    normalised = {method: _z_scores([score for _, score in items]) for method, items in scored.items()}
    ranks: dict[str, dict[str, int | None]] = {}
    z: dict[str, dict[str, float]] = {method: {} for method in scored}
    for method, items in scored.items():
        for position, ((item, _), value) in enumerate(zip(items, normalised[method], strict=True), start=1):
            ranks.setdefault(item, {name: None for name in scored})[method] = position
            z[method][item] = value
    floor = {method: min(values, default=0.0) for method, values in normalised.items()}
    scores = {
        item: sum((weights or {}).get(method, 1.0) * z[method].get(item, floor[method]) for method in scored)
        for item in ranks
    }
    ordered = sorted(scores, key=lambda item: (-scores[item], _best_rank(ranks[item]), item))
    return [(item, scores[item], ranks[item]) for item in ordered]


def _z_scores(values: Sequence[float]) -> list[float]:
    if not values:
        return []
    mean = statistics.fmean(values)
    spread = statistics.pstdev(values) or 1.0
    return [(value - mean) / spread for value in values]


def _best_rank(ranks: Mapping[str, int | None]) -> int:
    return min((rank for rank in ranks.values() if rank is not None), default=10**9)
