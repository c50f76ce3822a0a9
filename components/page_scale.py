"""Sharp pages at every zoom: the viewer's pages drawn at the scale the frame's zoom and the screen's pixel ratio
need, without reloading the frame.

A page is first drawn at `ui.viewer_render_scale` pixels per point (fast: the chip -> painted time). The frame
reports the scale it needs (page width on screen x devicePixelRatio / page width in points) whenever it is laid
out or zoomed; this small bidirectional component (`st.components.v2`, in the app's document) rounds it up to a
half step and, when it is more than what is drawn, asks Python for it (one rerun). Python then draws the pages at
that scale (capped by `ui.viewer_max_render_scale`), keeps it for the viewer, and hands the sharper images'
URLs back; the component swaps them into the frame's images once they have loaded, so the reader's zoom and
scroll position stay where they are (a new frame would scroll back to the passage).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class RenderScales:
    """Pixels per PDF point: what a page is first drawn at, and the most it is ever drawn at."""

    first: float
    most: float


_JS = """
export default function(component) {
  const { data, setStateValue } = component;
  function frameOf() { return document.querySelector(data.frame); }
  function swap() {
    const frame = frameOf(), doc = frame && frame.contentDocument;
    if (!doc) return;
    Object.entries(data.sharp || {}).forEach(function([page, url]) {
      const img = doc.querySelector(".page[data-page='" + page + "'] img");
      if (!img || img.dataset.sharp === url) return;
      const next = new Image();
      next.onload = function() { img.src = url; img.dataset.sharp = url; };
      next.src = url;
    });
  }
  function need(event) {
    const frame = frameOf();
    if (!frame || event.detail.frame !== frame) return;
    const wanted = Math.min(data.most, Math.ceil(event.detail.need * 2) / 2);
    if (wanted > data.scale) setStateValue('need', wanted);
  }
  // The frame may have reported before this listener existed: read what it needs from its body as well.
  function settle() {
    swap();
    const frame = frameOf(), body = frame && frame.contentDocument && frame.contentDocument.body;
    const wanted = body ? parseFloat(body.dataset.need) : NaN;
    if (wanted > 0) need({detail: {frame: frame, need: wanted}});
  }
  const frame = frameOf();
  if (frame) frame.addEventListener('load', settle);
  window.addEventListener('viewer-scale', need);
  settle();
  return function() { window.removeEventListener('viewer-scale', need); if (frame) frame.removeEventListener('load', settle); };
}
"""
_SHARPENER = st.components.v2.component("page_sharpener", js=_JS)


def render_scale(scales: RenderScales, *, key: str) -> float:
    """The scale the viewer `key` draws its pages at: the largest its frame asked for (within the settings)."""
    asked = st.session_state.get(f"{key}-scale", scales.first)
    return min(scales.most, max(scales.first, float(asked)))


def render_sharpener(scales: RenderScales, scale: float, sharp: Mapping[int, str], *, frame: str, key: str) -> None:
    """Listen for the frame's need and swap in the `sharp` images (page -> URL) drawn at `scale`."""
    _SHARPENER(key=f"{key}-sharpener", data={"frame": f".st-key-{frame} iframe", "scale": scale, "most": scales.most,
                                              "sharp": {str(p): url for p, url in sharp.items()}},
               on_need_change=lambda: _keep_need(key), height=0)


def _keep_need(key: str) -> None:
    """Keep the scale the frame asked for (it only grows: a page once sharp stays sharp while the viewer is open)."""
    asked = (st.session_state.get(f"{key}-sharpener") or {}).get("need")
    if isinstance(asked, (int, float)) and math.isfinite(asked):
        st.session_state[f"{key}-scale"] = max(float(asked), float(st.session_state.get(f"{key}-scale", 0.0)))
