"""One document's graph rows from its extraction: entities, mentions per chunk, and weighted relations.

Two entities named in one sentence are related with weight 1 per sentence; named in the same chunk but
never in one sentence, 0.25 per chunk (chunks naming very many entities, mostly tables, add sentence pairs
only). Relations an LLM states add their own weight. Each relation keeps up to 20 chunk ids as evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from workspace_app.models.graph import ChunkEntities, DocumentGraph, EntityRecord, MentionRecord, Relation

SENTENCE_WEIGHT = 1.0
CHUNK_WEIGHT = 0.25
MAX_EVIDENCE = 20
_MAX_CHUNK_PAIRS_ENTITIES = 25
CO_OCCURS = "co-occurs"


@dataclass
class _Tally:
    weight: float = 0.0
    chunk_ids: list[str] = field(default_factory=list)


_Relations = dict[tuple[str, str, str], _Tally]


def entity_id(kind: str, key: str) -> str:
    """The stable id of an entity: its type and normalised key."""
    return f"{kind}:{key}"


def build_document_graph(
    document_id: str, found: Sequence[ChunkEntities], pages: Mapping[str, int]
) -> DocumentGraph:
    """Graph rows of one document from the entities found in its chunks (`pages`: chunk id -> first page)."""
    entities: dict[str, EntityRecord] = {}
    mentions: list[MentionRecord] = []
    relations: _Relations = {}
    for chunk in found:
        ids = {}
        for item in chunk.entities:
            identifier = entity_id(item.type, item.key)
            ids[item.key] = identifier
            known = entities.get(identifier)
            if known is None or (not known.description and item.description):
                entities[identifier] = EntityRecord(identifier, item.name, item.type, item.description)
            mentions.append(MentionRecord(identifier, chunk.chunk_id, pages.get(chunk.chunk_id, 0), item.count, item.surfaces))
        _add_co_occurrences(relations, chunk, ids)
        for relation in chunk.relations:
            if relation.source in ids and relation.target in ids and relation.source != relation.target:
                _add(relations, (ids[relation.source], ids[relation.target], relation.type), relation.weight, chunk.chunk_id)
    rows = [Relation(s, t, kind, round(v.weight, 3), tuple(v.chunk_ids)) for (s, t, kind), v in relations.items()]
    return DocumentGraph(document_id, list(entities.values()), mentions, rows)


def _add_co_occurrences(relations: _Relations, chunk: ChunkEntities, ids: Mapping[str, str]) -> None:
    in_sentence: set[tuple[str, str]] = set()
    for keys in chunk.sentences:
        for a, b in combinations(sorted({ids[k] for k in keys if k in ids}), 2):
            _add(relations, (a, b, CO_OCCURS), SENTENCE_WEIGHT, chunk.chunk_id)
            in_sentence.add((a, b))
    if len(ids) > _MAX_CHUNK_PAIRS_ENTITIES:
        return
    for a, b in combinations(sorted(set(ids.values())), 2):
        if (a, b) not in in_sentence:
            _add(relations, (a, b, CO_OCCURS), CHUNK_WEIGHT, chunk.chunk_id)


def _add(relations: _Relations, key: tuple[str, str, str], weight: float, chunk_id: str) -> None:
    tally = relations.setdefault(key, _Tally())
    tally.weight += weight
    if chunk_id not in tally.chunk_ids and len(tally.chunk_ids) < MAX_EVIDENCE:
        tally.chunk_ids.append(chunk_id)
