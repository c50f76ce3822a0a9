"""Graph page: the current workspace's entity graph, to explore and to trace back to the PDFs.

Filters (sources, types, communities, minimum degree) and the colour toggle sit in the sidebar with the GraphML
download. Finding an entity (Enter picks the best match) or clicking its dot centres the network on its
neighbourhood among the filtered entities and lists the passages that mention it; "Back to the whole graph" undoes
it. Opening a passage shows the PDF page with the passage outlined and the sentence naming the entity drawn
strongly. A dot's menu, and the centred entity's panel, ask about the entity in chat (the Chat page answers it).
Linking a patient draws it as one more node, joined by LINKS_TO edges to the entities its coded diagnoses, drugs
and lab items link to.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import streamlit as st

from components.account import export_recorder
from components.application import current_app
from components.chats import ask_in_chat
from components.feedback import report_errors
from components.graph_canvas import NodeAction, render_node_menu_bridge
from components.graph_view import (
    ColourBy,
    build_network_html,
    filter_graph,
    neighbourhood,
    render_graph_view,
)
from components.patient_links import PatientOverlay
from components.source_viewer import render_citation_viewer
from components.text import escape_markdown, plural
from components.workspace_gate import render_workspace_gate
from workspace_app.app import AnswerService, App, EntityPassage, safe_file_name
from workspace_app.models.documents import Workspace
from workspace_app.models.graph import ENTITY_TYPES, Entity

ENTITY = "graph-entity"
OPENED = "graph-opened"
SEARCH_KEY = "graph-search"
PICK_KEY = "graph-pick"
BACK_KEY = "graph-back"
# The question "Ask about X" puts to the chat. The offline answerer finds passages for this wording where "What do
# the sources say about X?" was refused (mavacamten, syncope, diltiazem on the HCM and syncope guideline excerpts).
ASK_ABOUT = "Tell me about {name}."
PATIENT_KEY = "graph-patient"
VIEW_KEY = "graph-view"
MAX_NODES = 150
PASSAGES = 20


def render_page(app: App, answers: AnswerService) -> None:
    """Filters, the network, the chosen entity's passages and the PDF panel."""
    st.title("Graph")
    workspace = render_workspace_gate(app.workspaces.get, purpose="its entity graph is drawn here")
    if workspace is None:
        return
    graph_service = app.graph
    ready = [d for d in app.documents.list(workspace.id) if d.status == "ready"]
    with st.sidebar:
        st.subheader("Filters")
        chosen_ids = _document_filter(ready)
    graph = nx.Graph()
    with report_errors():
        graph = graph_service.entity_graph(workspace.id, chosen_ids)
    if graph.number_of_nodes() == 0:
        _empty_state(workspace, bool(ready))
        return
    titles = {report.id: report.title for report in graph_service.communities(workspace.id)}
    with st.sidebar:
        shown, colour_by = _graph_filters(graph, titles)
        st.download_button(
            "Download GraphML", data=graph_service.export_graphml(workspace.id),
            file_name=safe_file_name(workspace.name, "graphml", "graph"),
            mime="application/graphml+xml", key="graph-graphml", icon=":material/download:",
            on_click=export_recorder(app, workspace.id, "graph", otherwise="rerun"),
        )
        patient = _patient_overlay(app, workspace)
    action = render_node_menu_bridge(frame_key=VIEW_KEY, key="graph-node-menu")
    if action is not None:
        _apply_node_action(graph_service, workspace, graph, action)
    centre = _entity_picker(graph_service, workspace, shown, chosen_ids)
    network, side = st.columns([3, 2], gap="large")
    with network:
        view_graph, drawn_centre = shown, None
        if centre is not None:
            view_graph, drawn_centre = _centred(graph, shown, centre)
        if patient is not None:  # the linked entities are drawn whatever the filters
            view_graph = nx.Graph(graph.subgraph({*view_graph.nodes, *(e for e in patient.entity_ids() if e in graph)}))
        view = build_network_html(
            view_graph, colour_by=colour_by, max_nodes=MAX_NODES, centre=drawn_centre,
            community_titles=titles, patient=patient, always=app.settings.ui.graph_labels,
        )
        render_graph_view(view, key=VIEW_KEY)
    with side:
        if centre is None:
            st.info("Find or pick an entity, or click a dot, to see the passages that mention it.", icon=":material/search:")
        else:
            _entity_side(app, answers, workspace, centre, chosen_ids, titles)


def _centred(graph: nx.Graph, shown: nx.Graph, centre: Entity) -> tuple[nx.Graph, str | None]:
    """The view centred on an entity within the filters, with a line saying so and the way back; the drawn centre
    (None when the chosen sources do not mention it: the filtered graph is drawn whole)."""
    if centre.id not in graph:
        st.caption(f"**{escape_markdown(centre.name)}** is not mentioned in the chosen sources: all their entities are shown.")
        st.button("Back to the whole graph", key=BACK_KEY, icon=":material/zoom_out_map:", on_click=_uncentre)
        return shown, None
    # The filters hold when centring: the neighbours drawn are the filtered ones (the centre itself is kept
    # even when a filter would hide it, so the view is never empty).
    view_graph = neighbourhood(graph.subgraph({*shown.nodes, centre.id}), centre.id)
    hidden = "" if centre.id in shown else " (it is outside the filters; only its neighbours within them are shown)"
    st.caption(
        f"Centred on **{escape_markdown(centre.name)}** and its "
        f"{plural(view_graph.number_of_nodes() - 1, 'neighbour')}{hidden}."
    )
    st.button("Back to the whole graph", key=BACK_KEY, icon=":material/zoom_out_map:", on_click=_uncentre)
    return view_graph, centre.id


def _uncentre() -> None:
    """'Back to the whole graph': no centre, an empty search, the picker cleared (a callback: before the widgets)."""
    _choose(None)
    st.session_state[SEARCH_KEY] = ""


def _choose(entity_id: str | None) -> None:
    """Make `entity_id` the centre (None: none), with no passage opened; the picker shows it when drawn."""
    if st.session_state.get(ENTITY) != entity_id:
        st.session_state.pop(OPENED, None)
    st.session_state[ENTITY] = entity_id


def _apply_node_action(graph_service: Any, workspace: Workspace, graph: nx.Graph, action: NodeAction) -> None:
    """A choice from a dot's menu: centre on its entity, or ask about it in chat (opens the Chat page)."""
    if action.entity_id not in graph:
        return  # not an entity of this graph (a stale frame): nothing to do
    if action.kind == "centre":
        _choose(action.entity_id)
        st.session_state[SEARCH_KEY] = ""
        return
    entity = graph_service.get_entity(workspace.id, action.entity_id)
    if entity is not None:
        _ask_about(workspace.id, entity.name)


def _ask_about(workspace_id: str, name: str) -> None:
    """Put a question about the entity to the Chat page, which answers it when it opens."""
    ask_in_chat(workspace_id, ASK_ABOUT.format(name=name))
    st.switch_page("pages/chat.py")


def _patient_overlay(app: App, workspace: Workspace) -> PatientOverlay | None:
    """'Link a patient': the chosen patient's LINKS_TO edges to this workspace's entities (None: no patient)."""
    ids: list[str] = []
    with report_errors():
        ids = app.patients.ids()
    if not ids:
        return None
    picked = st.selectbox("Link a patient", ids, index=None, key=PATIENT_KEY, placeholder="No patient",
                          format_func=lambda p: f"Patient {p}")
    if picked is None:
        return None
    with report_errors():
        links = app.patient_links.links(workspace.id, picked)
        if not links:
            st.caption(f"Patient {escape_markdown(picked)}'s record names no entity of this workspace's graph.")
            return None
        named = " · ".join(f"{escape_markdown(link.entity.name)} ({plural(link.events, 'event')})" for link in links[:12])
        st.caption(f"Patient {escape_markdown(picked)} links to {len(links)} {'entity' if len(links) == 1 else 'entities'}: {named}")
        return PatientOverlay(picked, links)
    return None


def _empty_state(workspace: Workspace, has_sources: bool) -> None:
    if has_sources:
        st.info(
            f"**{escape_markdown(workspace.name)}** has no entity graph yet: its sources were ingested before the "
            "graph existed, or no clinical concepts were found in them. Re-ingest a source on the Sources page.",
            icon=":material/hub:",
        )
    else:
        st.info("No entity graph yet: add PDFs on the Sources page; the graph is built as they are ingested.", icon=":material/hub:")
    st.page_link("pages/sources.py", label="Go to Sources", icon=":material/arrow_forward:")


def _document_filter(ready: list[Any]) -> list[str] | None:
    """The sources to draw (None: all of them)."""
    names = {d.id: d.name for d in ready}
    picked = st.multiselect("Sources", list(names), format_func=lambda i: names[i], key="graph-documents",
                            placeholder="All sources")
    return list(picked) or None


def _graph_filters(graph: nx.Graph, titles: dict[int, str]) -> tuple[nx.Graph, ColourBy]:
    """Type, community and degree filters and the colour toggle; returns the filtered graph and the colouring."""
    present_types = [t for t in ENTITY_TYPES if any(d.get("type") == t for _, d in graph.nodes(data=True))]
    types = st.multiselect("Types", present_types, key="graph-types", placeholder="All types")
    communities = sorted({int(c) for _, c in graph.nodes(data="community") if c is not None})
    chosen = st.multiselect(
        "Communities", communities, format_func=lambda c: titles.get(c, f"community {c}"), key="graph-communities",
        placeholder="All communities",
    )
    top = max((degree for _, degree in graph.degree()), default=0)
    min_degree = st.slider("Minimum degree", 0, max(top, 1), 0, key="graph-min-degree")
    colour = st.segmented_control("Colour by", ("type", "community"), default="type", key="graph-colour")
    shown = filter_graph(graph, types=types or None, communities=chosen or None, min_degree=min_degree)
    return shown, "community" if colour == "community" else "type"


def _entity_picker(graph_service: Any, workspace: Workspace, shown: nx.Graph, document_ids: list[str] | None) -> Entity | None:
    """Search by name or alias (Enter picks the best match), or pick among the best-connected entities; the chosen
    one is the centre."""
    text = st.text_input(
        "Find an entity", key=SEARCH_KEY, placeholder="e.g. aspirin, HFrEF, 房颤 (Enter picks the best match)",
        max_chars=100, on_change=_pick_best_match, args=(graph_service, workspace.id, set(shown.nodes)),
    )
    candidates: list[Entity] = []
    with report_errors():
        if text.strip():
            candidates = graph_service.find_entities(workspace.id, text.strip(), limit=20)
        else:
            known = {e.id: e for e in graph_service.entities(workspace.id, document_ids=document_ids)}
            best = sorted(shown.nodes, key=lambda n: -shown.degree(n))[:50]
            candidates = [known[n] for n in best if n in known]
    if text.strip() and not candidates:
        st.caption(f"No entity matches “{escape_markdown(text.strip())}”.")
    by_id = {e.id: e for e in candidates}
    current = st.session_state.get(ENTITY)
    if current and current not in by_id:
        entity = graph_service.get_entity(workspace.id, current)
        if entity is not None:
            by_id = {entity.id: entity, **by_id}
    # The picker shows the centre however it was chosen (Find, a dot's menu, "Back"): its value is set here, before
    # it is drawn; a pick made in it becomes the centre in its callback, before this runs.
    wanted = current if current in by_id else None
    if st.session_state.get(PICK_KEY) != wanted:
        st.session_state[PICK_KEY] = wanted
    picked = st.selectbox(
        "Entity", list(by_id), index=None, format_func=lambda i: f"{by_id[i].name} ({by_id[i].type})", key=PICK_KEY,
        placeholder="Pick an entity", on_change=_picked,
    )
    return by_id.get(picked) if picked else None


def _picked() -> None:
    """A pick in the Entity box: it becomes the centre."""
    _choose(st.session_state.get(PICK_KEY))


def best_match(matches: list[Entity], shown: set[str]) -> Entity | None:
    """The first match drawn in the filtered graph, else the first match (None when nothing matches)."""
    return next((e for e in matches if e.id in shown), matches[0] if matches else None)


def _pick_best_match(graph_service: Any, workspace_id: str, shown: set[str]) -> None:
    """Enter in Find: centre on the best match of the text typed (a callback, so the picker shows it at once)."""
    text = str(st.session_state.get(SEARCH_KEY) or "").strip()
    if not text:
        return
    with report_errors():
        found = best_match(graph_service.find_entities(workspace_id, text, limit=20), shown)
        if found is not None:
            _choose(found.id)


def _entity_side(
    app: App, answers: AnswerService, workspace: Workspace, entity: Entity,
    document_ids: list[str] | None, titles: dict[int, str],
) -> None:
    """The entity's facts, the passages mentioning it (each opens the PDF), and the opened passage."""
    st.subheader(escape_markdown(entity.name))
    st.button(f"Ask about {escape_markdown(entity.name)} in chat", key="graph-ask", icon=":material/forum:",
              on_click=_ask_about, args=(workspace.id, entity.name))
    facts = [escape_markdown(entity.type), plural(entity.mentions, "mention"), plural(entity.documents, "source")]
    if entity.community is not None:
        facts.append(escape_markdown(titles.get(entity.community, f"community {entity.community}")))
    st.caption(" · ".join(facts))
    if entity.aliases:
        st.caption("Also: " + ", ".join(escape_markdown(a) for a in entity.aliases[:8]))
    passages: list[EntityPassage] = []
    with report_errors():
        passages = answers.entity_passages(workspace.id, entity, document_ids, PASSAGES)
    opened = _passage_list(passages)
    if opened is not None:
        with report_errors():
            # The same viewer as in chat: the whole document, the naming sentence boxed on its page.
            render_citation_viewer(app, workspace.id, answers.passage_citation(opened), key="graph-viewer")


def _passage_list(passages: list[EntityPassage]) -> EntityPassage | None:
    """One row per passage (document, page, the naming sentence) with a button opening it; the opened one."""
    if not passages:
        st.caption("No passage of the chosen sources mentions it.")
        return None
    st.markdown(f"**Mentioned in {plural(len(passages), 'passage')}**" + (f" (first {PASSAGES})" if len(passages) == PASSAGES else ""))
    with st.container(height=320, key="graph-passages"):
        for i, passage in enumerate(passages):
            page = f"p. {passage.chunk.page_start}"
            if st.button(f"{escape_markdown(passage.document_name)} · {page}", key=f"graph-passage-{i}", icon=":material/picture_as_pdf:", type="tertiary"):
                st.session_state[OPENED] = passage.chunk.id
            st.caption(escape_markdown(passage.sentence.text[:240]))
    wanted = st.session_state.get(OPENED)
    return next((p for p in passages if p.chunk.id == wanted), None)


app = current_app()
render_page(app, app.answers)
