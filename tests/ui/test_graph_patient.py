"""A patient on the Graph page (AppTest, real data): 'Link a patient' draws the AF demo patient as a node joined
by LINKS_TO edges to the entities of a real guideline excerpt's graph, distinct in shape and colour, with a
legend entry."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
AF_PATIENT = "10025463"  # coded with atrial fibrillation, prescribed warfarin
if str(REPO) not in sys.path:  # components/ belongs to the Streamlit app, not to the installed packages
    sys.path.insert(0, str(REPO))

from components.graph_view import build_network_html
from components.patient_links import PATIENT_COLOUR, PATIENT_LEGEND, PatientOverlay
from workspace_app.models.graph import Entity, PatientLink


@pytest.fixture
def data_dir(af_patient_data: Path) -> Path:
    """Workspace 'AF' with the HCM guideline's AF pages, and the AF demo patient imported (tests/ui/conftest.py)."""
    return af_patient_data


@pytest.fixture
def graph_page(data_dir: Path, build: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir.parent)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["workspace"] = build(data_dir).workspaces.get("AF").id
    at.run()
    at.switch_page("pages/graph.py").run()
    assert not at.exception, at.exception
    yield at
    st.cache_resource.clear()


def _nodes(page: str) -> dict[str, dict[str, Any]]:
    """The vis-network nodes pyvis wrote into the page, by id."""
    match = re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.DOTALL)
    assert match, "no node data in the page"
    return {node["id"]: node for node in json.loads(match[1])}


def _edges(page: str) -> list[dict[str, Any]]:
    match = re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", page, re.DOTALL)
    assert match, "no edge data in the page"
    return list(json.loads(match[1]))


def test_linking_a_patient_draws_it_with_its_links_to_edges(graph_page: AppTest, build: Callable[..., Any],
                                                            data_dir: Path) -> None:
    frame = graph_page.get("iframe")[0].proto
    assert f"patient:{AF_PATIENT}" not in str(frame.srcdoc or frame.src)
    picker = graph_page.selectbox(key="graph-patient")
    assert picker.options == [f"Patient {AF_PATIENT}"]
    picker.select(AF_PATIENT).run()
    assert not graph_page.exception, graph_page.exception

    page = str(graph_page.get("iframe")[0].proto.srcdoc or graph_page.get("iframe")[0].proto.src)
    nodes = _nodes(page)
    patient = nodes[f"patient:{AF_PATIENT}"]
    assert patient["shape"] == "diamond" and patient["color"] == PATIENT_COLOUR
    linked = {e["to"] for e in _edges(page) if e["from"] == f"patient:{AF_PATIENT}"}
    assert {"disease:atrial fibrillation", "drug class:anticoagulant"} <= linked
    service = build(data_dir)
    expected = {link.entity.id for link in service.patient_links.links("AF", AF_PATIENT)}
    assert linked == expected and linked <= set(nodes)
    texts = "\n".join(m.value for m in graph_page.markdown)
    assert "LINKS_TO" in texts, "the legend names the patient's edges"
    assert any(f"Patient {AF_PATIENT} links to" in c.value for c in graph_page.caption)


def test_the_patient_overlay_keeps_its_entities_when_the_graph_is_capped() -> None:
    graph = nx.Graph()
    for i in range(30):
        graph.add_node(f"disease:d{i}", name=f"d{i}", type="disease", degree=30 - i, mentions=1)
        if i:
            graph.add_edge("disease:d0", f"disease:d{i}", weight=1.0)
    entity = Entity("disease:d29", "w", "d29", "disease")
    overlay = PatientOverlay("p1", [PatientLink("p1", entity, ("disease:d29",), ("e1",), 1, ("ICD-9 42731",))])
    view = build_network_html(graph, max_nodes=10, patient=overlay)
    nodes = _nodes(view.html)
    assert "disease:d29" in nodes and "patient:p1" in nodes
    assert (PATIENT_COLOUR, PATIENT_LEGEND) in view.legend
    [edge] = [e for e in _edges(view.html) if e["from"] == "patient:p1"]
    assert edge["to"] == "disease:d29" and edge["dashes"] is True and "ICD-9 42731" in edge["title"]
