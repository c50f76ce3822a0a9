"""Communities of the entity graph: Louvain (networkx, fixed seed) at two levels.

Level 0 is the first pass of Louvain (the finest communities), level 1 the final pass (the partition of best
modularity), which groups whole level-0 communities. Ids are numbered by size, largest first, so they are
stable for an unchanged graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from workspace_app.models.graph import Relation

SEED = 42
MIN_WEIGHT = 1.0  # one sentence together, or four chunks: what counts as "related" for degree and communities


@dataclass(frozen=True)
class Partition:
    """Community of every entity at level 0, and the level-1 parent of every level-0 community."""

    community: dict[str, int]
    parent: dict[int, int]


def weighted_graph(entity_ids: Iterable[str], relations: Sequence[Relation], min_weight: float = MIN_WEIGHT) -> nx.Graph:
    """Undirected graph of entities with summed relation weights at or above `min_weight`."""
    graph = nx.Graph()
    graph.add_nodes_from(sorted(entity_ids))
    for relation in relations:
        if relation.source == relation.target or relation.source not in graph or relation.target not in graph:
            continue
        weight = relation.weight + (graph[relation.source][relation.target]["weight"] if graph.has_edge(relation.source, relation.target) else 0.0)
        graph.add_edge(relation.source, relation.target, weight=weight)
    weak = [(a, b) for a, b, w in graph.edges(data="weight") if w < min_weight]
    graph.remove_edges_from(weak)
    return graph


def detect_communities(graph: nx.Graph) -> Partition:
    """Louvain communities of the connected entities (isolated ones get none) and their coarser grouping.

    Level 0 is Louvain's first pass (the finest communities); level 1 its last (the best modularity), into which
    the level-0 communities nest.
    """
    connected = graph.subgraph([node for node in graph if graph.degree(node) > 0]).copy()  # Louvain is slow on views
    if connected.number_of_nodes() == 0:
        return Partition({}, {})
    levels = list(nx.community.louvain_partitions(connected, weight="weight", seed=SEED))
    community = _numbered(levels[0])
    if len(levels) < 2 or len(levels[-1]) >= len(levels[0]):
        return Partition(community, {})
    coarse = _numbered(levels[-1])
    return Partition(community, {cid: coarse[member] for member, cid in community.items()})


def _numbered(groups: Iterable[Iterable[str]]) -> dict[str, int]:
    ordered = sorted((sorted(group) for group in groups), key=lambda members: (-len(members), members[0]))
    return {member: index for index, members in enumerate(ordered) for member in members}
