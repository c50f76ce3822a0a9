"""Plain data objects of the entity graph: entities, their mentions in chunks, relations, communities."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

ENTITY_TYPES = ("drug", "drug class", "disease", "test", "procedure", "device", "concept")


@dataclass(frozen=True)
class Entity:
    """A clinical concept of a workspace, merged over its surface forms (aliases)."""

    id: str
    workspace_id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    mentions: int = 0
    documents: int = 0
    degree: int = 0
    community: int | None = None


@dataclass(frozen=True)
class Mention:
    """How often an entity occurs in one chunk."""

    entity_id: str
    chunk_id: str
    document_id: str
    page_start: int
    count: int


@dataclass(frozen=True)
class Relation:
    """Two related entities, how strongly, and the chunks that show it."""

    source: str
    target: str
    type: str
    weight: float
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True)
class ReportSentence:
    """A representative sentence and the chunk it is quoted from."""

    text: str
    chunk_id: str


@dataclass(frozen=True)
class CommunityReport:
    """A community of closely related entities, with its key relations and quoted sentences."""

    id: int
    level: int
    parent: int | None
    title: str
    entity_ids: tuple[str, ...]
    relations: tuple[Relation, ...]
    sentences: tuple[ReportSentence, ...]
    summary: str
    chunk_ids: tuple[str, ...]
    size: int
    rank: float


@dataclass(frozen=True)
class DocumentSummary:
    """A document's key sentences and key entities."""

    document_id: str
    text: str
    entity_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True)
class FoundEntity:
    """An entity found in one chunk by an extractor: canonical key, display name, type and surface forms."""

    key: str
    name: str
    type: str
    count: int = 1
    surfaces: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class FoundRelation:
    """A relation found in one chunk (keys of its two entities)."""

    source: str
    target: str
    type: str
    weight: float = 1.0


@dataclass(frozen=True)
class ChunkEntities:
    """What an extractor found in one chunk: entities, sentence groups of keys, explicit relations."""

    chunk_id: str
    entities: tuple[FoundEntity, ...] = ()
    sentences: tuple[tuple[str, ...], ...] = ()
    relations: tuple[FoundRelation, ...] = field(default=())



@dataclass(frozen=True)
class EntityRecord:
    """An entity as one document's extraction names it."""

    id: str
    name: str
    type: str
    description: str = ""


@dataclass(frozen=True)
class MentionRecord:
    """An entity's occurrences in one chunk, with the surface forms written there."""

    entity_id: str
    chunk_id: str
    page_start: int
    count: int
    surfaces: tuple[str, ...]


@dataclass(frozen=True)
class DocumentGraph:
    """Everything the graph keeps of one document (replaced as a whole when it is indexed again)."""

    document_id: str
    entities: Sequence[EntityRecord]
    mentions: Sequence[MentionRecord]
    relations: Sequence[Relation]


@dataclass(frozen=True)
class EntityStats:
    """Workspace-wide numbers of an entity, recomputed by a refresh."""

    mentions: int
    documents: int
    degree: int
    community: int | None
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class ChunkInfo:
    """The parts of a chunk the graph uses: text, document, order and page."""

    id: str
    document_id: str
    ordinal: int
    page_start: int
    text: str


LINKS_TO = "LINKS_TO"


@dataclass(frozen=True)
class PatientLink:
    """A LINKS_TO edge: a patient's coded concepts (diagnoses, drugs, procedures, lab items) -> a workspace entity,
    with the events and codes that support it."""

    patient_id: str
    entity: Entity
    concepts: tuple[str, ...]
    event_ids: tuple[str, ...]
    events: int
    codes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The public JSON shape: the edge's type, its two ends (the entity by its graph id and name) and support."""
        return {
            "type": LINKS_TO, "patient_id": self.patient_id, "entity_id": self.entity.id, "name": self.entity.name,
            "entity_type": self.entity.type, "concepts": list(self.concepts), "event_ids": list(self.event_ids),
            "events": self.events, "codes": list(self.codes),
        }
