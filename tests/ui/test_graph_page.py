"""The Graph page through Streamlit's AppTest on a real workspace (two guideline excerpts with their entity graph):
the network in an iframe with nothing fetched from outside, filters, colour toggle, entity search, the passages
of an entity opening the source viewer, the GraphML download, the empty state and escaping of hostile names."""

from __future__ import annotations

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
if str(REPO) not in sys.path:  # components/ belongs to the Streamlit app, not to the installed packages
    sys.path.insert(0, str(REPO))

from components.graph_view import (
    ALWAYS_LABELLED,
    LABELLED,
    OTHER_COLOUR,
    build_network_html,
    cap_edges,
    cap_graph,
    filter_graph,
    strip_remote_resources,
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Path:
    """'Cardiology' with pages 8-9 of the syncope guideline and 10-11 of the women's guideline; 'Empty' with none."""
    folder = tmp_path_factory.mktemp("graph")
    service = build(folder / "data")
    service.workspaces.create("Cardiology")
    service.workspaces.create("Empty")
    for doc, first, last in (("shen-2017-syncope.pdf", 8, 9), ("mosca-2011-women-cvd.pdf", 10, 11)):
        assert service.documents.ingest("Cardiology", excerpt(doc, first, last)).status == "ready"
    return folder / "data"


@pytest.fixture
def service(data_dir: Path, build: Callable[..., Any]) -> Any:
    """A service on the app's data dir, to check what the page shows."""
    return build(data_dir)


@pytest.fixture
def open_graph(data_dir: Path, service: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], AppTest]]:
    """open_graph(workspace): the Graph page with that workspace current."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir.parent)

    def _open(workspace: str) -> AppTest:
        st.cache_resource.clear()
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.session_state["workspace"] = service.workspaces.get(workspace).id
        at.run()
        at.switch_page("pages/graph.py").run()
        assert not at.exception, at.exception
        return at

    yield _open
    st.cache_resource.clear()


def iframe_html(at: AppTest) -> str:
    """The HTML given to the page's iframe (st.iframe with an HTML string)."""
    frames = at.get("iframe")
    assert len(frames) == 1, [element.type for element in at.main]
    proto = frames[0].proto
    return str(getattr(proto, "srcdoc", "") or getattr(proto, "src", ""))


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def legend(at: AppTest) -> str:
    return next(m.value for m in at.markdown if 'id="legend"' in m.value)


def node_colours(html: str) -> set[str]:
    """The colours the nodes are drawn in (pyvis writes each node's "color" into the page's node data)."""
    nodes = html[html.index("nodes = new vis.DataSet("):html.index("edges = new vis.DataSet(")]
    return set(re.findall(r'"color": "(#[0-9a-f]{6})"', nodes)) | set(re.findall(r'"background": "(#[0-9a-f]{6})"', nodes))


def test_the_network_is_drawn_offline_with_the_cap_and_legend(open_graph: Callable[[str], AppTest], service: Any) -> None:
    at = open_graph("Cardiology")
    graph = service.graph.entity_graph(service.workspaces.get("Cardiology").id)
    html = iframe_html(at)
    assert "vis.Network(" in html and "cdn.jsdelivr" not in html and 'src="http' not in html and 'href="http' not in html
    assert f"{graph.number_of_nodes()} entities" in captions(at) or "best-connected" in captions(at)
    assert node_colours(html) and node_colours(html) <= set(re.findall(r"#[0-9a-f]{6}", legend(at))), "every colour named"
    at.segmented_control(key="graph-colour").set_value("community").run()
    html = iframe_html(at)
    assert node_colours(html) <= set(re.findall(r"#[0-9a-f]{6}", legend(at))), "every community colour named"
    assert "network.fit(" in html, "the settled layout is fitted to the frame"
    downloads = at.get("download_button")
    assert len(downloads) == 1 and downloads[0].proto.id.endswith("graph-graphml")
    assert downloads[0].proto.label == "Download GraphML"


def test_filters_and_colour_toggle_change_the_network(open_graph: Callable[[str], AppTest], service: Any) -> None:
    at = open_graph("Cardiology")
    graph = service.graph.entity_graph(service.workspaces.get("Cardiology").id)
    diseases = [n for n, d in graph.nodes(data=True) if d["type"] == "disease"]
    at.multiselect(key="graph-types").set_value(["disease"]).run()
    assert not at.exception
    html = iframe_html(at)
    assert f"{len(diseases)} entities" in captions(at)
    assert "\\ndisease \\u00b7" in html and "\\ndrug \\u00b7" not in html  # the tooltips' type lines
    top = max(degree for _, degree in filter_graph(graph, types=["disease"]).degree())
    at.slider(key="graph-min-degree").set_value(top).run()
    kept = filter_graph(graph, types=["disease"], min_degree=top).number_of_nodes()
    assert f"{kept} entities" in captions(at) or f"{kept} entity" in captions(at)
    before = iframe_html(at)
    at.segmented_control(key="graph-colour").set_value("community").run()
    assert not at.exception and iframe_html(at) != before


def test_search_centres_on_an_entity_and_its_passages_open_the_pdf(open_graph: Callable[[str], AppTest], service: Any) -> None:
    at = open_graph("Cardiology")
    workspace = service.workspaces.get("Cardiology")
    target = service.graph.find_entities(workspace.id, "orthostatic hypotension", limit=1)[0]
    at.text_input(key="graph-search").input("orthostatic hypotension").run()
    picker = at.selectbox(key="graph-pick")
    assert target.id in picker.options or any(target.name in option for option in picker.options)
    picker.select(target.id).run()
    assert not at.exception
    assert any(target.name in s.value for s in at.subheader)
    assert "Centred on" in "\n".join(c.value for c in at.caption)
    centre_graph = nx.ego_graph(service.graph.entity_graph(workspace.id), target.id)
    assert f"{centre_graph.number_of_nodes()} entities" in captions(at)
    passages = [b for b in at.button if b.key and b.key.startswith("graph-passage-")]
    mentions = service.graph.mentions(workspace.id, target.id)
    assert len(passages) == min(len(mentions), 20) > 0
    passages[0].click().run()
    assert not at.exception
    # The chat's source viewer opens at the passage: its header names the document and the page.
    header = "\n".join(m.value for m in at.markdown)
    assert re.search(r"\*\*\\\[1\\\] .+\*\* · pp?\. \d+", header), header


def test_centring_keeps_the_type_filter(open_graph: Callable[[str], AppTest], service: Any) -> None:
    at = open_graph("Cardiology")
    workspace = service.workspaces.get("Cardiology")
    graph = service.graph.entity_graph(workspace.id)
    target = service.graph.find_entities(workspace.id, "orthostatic hypotension", limit=1)[0]
    kept_type = next(t for t in ("drug", "test", "procedure", "concept") if any(
        graph.nodes[n]["type"] == t for n in graph.neighbors(target.id)))
    at.multiselect(key="graph-types").set_value([kept_type]).run()
    at.text_input(key="graph-search").input("orthostatic hypotension").run()
    at.selectbox(key="graph-pick").select(target.id).run()
    assert not at.exception
    neighbours = [n for n in graph.neighbors(target.id) if graph.nodes[n]["type"] == kept_type]
    assert len(neighbours) < graph.degree(target.id), "the filter hides some neighbours"
    assert f"{len(neighbours) + 1} entities" in captions(at) and "outside the filters" in captions(at)
    html = iframe_html(at)
    assert f"\\n{kept_type} \\u00b7" in html and "\\ndisease \\u00b7" in html  # the centre itself is a disease
    assert html.count("\\ndisease \\u00b7") == 1, "no other disease is drawn"


def test_enter_centres_back_returns_and_a_source_filter_composes_with_the_centre(
    open_graph: Callable[[str], AppTest], service: Any
) -> None:
    at = open_graph("Cardiology")
    workspace = service.workspaces.get("Cardiology")
    whole = next(c for c in captions(at).splitlines() if " relations" in c)
    at.text_input(key="graph-search").input("orthostatic hypotension").run()  # Enter: the text's on_change
    target = service.graph.find_entities(workspace.id, "orthostatic hypotension", limit=1)[0]
    assert not at.exception and at.selectbox(key="graph-pick").value == target.id
    assert f"Centred on {target.name} and its" in captions(at).replace("*", "")
    at.button(key="graph-back").click().run()
    assert "Centred on" not in captions(at) and whole in captions(at)
    assert at.text_input(key="graph-search").value == "" and at.selectbox(key="graph-pick").value is None
    # An entity of the women's guideline only, then only the syncope guideline's entities drawn.
    documents = {d.name: d.id for d in service.documents.list(workspace.id)}
    syncope = next(i for name, i in documents.items() if "syncope" in name)
    only_syncope = service.graph.entity_graph(workspace.id, [syncope])
    other = next(e for e in service.graph.entities(workspace.id) if e.id not in only_syncope)
    at.session_state["graph-entity"] = other.id
    at.multiselect(key="graph-documents").set_value([syncope]).run()
    assert not at.exception
    shown = captions(at).replace("*", "").replace("\\", "")
    assert f"{other.name} is not mentioned in the chosen sources" in shown and "-1" not in shown
    assert f"{only_syncope.number_of_nodes()} entities" in shown or "best-connected" in shown
    assert "No passage of the chosen sources mentions it." in shown


def test_a_workspace_without_a_graph_shows_the_empty_state(open_graph: Callable[[str], AppTest]) -> None:
    at = open_graph("Empty")
    assert not at.get("iframe")
    assert any("No entity graph yet" in info.value for info in at.info)


def test_hostile_entity_names_are_escaped_and_large_graphs_capped() -> None:
    graph = nx.Graph()
    hostile = '<img src=x onerror="alert(1)"> <a href="javascript:alert(2)">x</a> </script>'
    graph.add_node("evil", name=hostile, type="drug", community=1, mentions=3)
    for i in range(300):
        graph.add_node(f"n{i}", name=f"entity {i}", type="disease", community=i % 5, mentions=1)
        graph.add_edge("n0" if i else "n1", f"n{i}", weight=1.0)
    graph.add_edge("evil", "n5", weight=2.0)
    view = build_network_html(graph, max_nodes=50, centre="evil")
    assert view.capped and view.shown_nodes == 50 and view.total_nodes == 301
    assert "<img" not in view.html and "<a href" not in view.html and 'alert(1)"' not in view.html
    graph.nodes["evil"]["name"] = "harmless"
    baseline = build_network_html(graph, max_nodes=50, centre="evil").html
    assert view.html.count("</script>") == baseline.count("</script>")  # nothing closes a script early
    assert "evil" in cap_graph(graph, 10, keep=["evil"]) and "n0" in cap_graph(graph, 10)
    dense = nx.complete_graph(40)
    nx.set_edge_attributes(dense, {(u, v): float(u + v) for u, v in dense.edges}, "weight")
    thin = cap_edges(dense, 60)
    assert thin.number_of_edges() == 60 and all(thin.degree(n) > 0 for n in thin)
    assert thin.has_edge(38, 39) and not thin.has_edge(0, 2)  # the heaviest kept, a light one dropped
    crowd = nx.star_graph(149)
    nx.set_node_attributes(crowd, {n: {"name": f"entity {n}", "type": "disease", "community": n % 20} for n in crowd})
    labelled = build_network_html(crowd, max_nodes=150, colour_by="community")
    named = re.findall(r'"label": "entity \d+"', labelled.html)
    assert labelled.labelled == len(named) == LABELLED and '"size": 26' in labelled.html, "the top entities, large"
    assert labelled.always == ALWAYS_LABELLED and build_network_html(crowd, always=3).always == 3
    assert 'ranked = ["0", ' in labelled.html and "always = 10," in labelled.html, "the hub's name placed first"
    colours = {colour for colour, _ in labelled.legend}
    assert OTHER_COLOUR in colours and len(colours) == len(labelled.legend) == 13, "12 communities + the rest, distinct"
    assert strip_remote_resources('<link href="https://cdn.x/b.css" rel="stylesheet"><script src="//cdn.x/b.js"></script>ok') == "ok"


def test_the_chat_page_answers_in_the_chosen_mode_and_lists_the_entities(
    open_graph: Callable[[str], AppTest], service: Any
) -> None:
    at = open_graph("Cardiology")
    at.switch_page("pages/chat.py").run()
    mode = at.radio(key="chat-mode")
    assert mode.value == "hybrid" and "Balanced (recommended)" in mode.options, "plain names, one default"
    mode.set_value("local").run()
    question = "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?"
    at.chat_input(key="chat-input").set_value(question).run()
    assert not at.exception
    chats = service.chats.list_chats("Cardiology")
    answer = service.chats.chat_messages("Cardiology", chats[0].id)[-1].answer
    assert answer.mode == "local" and answer.citations and answer.entities
    shown = captions(at)
    assert "Entities used (local mode):" in shown and answer.entities[0].name in shown
