"""'Save selection' (to notes): the text the reader selected in the viewer's page becomes a note citing it.

The viewer's frame cannot talk back to Python (`st.iframe` only shows), so its 'Save selection' button raises
an event on the app's window (same origin) with the selection, the page it lies on and its boxes converted to PDF
points, and a small bidirectional component (`st.components.v2`, in the app's own document, no height) beside the
frame sends it to Python as a one-shot trigger. The note is made by the NoteService (`save_passage`), with the citation a saved answer has.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.account import require
from workspace_app.app import Action, App
from workspace_app.errors import WorkspaceError
from workspace_app.models.documents import Document, Rect

MAX_BOXES = 200  # selection boxes kept (a whole page is ~60 lines)

# The frame's 'Save selection' button sends the selection's text, the page its start lies on and its line boxes in
# PDF points as an event on the app's window; this passes the one from its own frame on to Python.
_JS = """
export default function(component) {
  const { data, setTriggerValue } = component;
  function save(event) {
    const frame = document.querySelector(data.frame);
    if (!frame || event.detail.frame !== frame) return;
    setTriggerValue('save', {text: event.detail.text, page: event.detail.page, rects: event.detail.rects});
  }
  window.addEventListener('viewer-save', save);
  return function() { window.removeEventListener('viewer-save', save); };
}
"""
_SAVER = st.components.v2.component("passage_saver", js=_JS)


def render_passage_saver(app: App, workspace: str, document: Document, *, frame: str, key: str) -> None:
    """Listen beside the viewer whose frame is inside the container `frame`; save the selection it sends."""
    result = _SAVER(key=f"{key}-saver", data={"frame": f".st-key-{frame} iframe"}, on_save_change=lambda: None,
                    height=0)
    picked = getattr(result, "save", None)
    if not picked:
        return
    try:
        require(app, workspace, Action.EDIT)  # the viewer offers it only to such a role; a stale frame may still send
        note = app.notes.save_passage(workspace, document.id, int(picked.get("page", 0)), str(picked.get("text", "")),
                                      selection_rects(picked.get("rects"), int(picked.get("page", 0))))
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
        return
    st.toast(f"Saved to notes: {note.title}", icon=":material/bookmark_added:")


def selection_rects(raw: Any, page: int) -> tuple[Rect, ...]:
    """The selection's boxes sent by the browser as Rects of `page` (malformed ones dropped, at most MAX_BOXES)."""
    rects = []
    for box in raw if isinstance(raw, list) else []:
        try:
            x0, y0, x1, y1 = (float(v) for v in box)
        except (TypeError, ValueError):
            continue
        if x1 > x0 and y1 > y0:
            rects.append(Rect(page, x0, y0, x1, y1))
    return _lines(rects[:MAX_BOXES])


def _lines(rects: list[Rect]) -> tuple[Rect, ...]:
    """One box per line of the selection (the browser gives one per word of the text layer): boxes whose middles
    are within half a box's height of each other, side by side, are joined, so the note's red sentence is drawn as
    lines, not as a box around every word."""
    joined: list[Rect] = []
    for rect in rects:
        middle, half = (rect.y0 + rect.y1) / 2, (rect.y1 - rect.y0) / 2
        line = next((i for i, r in enumerate(joined) if abs((r.y0 + r.y1) / 2 - middle) <= half), None)
        if line is None:
            joined.append(rect)
            continue
        r = joined[line]
        joined[line] = Rect(r.page, min(r.x0, rect.x0), min(r.y0, rect.y0), max(r.x1, rect.x1), max(r.y1, rect.y1))
    return tuple(joined)
