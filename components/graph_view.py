"""The entity graph as an interactive vis-network (pyvis), drawn offline inside an iframe.

Pure functions turn a `networkx.Graph` of entities (node attributes `name`, `type`, `community`, `degree`,
`mentions`, as `GraphService.entity_graph` returns it) into one self-contained HTML page:
- vis-network is inlined (`cdn_resources="in_line"`) and the `<link>`/`<script>` tags pyvis's template points
  at a CDN (bootstrap) are removed, so the page fetches nothing;
- nodes are coloured by type or by community and sized by degree; large graphs are cut to the nodes of highest
  degree and the view says how many were left out;
- entity names come from documents: the data reaches the page through Jinja's `tojson` (`<`, `>`, `&` and `'`
  become `\\u003c`...), labels are drawn on the canvas as text, tooltips are HTML-escaped (pyvis switches to an
  innerHTML popup when a title contains "href"), and the legend (drawn by Streamlit above the frame) is escaped;
- the best-connected entities are named on the canvas (the first `always` of them whatever the crowding, see
  `graph_canvas`), every colour has a legend entry, and once the layout settles the graph is fitted to the frame;
- a click on a dot offers "Ask about X in chat" and "Centre on X" (`graph_canvas.render_node_menu_bridge`).
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import networkx as nx
import streamlit as st
from pyvis.network import Network

from components.graph_canvas import canvas_script
from components.patient_links import PATIENT_COLOUR, PATIENT_LEGEND, PatientOverlay, add_patient

ColourBy = Literal["type", "community"]

MAX_NODES = 150
# The strongest relations drawn among the shown entities: co-occurrence graphs are dense (150 entities of the
# 13 corpus PDFs share ~4,200 relations), which made the page 1.2 MB, pyvis ~0.9 s and the layout ~2 s.
MAX_EDGES = 600
HEIGHT = 640
TYPE_COLOURS = {
    "drug": "#2563eb", "drug class": "#7c3aed", "disease": "#dc2626", "test": "#059669",
    "procedure": "#d97706", "device": "#0891b2", "concept": "#6b7280",
}
COMMUNITY_COLOURS = (
    "#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d",
    "#9333ea", "#ea580c", "#0d9488", "#4f46e5",
)
OTHER_COLOUR = "#9ca3af"
# Entities named on the canvas by default: the best-connected ones (every one in a small view). A label on each of
# 150 nodes is unreadable, and vis-network hides labels drawn under ~5 px when the view is fitted; the named ones
# are drawn large so they stay legible at the fitted scale.
LABELLED = 25
ALWAYS_LABELLED = 10  # the default of Settings.ui.graph_labels
SMALL_VIEW = 40
LABEL_SIZE = 26
_REMOTE_TAG = re.compile(
    r"<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>|<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script>",
    re.IGNORECASE | re.DOTALL,
)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>")


@dataclass(frozen=True)
class GraphView:
    """The page to put in an iframe and what it shows."""

    html: str = field(repr=False)
    shown_nodes: int
    shown_edges: int
    total_nodes: int
    total_edges: int = 0
    legend: list[tuple[str, str]] = field(default_factory=list)
    labelled: int = 0
    always: int = 0  # how many of the best-connected are always named (the centre is named too)

    @property
    def capped(self) -> bool:
        """True when nodes were left out to keep the view readable."""
        return self.shown_nodes < self.total_nodes


def filter_graph(
    graph: nx.Graph, *, types: Iterable[str] | None = None, communities: Iterable[int] | None = None,
    min_degree: int = 0,
) -> nx.Graph:
    """The subgraph of the wanted types and communities whose degree (in that subgraph) is at least min_degree."""
    wanted_types = set(types) if types is not None else None
    wanted_communities = set(communities) if communities is not None else None
    keep = [
        node for node, data in graph.nodes(data=True)
        if (wanted_types is None or data.get("type") in wanted_types)
        and (wanted_communities is None or data.get("community") in wanted_communities)
    ]
    sub = graph.subgraph(keep)
    if min_degree > 0:
        sub = sub.subgraph([node for node, degree in sub.degree() if degree >= min_degree])
    return nx.Graph(sub)


def neighbourhood(graph: nx.Graph, centre: str, depth: int = 1) -> nx.Graph:
    """The centre entity and everything within `depth` steps of it (empty when it is not in the graph)."""
    if centre not in graph:
        return nx.Graph()
    return nx.Graph(nx.ego_graph(graph, centre, radius=depth))


def cap_graph(graph: nx.Graph, max_nodes: int, keep: Iterable[str] = ()) -> nx.Graph:
    """At most max_nodes nodes: those of highest degree (then most mentions), always keeping `keep`."""
    if graph.number_of_nodes() <= max_nodes:
        return graph
    kept = [node for node in keep if node in graph][:max_nodes]
    ranked = sorted(graph.nodes, key=lambda node: (-graph.degree(node), -int(graph.nodes[node].get("mentions", 0)), str(node)))
    chosen = list(dict.fromkeys([*kept, *ranked]))[:max_nodes]
    return nx.Graph(graph.subgraph(chosen))


def cap_edges(graph: nx.Graph, max_edges: int) -> nx.Graph:
    """At most max_edges edges: every node's strongest edge, then the heaviest others."""
    if graph.number_of_edges() <= max_edges:
        return graph
    weight = {frozenset((u, v)): float(w) for u, v, w in graph.edges(data="weight", default=1.0)}
    keep = set()
    for node in graph.nodes:
        edges = [frozenset((node, other)) for other in graph.neighbors(node)]
        if edges:
            keep.add(max(edges, key=lambda e: weight[e]))
    for edge in sorted(weight, key=lambda e: -weight[e]):
        if len(keep) >= max_edges:
            break
        keep.add(edge)
    capped = nx.Graph()
    capped.add_nodes_from(graph.nodes(data=True))
    capped.add_edges_from((u, v, d) for u, v, d in graph.edges(data=True) if frozenset((u, v)) in keep)
    return capped


def community_palette(graph: nx.Graph) -> dict[int, str]:
    """A distinct colour for each of the largest communities shown; the others (and no community) are grey, so every
    colour on the canvas names one thing in the legend."""
    counts: dict[int, int] = {}
    for _, community in graph.nodes(data="community"):
        if community is not None:
            counts[int(community)] = counts.get(int(community), 0) + 1
    largest = sorted(counts, key=lambda c: (-counts[c], c))[: len(COMMUNITY_COLOURS)]
    return {community: COMMUNITY_COLOURS[i] for i, community in enumerate(largest)}


def node_colour(data: Mapping[str, Any], colour_by: ColourBy, palette: Mapping[int, str] | None = None) -> str:
    """The node's colour: by entity type, or by community (from `palette`; others and nodes without one are grey)."""
    if colour_by == "community":
        community = data.get("community")
        if community is None:
            return OTHER_COLOUR
        if palette is None:
            return COMMUNITY_COLOURS[int(community) % len(COMMUNITY_COLOURS)]
        return palette.get(int(community), OTHER_COLOUR)
    return TYPE_COLOURS.get(str(data.get("type")), OTHER_COLOUR)


def ranked_nodes(graph: nx.Graph) -> list[str]:
    """The entities from best- to least-connected (then by mentions, then id)."""
    ranked = sorted(graph.nodes, key=lambda n: (-graph.degree(n), -int(graph.nodes[n].get("mentions", 0)), str(n)))
    return [str(node) for node in ranked]


def labelled_nodes(graph: nx.Graph, centre: str | None = None, limit: int = LABELLED) -> set[str]:
    """The entities named on the canvas: all of a small view, else the `limit` best-connected and the centre."""
    if graph.number_of_nodes() <= SMALL_VIEW:
        return {str(node) for node in graph.nodes}
    return set(ranked_nodes(graph)[:limit]) | ({centre} if centre else set())


def always_named(graph: nx.Graph, centre: str | None, always: int) -> list[str]:
    """The entities always named, in the order their names are placed: the centre, then the `always`
    best-connected."""
    first = [centre] if centre is not None and centre in graph else []
    return list(dict.fromkeys([*first, *ranked_nodes(graph)[:always]]))


def node_size(degree: int, max_degree: int) -> float:
    """10 px for an isolated node up to 40 px for the best-connected one (square-root scale)."""
    if max_degree <= 0:
        return 10.0
    return round(10.0 + 30.0 * math.sqrt(degree / max_degree), 1)


def node_title(data: Mapping[str, Any], degree: int) -> str:
    """The tooltip: name, type, community, degree and mentions (HTML-escaped)."""
    community = data.get("community")
    facts = [str(data.get("type", "entity"))]
    if community is not None:
        facts.append(f"community {community}")
    facts += [f"degree {degree}", f"{int(data.get('mentions', 0))} mentions"]
    return html.escape(f"{data.get('name', '')}\n{' · '.join(facts)}", quote=True)


def node_label(data: Mapping[str, Any], limit: int = 32) -> str:
    """The text drawn under a node (the canvas draws it as text): the name, shortened."""
    name = " ".join(str(data.get("name", "")).split())
    return name if len(name) <= limit else name[: limit - 1] + "…"


def build_network_html(
    graph: nx.Graph, *, colour_by: ColourBy = "type", max_nodes: int = MAX_NODES, centre: str | None = None,
    height: int = HEIGHT, community_titles: Mapping[int, str] | None = None, max_edges: int = MAX_EDGES,
    patient: PatientOverlay | None = None, always: int = ALWAYS_LABELLED,
) -> GraphView:
    """The graph (capped to max_nodes by degree, keeping the centre and a patient's linked entities, and to its
    max_edges strongest relations) as a self-contained HTML page; nodes are sized by their degree among the shown
    entities, the centre and the `always` best-connected are always named. A patient is drawn as one more node
    with its LINKS_TO edges."""
    kept = cap_graph(graph, max_nodes, [*([centre] if centre else []), *(patient.entity_ids() if patient else [])])
    degrees = dict(kept.degree())
    shown = cap_edges(kept, max_edges)
    net = Network(height=f"{height - 30}px", width="100%", cdn_resources="in_line")
    net.set_options(json.dumps(_options(shown.number_of_nodes())))
    top = max(degrees.values(), default=0)
    palette = community_palette(shown)
    must = always_named(kept, centre, always)
    named = labelled_nodes(kept, centre) | set(must)
    for node, data in shown.nodes(data=True):
        colour = node_colour(data, colour_by, palette)
        options: dict[str, Any] = {"title": node_title(data, degrees[node]), "size": node_size(degrees[node], top)}
        if str(node) in named:
            options["font"] = {"size": LABEL_SIZE, "strokeWidth": 4, "strokeColor": "#ffffff"}
        if node == centre:
            options.update(borderWidth=4, color={"background": colour, "border": "#111827"})
        label = node_label(data) if str(node) in named else " "
        net.add_node(str(node), label=label, color=options.pop("color", colour), **options)
    weights = [float(w) for _, _, w in shown.edges(data="weight", default=1.0)]
    heaviest = max(weights, default=1.0) or 1.0
    for source, target, weight in shown.edges(data="weight", default=1.0):
        net.add_edge(str(source), str(target), width=round(1 + 4 * float(weight) / heaviest, 2), title=f"weight {float(weight):g}")
    if patient is not None:
        add_patient(net, patient, {str(n) for n in shown.nodes}, {"size": LABEL_SIZE, "strokeWidth": 4, "strokeColor": "#ffffff"})
    page = strip_remote_resources(net.generate_html())
    # Placed in this order: the always-named (centre first), then by degree (a name that would overlap is left off).
    ranked = list(dict.fromkeys([*must, *(n for n in ranked_nodes(kept) if n in named)]))
    names = {str(n): " ".join(str(d.get("name", "")).split()) for n, d in shown.nodes(data=True)}
    marker = canvas_script(ranked, len(must), centre if centre in kept else None, names)
    page = page.replace("</body>", marker + "</body>", 1)
    legend = legend_items(shown, colour_by, community_titles or {}, palette, centre is not None)
    if patient is not None:
        legend.append((PATIENT_COLOUR, PATIENT_LEGEND))
    return GraphView(
        page, shown.number_of_nodes(), shown.number_of_edges(), graph.number_of_nodes(), kept.number_of_edges(),
        legend, len(named & {str(n) for n in shown.nodes}), min(always, kept.number_of_nodes()),
    )


def strip_remote_resources(page: str) -> str:
    """The page without `<link>`/`<script>` tags that load anything from another host (nor empty headings)."""
    return _EMPTY_HEADING.sub("", _REMOTE_TAG.sub("", page))


def _options(nodes: int) -> dict[str, Any]:
    """vis-network options: a bounded physics layout, hover tooltips, no layout work once it settles."""
    return {
        "nodes": {"shape": "dot", "font": {"size": 13, "face": "sans-serif"}},
        "edges": {"color": {"color": "#cbd5e1", "highlight": "#334155"}, "smooth": False},
        "physics": {
            "solver": "forceAtlas2Based",
            "forceAtlas2Based": {"gravitationalConstant": -60, "springLength": 110, "avoidOverlap": 0.4},
            "stabilization": {"enabled": True, "iterations": 200 if nodes > 80 else 120, "fit": True},
        },
        "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
    }


def legend_items(
    graph: nx.Graph, colour_by: ColourBy, community_titles: Mapping[int, str], palette: Mapping[int, str],
    centred: bool = False,
) -> list[tuple[str, str]]:
    """(colour, meaning) for every colour drawn: each type or community shown, grey for the rest."""
    if colour_by == "type":
        present = sorted({str(data.get("type")) for _, data in graph.nodes(data=True)})
        items = [(TYPE_COLOURS.get(kind, OTHER_COLOUR), kind) for kind in present if kind in TYPE_COLOURS]
        if any(kind not in TYPE_COLOURS for kind in present):
            items.append((OTHER_COLOUR, "other types"))
    else:
        items = [(colour, community_titles.get(c, f"community {c}")) for c, colour in palette.items()]
        if any(c is None or int(c) not in palette for _, c in graph.nodes(data="community")):
            items.append((OTHER_COLOUR, "other communities" if len(palette) == len(COMMUNITY_COLOURS) else "no community"))
    if centred:
        items.append(("#111827", "the entity you centred on (dark ring)"))
    return items


def legend_html(items: list[tuple[str, str]]) -> str:
    """The legend as escaped HTML: a dot of each colour and what it means."""
    spans = "".join(
        f'<span style="margin-right:14px;white-space:nowrap;display:inline-block"><span style="display:inline-block;'
        f'width:10px;height:10px;border-radius:5px;background:{colour}"></span> {html.escape(text)}</span>'
        for colour, text in items
    )
    return f'<div id="legend" style="font-size:13px;line-height:1.8">{spans}</div>'


def render_graph_view(view: GraphView, *, key: str) -> None:
    """The network in an iframe, with the cap stated when nodes were left out."""
    relations = f"{view.shown_edges} relations"
    if view.shown_edges < view.total_edges:
        relations = f"the {view.shown_edges} strongest of their {view.total_edges} relations"
    if view.capped:
        st.caption(
            f"Showing the {view.shown_nodes} best-connected of {view.total_nodes} entities and {relations}. "
            "Filter or search to see the others."
        )
    else:
        st.caption(f"{view.shown_nodes} entities, {relations}.")
    if view.legend:
        # Legend text (types, community titles) comes from documents: legend_html escapes it.
        st.markdown(legend_html(view.legend), unsafe_allow_html=True)
    with st.container(key=key):
        st.iframe(view.html, height=HEIGHT)
    if view.labelled < view.shown_nodes:
        st.caption(
            f"The {view.always} best-connected {'entity is' if view.always == 1 else 'entities are'} always named, "
            "others where their names fit; hover over a dot for its name, click it to ask about it in chat or centre on it."
        )
    else:
        st.caption("Click a dot to ask about its entity in chat or centre the graph on it.")
