"""NetworkX views of a workspace's graph and its GraphML export.

`entity_graph`: entities with weighted `related` edges (the Graph page). `full_graph`: Document -contains->
Chunk, Chunk -next-> Chunk, Chunk -mentions-> Entity, Entity -related-> Entity, each node with its `kind`.
GraphML only takes strings and numbers, so attributes are cleaned (None dropped, tuples joined).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from workspace_app.models.graph import ChunkInfo, Entity, Mention, Relation

_SAFE = (str, int, float, bool)


def entity_graph(entities: Sequence[Entity], relations: Sequence[Relation]) -> nx.Graph:
    """Entities as nodes (name, type, community, degree, mentions, documents) and `related` edges with weights."""
    graph = nx.Graph()
    for entity in entities:
        graph.add_node(entity.id, **_entity_attributes(entity))
    for relation in relations:
        if relation.source in graph and relation.target in graph and relation.source != relation.target:
            if graph.has_edge(relation.source, relation.target):
                graph[relation.source][relation.target]["weight"] += relation.weight
            else:
                graph.add_edge(
                    relation.source, relation.target, kind="related", type=relation.type, weight=relation.weight,
                    chunk_ids=" ".join(relation.chunk_ids),
                )
    return graph


def full_graph(
    document_names: Mapping[str, str], chunks: Sequence[ChunkInfo], entities: Sequence[Entity],
    mentions: Sequence[Mention], relations: Sequence[Relation],
) -> nx.MultiDiGraph:
    """Documents, chunks and entities with contains / next / mentions / related edges."""
    graph = nx.MultiDiGraph()
    for document_id, name in document_names.items():
        graph.add_node(f"document:{document_id}", kind="document", name=name)
    previous: ChunkInfo | None = None
    for chunk in chunks:
        node = f"chunk:{chunk.id}"
        graph.add_node(node, kind="chunk", document_id=chunk.document_id, ordinal=chunk.ordinal, page=chunk.page_start)
        graph.add_edge(f"document:{chunk.document_id}", node, key="contains", kind="contains")
        if previous is not None and previous.document_id == chunk.document_id:
            graph.add_edge(f"chunk:{previous.id}", node, key="next", kind="next")
        previous = chunk
    for entity in entities:
        graph.add_node(f"entity:{entity.id}", kind="entity", **_entity_attributes(entity))
    for mention in mentions:
        source, target = f"chunk:{mention.chunk_id}", f"entity:{mention.entity_id}"
        if source in graph and target in graph:
            graph.add_edge(source, target, key="mentions", kind="mentions", count=mention.count)
    for relation in relations:
        source, target = f"entity:{relation.source}", f"entity:{relation.target}"
        if source in graph and target in graph:
            graph.add_edge(source, target, key=f"related:{relation.type}", kind="related", type=relation.type,
                           weight=relation.weight, chunk_ids=" ".join(relation.chunk_ids))
    return graph


def graphml_bytes(graph: nx.Graph) -> bytes:
    """GraphML of a graph whose attributes are cleaned to strings and numbers."""
    clean = graph.copy()
    for _, data in clean.nodes(data=True):
        _sanitise(data)
    for *_, data in clean.edges(data=True):
        _sanitise(data)
    buffer = io.BytesIO()
    nx.write_graphml(clean, buffer, encoding="utf-8")
    return buffer.getvalue()


def _entity_attributes(entity: Entity) -> dict[str, Any]:
    return {
        "name": entity.name, "type": entity.type, "community": entity.community, "degree": entity.degree,
        "mentions": entity.mentions, "documents": entity.documents, "aliases": " | ".join(entity.aliases),
        "description": entity.description,
    }


def _sanitise(data: dict[str, Any]) -> None:
    for name in list(data):
        value = data[name]
        if value is None:
            del data[name]
        elif isinstance(value, (tuple, list, set)):
            data[name] = " ".join(map(str, value))
        elif not isinstance(value, _SAFE):
            data[name] = str(value)
