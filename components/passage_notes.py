"""'Save selection to notes': the text the reader selected in the viewer's page becomes a note citing it.

The viewer's frame cannot talk back to Python (`st.iframe` only shows), so a small bidirectional component
(`st.components.v2`, drawn in the app's own document, no iframe) sits under it: on click it reads the selection
inside the frame (same origin), the page it lies on and its boxes converted to PDF points, and sends them as a
one-shot trigger. The note is made by the NoteService (`save_passage`), with the citation a saved answer has.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from workspace_app.app import App
from workspace_app.errors import WorkspaceError
from workspace_app.models.documents import Document, Rect

MAX_BOXES = 200  # selection boxes kept (a whole page is ~60 lines)

_HTML = """<button type='button' class='save' title='Select text in the page, then keep it as a note citing this page'>Save selection to notes</button><span class='hint'></span>"""
_CSS = """
.save{font:inherit;font-size:14px;padding:6px 12px;min-height:40px;border:1px solid rgba(49,51,63,.2);border-radius:8px;
 background:#fff;cursor:pointer}
.save:hover{border-color:#ff4b4b;color:#ff4b4b}
.hint{margin-left:10px;color:#6b6f76;font-size:13px}
"""
# The selection's text, the page its start lies on, and its line boxes on that page in PDF points (the page's
# size in points is on the page element: data-w / data-h).
_JS = """
export default function(component) {
  const { data, setTriggerValue, parentElement } = component;
  const button = parentElement.querySelector('.save'), hint = parentElement.querySelector('.hint');
  button.onclick = function() {
    const frame = document.querySelector(data.frame);
    const win = frame && frame.contentWindow, sel = win && win.getSelection();
    const text = sel ? sel.toString().trim() : '';
    const start = sel && sel.rangeCount ? sel.getRangeAt(0).startContainer : null;
    const el = start && (start.nodeType === 1 ? start : start.parentElement);
    const page = el && el.closest('.page');
    if (!text || !page) { hint.textContent = 'Select text in the page first.'; return; }
    const box = page.getBoundingClientRect(), w = parseFloat(page.dataset.w), h = parseFloat(page.dataset.h);
    const rects = Array.from(sel.getRangeAt(0).getClientRects())
      .filter(function(r) { return r.width > 0 && r.left < box.right && r.top < box.bottom && r.bottom > box.top; })
      .map(function(r) { return [(r.left - box.left) / box.width * w, (r.top - box.top) / box.height * h,
                                 (r.right - box.left) / box.width * w, (r.bottom - box.top) / box.height * h]; });
    hint.textContent = '';
    setTriggerValue('save', {text: text, page: parseInt(page.dataset.page, 10), rects: rects});
  };
}
"""
_SAVER = st.components.v2.component("passage_saver", html=_HTML, css=_CSS, js=_JS)


def render_passage_saver(app: App, workspace: str, document: Document, *, frame: str, key: str) -> None:
    """The save button under the viewer whose frame is inside the container `frame`; saves what was selected."""
    result = _SAVER(key=f"{key}-saver", data={"frame": f".st-key-{frame} iframe"}, on_save_change=lambda: None,
                    width="content")
    picked = getattr(result, "save", None)
    if not picked:
        return
    try:
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
