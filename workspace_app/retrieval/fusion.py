"""Reciprocal rank fusion of several rankings.

SEE: Cormack, Clarke, Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual rank
learning methods", SIGIR 2009 (k = 60).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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


def _best_rank(ranks: Mapping[str, int | None]) -> int:
    return min((rank for rank in ranks.values() if rank is not None), default=10**9)
