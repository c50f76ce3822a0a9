"""A patient on the entity graph: one node joined by LINKS_TO edges to the entities its record links to
(`app.patient_links`), drawn apart from the entities (a pink diamond, dashed edges) and named in the legend."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyvis.network import Network

from components.text import plural
from workspace_app.models.graph import LINKS_TO, PatientLink

PATIENT_COLOUR = "#db2777"
PATIENT_LEGEND = "the patient (diamond), joined by dashed LINKS_TO edges to the entities its record links to"


@dataclass(frozen=True)
class PatientOverlay:
    """A patient and its LINKS_TO edges, to draw over the entity graph."""

    patient_id: str
    links: Sequence[PatientLink]

    @property
    def node(self) -> str:
        """The patient's node id (entity ids are '<type>:<key>', and 'patient' is no entity type)."""
        return f"patient:{self.patient_id}"

    def entity_ids(self) -> list[str]:
        """The linked entities' ids, best supported first."""
        return [link.entity.id for link in self.links]


def link_title(link: PatientLink) -> str:
    """The edge's tooltip: LINKS_TO, the concepts, how many events, the codes (HTML-escaped)."""
    events = plural(link.events, "event")
    codes = f"; {', '.join(link.codes)}" if link.codes else ""
    return html.escape(f"{LINKS_TO} {link.entity.name}\n{', '.join(link.concepts)} ({events}{codes})", quote=True)


def add_patient(net: Network, overlay: PatientOverlay, shown: set[str], font: dict[str, Any]) -> int:
    """Draw the patient node and its edges to the shown entities; returns how many edges were drawn."""
    net.add_node(
        overlay.node, label=f"Patient {overlay.patient_id}", shape="diamond", size=26, color=PATIENT_COLOUR,
        title=html.escape(f"Patient {overlay.patient_id}\n{len(overlay.links)} LINKS_TO edges", quote=True), font=font,
    )
    drawn = 0
    for link in overlay.links:
        if link.entity.id in shown:
            net.add_edge(overlay.node, link.entity.id, color=PATIENT_COLOUR, dashes=True, width=2, title=link_title(link))
            drawn += 1
    return drawn
