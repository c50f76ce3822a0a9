"""What runs on the Graph page's canvas besides vis-network, and the way a click there reaches Python.

- `canvas_script(...)`: the script added to the vis-network page. Once the layout settles it fits the graph to
  the frame and sizes the names to read at LABEL_PX whatever the fitted scale. The first `always` entities of
  `ranked` (the centre, then the best-connected) are always named: one whose name would cover another name or a
  dot is moved to the nearest free spot within the frame (or, in a crowd, to the one covering fewest dots). The
  others are named where their names fit (a name that would cover another name or a dot, or run out of the
  frame, is left off; the dot keeps its tooltip). Clicking a dot opens a small menu
  on the canvas: "Ask about X in chat" and "Centre on X", posted to the parent page as a message.
- `render_node_menu_bridge(...)`: a Streamlit v2 component (no iframe, no UI) in the parent page that takes
  those messages, from the graph's own frame only, and hands them to Python as a `NodeAction`.

Entity names come from documents: they reach the script as JSON with `<`, `>` and `&` escaped (so nothing
closes the script early) and are shown with `textContent` (never parsed as HTML).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import streamlit as st

LABEL_PX = 13
SETTLE_MS = 1500
NodeActionKind = Literal["ask", "centre"]
MESSAGE_SOURCE = "workspace-graph"

# SEE: https://visjs.github.io/vis-network/docs/network/ (getScale, canvasToDOM, moveNode, the click event)
_SCRIPT = """<script>
(function () {
  if (typeof network === "undefined") { return; }
  var ranked = %(ranked)s, always = %(always)d, centre = %(centre)s, names = %(names)s, texts = {};
  ranked.forEach(function (id) { var node = nodes.get(id); if (node) { texts[id] = node.label; } });
  function overlaps(a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; }
  function shift(box, dx, dy) { return {id: box.id, l: box.l + dx, t: box.t + dy, r: box.r + dx, b: box.b + dy}; }
  function dotBox(id, node) {
    var r = node.shape && node.shape.radius ? node.shape.radius : 0;
    return {id: id, l: node.x - r, t: node.y - r, r: node.x + r, b: node.y + r};
  }
  function inFrame(box) {
    var frame = document.getElementById("mynetwork");
    var a = network.canvasToDOM({x: box.l, y: box.t}), b = network.canvasToDOM({x: box.r, y: box.b});
    return a.x >= 0 && a.y >= 0 && b.x <= frame.clientWidth && b.y <= frame.clientHeight;
  }
  // Where an always-named entity's name and dot fit: where they are, else the nearest spot (rings around it)
  // clear of the names kept and of every dot; failing that, the one clear of the names that covers fewest dots.
  function freeSpot(id, label, dot, kept, dots, step) {
    var best = null;
    for (var ring = 0; ring <= 12; ring++) {
      var turns = ring === 0 ? 1 : 8 + 4 * ring;
      for (var k = 0; k < turns; k++) {
        var angle = 2 * Math.PI * k / turns, dx = ring * step * Math.cos(angle), dy = ring * step * Math.sin(angle);
        var box = shift(label, dx, dy), moved = shift(dot, dx, dy);
        if (!inFrame(box) || !inFrame(moved)) { continue; }
        if (kept.some(function (k2) { return overlaps(box, k2) || overlaps(moved, k2); })) { continue; }
        var covered = dots.filter(function (d) { return d.id !== id && (overlaps(box, d) || overlaps(moved, d)); }).length;
        if (covered === 0) { return {dx: dx, dy: dy, box: box}; }
        if (best === null || covered < best.covered) { best = {dx: dx, dy: dy, box: box, covered: covered}; }
      }
    }
    return best || {dx: 0, dy: 0, box: label};
  }
  function placeLabels() {
    var scale = network.getScale(), size = %(px)d / scale;
    nodes.update(ranked.map(function (id) {
      return {id: id, label: texts[id], font: {size: size, strokeWidth: 4, strokeColor: "#ffffff"}};
    }));
    network.once("afterDrawing", function () {
      var all = network.body.nodes, gap = 3 / scale, kept = [], hidden = [], named = [];
      var dots = nodes.getIds().filter(function (id) { return all[id]; }).map(function (id) { return dotBox(id, all[id]); });
      ranked.forEach(function (id, i) {
        var node = all[id];
        if (!node || !node.labelModule) { return; }
        var s = node.labelModule.size;
        var box = {id: id, l: s.left - gap, t: s.top - gap, r: s.left + s.width + gap, b: s.top + s.height + gap};
        if (i < always) {
          var dot = dotBox(id, node), spot = freeSpot(id, box, dot, kept, dots, s.height + 2 * gap);
          if (spot.dx || spot.dy) {
            network.moveNode(id, node.x + spot.dx, node.y + spot.dy);
            dots = dots.map(function (d) { return d.id === id ? shift(dot, spot.dx, spot.dy) : d; });
          }
          kept.push(spot.box); named.push(id);
        } else if (!inFrame(box) || kept.some(function (k) { return overlaps(box, k); }) ||
                   dots.some(function (d) { return d.id !== id && overlaps(box, d); })) {
          hidden.push(id);
        } else {
          kept.push(box); named.push(id);
        }
      });
      nodes.update(hidden.map(function (id) { return {id: id, label: " "}; }));
      network.once("afterDrawing", function () {
        document.body.dataset.labels = String(named.length);
        document.body.dataset.always = JSON.stringify(named.slice(0, always));
        document.body.dataset.labelPx = String(Math.round(size * scale));
      });
      network.redraw();
    });
    network.redraw();
  }
  network.once("afterDrawing", function () { document.body.dataset.drawnMs = String(performance.now()); });
  // Once the layout settles (a small graph may settle before stabilization runs, so "stabilized" counts too,
  // and a last check after SETTLE_MS).
  var settled = false;
  function settle() {
    if (settled) { return; }
    settled = true;
    network.setOptions({ physics: false });
    network.fit({ animation: false });
    placeLabels();
    document.body.dataset.fitted = "1";
    document.body.dataset.stableMs = String(performance.now());
  }
  network.once("stabilizationIterationsDone", settle);
  network.once("stabilized", settle);
  setTimeout(function () { if (network.physics.stabilized) { settle(); } }, %(settle_ms)d);
  window.addEventListener("resize", function () { network.fit({ animation: false }); placeLabels(); });

  // The node menu: what a click on a dot offers, sent to the Streamlit page (render_node_menu_bridge).
  var menu = document.createElement("div"), title = document.createElement("div");
  menu.id = "node-menu";
  menu.style.cssText = "position:fixed;display:none;z-index:5;background:#fff;border:1px solid #cbd5e1;" +
    "border-radius:8px;box-shadow:0 4px 14px rgba(15,23,42,.18);padding:8px 10px;font:13px sans-serif;max-width:280px";
  title.style.cssText = "font-weight:600;margin-bottom:4px;overflow-wrap:anywhere;color:#111827";
  function menuButton(action) {
    var button = document.createElement("button");
    button.type = "button";
    button.dataset.action = action;
    button.style.cssText = "display:block;width:100%%;margin-top:4px;padding:4px 8px;border:1px solid #cbd5e1;" +
      "border-radius:6px;background:#f8fafc;color:#111827;font:13px sans-serif;text-align:left;cursor:pointer";
    button.addEventListener("click", function () {
      window.parent.postMessage({source: "%(source)s", action: action, id: menu.dataset.node}, "*");
      menu.style.display = "none";
    });
    return button;
  }
  var ask = menuButton("ask"), centreOn = menuButton("centre");
  menu.append(title, ask, centreOn);
  document.body.appendChild(menu);
  function hideMenu() { menu.style.display = "none"; }
  network.on("click", function (params) {
    var id = params.nodes.length ? String(params.nodes[0]) : null;
    if (id === null || !Object.prototype.hasOwnProperty.call(names, id)) { hideMenu(); return; }
    menu.dataset.node = id;
    title.textContent = names[id];
    ask.textContent = "Ask about " + names[id] + " in chat";
    centreOn.textContent = "Centre on " + names[id];
    centreOn.style.display = id === centre ? "none" : "block";
    var frame = document.getElementById("mynetwork").getBoundingClientRect();
    menu.style.display = "block";
    // Beside the dot, on the side with more room (below it in the upper half of the frame, above it lower down).
    var x = frame.left + params.pointer.DOM.x + 12, y = frame.top + params.pointer.DOM.y;
    y = params.pointer.DOM.y < frame.height / 2 ? y + 12 : y - menu.offsetHeight - 12;
    menu.style.left = Math.max(4, Math.min(x, window.innerWidth - menu.offsetWidth - 4)) + "px";
    menu.style.top = Math.max(4, Math.min(y, window.innerHeight - menu.offsetHeight - 4)) + "px";
  });
  network.on("dragStart", hideMenu);
  network.on("zoom", hideMenu);
  document.addEventListener("keydown", function (event) { if (event.key === "Escape") { hideMenu(); } });
})();
</script>
"""

# Runs in the Streamlit page itself; takes only messages whose sender is the iframe inside `.st-key-<frame>`.
_BRIDGE_JS = """
export default function (component) {
  const { setTriggerValue, data } = component;
  const onMessage = (event) => {
    const frame = document.querySelector(`.st-key-${data.frame} iframe`);
    const message = event.data;
    if (!frame || event.source !== frame.contentWindow || !message || message.source !== data.source) { return; }
    if ((message.action === "ask" || message.action === "centre") && typeof message.id === "string") {
      setTriggerValue(message.action, message.id);
    }
  };
  window.addEventListener("message", onMessage);
  return () => window.removeEventListener("message", onMessage);
}
"""


@dataclass(frozen=True)
class NodeAction:
    """A choice made in the canvas's node menu: ask about the entity in chat, or centre the graph on it."""

    kind: NodeActionKind
    entity_id: str


def script_json(value: Any) -> str:
    """JSON safe inside a `<script>` element: `<`, `>` and `&` escaped, so a name cannot end the script."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def canvas_script(ranked: Sequence[str], always: int, centre: str | None, names: Mapping[str, str]) -> str:
    """The script placed before `</body>` of the vis-network page (label placement and the node menu)."""
    return _SCRIPT % {
        "ranked": script_json(list(ranked)), "always": always, "centre": script_json(centre),
        "names": script_json(dict(names)), "px": LABEL_PX, "source": MESSAGE_SOURCE, "settle_ms": SETTLE_MS,
    }


@st.cache_resource(show_spinner=False)
def _bridge() -> Any:
    """The v2 component, registered once per process."""
    return st.components.v2.component("workspace_graph_node_menu", js=_BRIDGE_JS)


def render_node_menu_bridge(*, frame_key: str, key: str) -> NodeAction | None:
    """The node menu's choice made since the last run (None when there was none)."""
    with st.container(key=f"{key}-box"):
        st.html(f"<style>.st-key-{key}-box{{display:none}}</style>")
        result = _bridge()(key=key, data={"frame": frame_key, "source": MESSAGE_SOURCE}, on_ask_change=_ignore, on_centre_change=_ignore)
    for kind in ("ask", "centre"):
        value = result.get(kind) if result is not None else None
        if isinstance(value, str) and value:
            return NodeAction(kind, value)  # type: ignore[arg-type]
    return None


def _ignore() -> None:
    """A trigger value reaches Python only with a callback registered for it; the run reads the value itself."""
