"""LINKS_TO edges (issue 13, deliverable 5): a patient's coded concepts -> the entities of a workspace's graph.

The patients lexicon (patients/lexicon/*.tsv) and the graph lexicon (domain/cardiology.tsv, the clinical pack's)
are kept apart, each for its own texts; they meet here, by their shared names. A patient concept maps to the graph concept most
of its names (English and Chinese synonyms, normalised as the graph normalises documents) are forms of, among
the graph types its kind can mean (a lab item is a test, never the drug of the same name). A coded diagnosis or
procedure (an ICD code) also maps to the graph concepts its ICD title names. An edge is drawn only to an entity
the workspace's graph holds; a concept with no graph entity makes no edge.

This module composes the graph and patients packages, so it sits beside the App, over both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

from workspace_app.graph.links import names_entity_id, title_entity_ids
from workspace_app.graph.service import GraphService
from workspace_app.models.documents import Workspace
from workspace_app.models.events import Event
from workspace_app.models.graph import Entity, PatientLink
from workspace_app.patients.questions import concept_synonyms, lexicon_concepts
from workspace_app.patients.service import PatientService

# The graph types a patient concept of each kind can be (graph/lexicon types, models.graph.ENTITY_TYPES).
GRAPH_TYPES = {
    "class": ("drug class", "drug"), "drug": ("drug", "drug class"), "disease": ("disease",),
    "lab": ("test",), "abnormal": ("test",), "procedure": ("procedure",),
}
_CODED = re.compile(r"^(?P<kind>Diagnosis|Procedure): (?P<title>.+) \(ICD-(?P<version>9|10) (?P<code>[0-9A-Z.]+)\)$")
_TITLE_TYPES = {"Diagnosis": ("disease",), "Procedure": ("procedure",)}
MAX_EVENT_IDS = 20  # supporting events kept per edge (a drug given daily has hundreds); `events` counts them all


@cache
def concept_entity_id(concept: str) -> str | None:
    """The graph entity id a patient concept maps to ('class:anticoagulant' -> 'drug class:anticoagulant')."""
    types = GRAPH_TYPES.get(concept.partition(":")[0])
    return names_entity_id(concept_synonyms(concept), types) if types else None


@cache
def _title_ids(kind: str, title: str) -> tuple[str, ...]:
    return tuple(title_entity_ids(title, _TITLE_TYPES[kind]))


def event_entity_ids(event: Event) -> dict[str, list[str]]:
    """Graph entity id -> the event's concepts that map to it (a coded event's ICD title counts as 'icd:<code>')."""
    found: dict[str, list[str]] = {}
    for concept in event.concepts:
        entity = concept_entity_id(concept)
        if entity is not None:
            found.setdefault(entity, []).append(concept)
    coded = _CODED.match(event.content)
    if coded:
        for entity in _title_ids(coded["kind"], coded["title"]):
            found.setdefault(entity, []).append(f"icd:{coded['code']}")
    return found


def event_code(event: Event) -> str | None:
    """'ICD-9 42731' for a coded diagnosis or procedure event."""
    coded = _CODED.match(event.content)
    return f"ICD-{coded['version']} {coded['code']}" if coded else None


@dataclass
class _Edge:
    concepts: dict[str, None] = field(default_factory=dict)
    event_ids: list[str] = field(default_factory=list)
    codes: dict[str, None] = field(default_factory=dict)


def lexicon_coverage() -> tuple[int, int, list[str]]:
    """(patient lexicon concepts mapping to a graph lexicon concept, all of them, the unmapped ones)."""
    keys = lexicon_concepts()
    unmapped = [k for k in keys if concept_entity_id(k) is None]
    return len(keys) - len(unmapped), len(keys), unmapped


class PatientLinkService:
    """A patient's LINKS_TO edges to the entities of a workspace's graph (`app.patient_links`)."""

    def __init__(self, graph: GraphService, patients: PatientService, workspace: Callable[[str], Workspace]) -> None:
        self._graph = graph
        self._patients = patients
        self._workspace = workspace  # name or id -> Workspace (WorkspaceService.get)

    def links(self, workspace: str, patient_id: str) -> list[PatientLink]:
        """The patient's edges to entities the workspace (name or id) holds, best supported first.
        Raises WorkspaceNotFoundError, PatientNotFoundError."""
        return self.links_of_events(workspace, patient_id, self._patients.events(patient_id))

    def links_of_events(self, workspace: str, patient_id: str, events: Iterable[Event]) -> list[PatientLink]:
        """The edges some events of a patient support."""
        workspace_id = self._workspace(workspace).id
        edges: dict[str, _Edge] = {}
        for event in events:
            code = event_code(event)
            for entity_id, concepts in event_entity_ids(event).items():
                edge = edges.setdefault(entity_id, _Edge())
                edge.concepts.update(dict.fromkeys(concepts))
                edge.event_ids.append(event.event_id)
                if code:
                    edge.codes[code] = None
        present = self._graph.present(workspace_id, list(edges))
        links = [
            PatientLink(patient_id, present[e], tuple(edge.concepts), tuple(edge.event_ids[:MAX_EVENT_IDS]),
                        len(edge.event_ids), tuple(edge.codes))
            for e, edge in edges.items() if e in present
        ]
        return sorted(links, key=lambda link: (-link.events, link.entity.name))

    def concept_entities(self, workspace: str, concepts: Sequence[str]) -> dict[str, Entity]:
        """Patient concept -> the workspace entity it maps to, for the concepts that map to one the graph holds."""
        ids = {c: concept_entity_id(c) for c in concepts}
        present = self._graph.present(self._workspace(workspace).id, [e for e in ids.values() if e])
        return {c: present[e] for c, e in ids.items() if e in present}
