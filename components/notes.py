"""Widgets of the Notes page: a note of one's own (Markdown), and each note's card with edit and delete.

Edit and delete open an inline editor in the card (one at a time, like the Workspaces page); delete asks first.
Every button carries the id of the note it was drawn for. The page closes the editor with `close_note_editor`
once the service call succeeded, so a failed save keeps what the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import streamlit as st

from components.citations import removed_documents, render_answer
from components.text import escape_markdown, format_date
from workspace_app.models.answers import Note

NoteActionKind = Literal["create", "update", "delete", "cite", "source"]
# Where a note's saved answer came from, by its answerer (an asked answer: "Saved from chat").
_SAVED_FROM = {"studio": "Built in the studio", "passage": "Saved from the viewer"}


@dataclass(frozen=True)
class NoteAction:
    """What the user asked for: the kind, the note (by id) and the title and Markdown text typed, the chip
    (`cite`, its number `n`) clicked in the note's saved answer, or the note added as a source (`source`)."""

    kind: NoteActionKind
    note_id: str | None = None
    title: str | None = None
    body: str | None = None
    n: int | None = None


def render_new_note(*, key: str) -> NoteAction | None:
    """A form for a note of one's own: a title and Markdown text."""
    with (
        st.expander("New note", icon=":material/note_add:", key=f"{key}-expander"),
        st.form(key, clear_on_submit=True, border=False),
    ):
        title = st.text_input("Title", key=f"{key}-title", max_chars=200)
        body = st.text_area("Note (Markdown)", key=f"{key}-body", height=160)
        added = st.form_submit_button("Add note", key=f"{key}-submit", type="primary", icon=":material/add:")
    return NoteAction("create", title=title, body=body) if added else None


def render_note(note: Note, *, key: str, present: set[str] | None = None, editable: bool = True) -> NoteAction | None:
    """A note's title, date, own text, saved answer (with its chips) and, when `editable` (the user's role allows
    it), its add-as-source, edit and delete actions."""
    action = None
    with st.container(border=True, key=f"{key}-{note.id}"):
        title_col, source_col, edit_col, delete_col = st.columns([4, 2, 1.2, 1.5], vertical_alignment="center")
        title_col.markdown(f"**{escape_markdown(note.title)}**")
        if not editable:
            return _render_content(note, key=key, present=present)
        if source_col.button("Add as source", key=f"{key}-source-{note.id}", icon=":material/upload_file:",
                             type="tertiary", help="Add this note to the workspace's sources, so chat can answer from it"):
            action = NoteAction("source", note.id)
        edit_col.button("Edit", key=f"{key}-edit-{note.id}", icon=":material/edit:", type="tertiary",
                        on_click=_open_editor, args=(key, "edit", note.id))
        delete_col.button("Delete", key=f"{key}-delete-{note.id}", icon=":material/delete:", type="tertiary",
                          on_click=_open_editor, args=(key, "delete", note.id))
        editing = st.session_state.get(_editor_key(key))
        # The confirmation has a place of its own, drawn empty when not asked for, so the note's text below keeps
        # its position: otherwise, while the page reruns after Cancel, the browser shows it twice (the stale
        # copy where it was and the new one) until the run ends.
        confirmation = st.container()
        if editing == ("delete", note.id):
            with confirmation:
                action = _render_delete(note, key=key)
        if editing == ("edit", note.id):
            action = _render_edit(note, key=key) or action
        else:
            action = _render_content(note, key=key, present=present) or action
    return action


def close_note_editor(*, key: str) -> None:
    """Close the inline edit or delete editor of the notes rendered with `key`."""
    st.session_state.pop(_editor_key(key), None)


def _render_content(note: Note, *, key: str, present: set[str] | None = None) -> NoteAction | None:
    edited = f" · edited {format_date(note.updated_at)}" if note.updated_at and note.updated_at != note.created_at else ""
    kind = "Written" if note.answer is None else _SAVED_FROM.get(note.answer.answerer, "Saved from chat")
    st.caption(f"{kind} {format_date(note.created_at)}{edited}")
    if note.body:
        # The user's own Markdown, rendered as Markdown (raw HTML stays off: Streamlit's default).
        st.markdown(note.body)
    if note.answer is not None:
        # `present`: the workspace's document ids, so that citations of removed sources are marked (None: unknown).
        removed = frozenset() if present is None else removed_documents(note.answer.citations, present)
        clicked = render_answer(note.answer, key=f"{key}-answer-{note.id}", can_save=False, removed=removed)
        if clicked is not None and clicked.kind == "cite":
            return NoteAction("cite", note.id, n=clicked.n)
    return None


def _render_edit(note: Note, *, key: str) -> NoteAction | None:
    title = st.text_input("Title", value=note.title, max_chars=200, key=f"{key}-title-{note.id}")
    label = "Your note (Markdown)" if note.answer is None else "Your comment (Markdown), shown above the answer"
    body = st.text_area(label, value=note.body, height=160, key=f"{key}-body-{note.id}")
    save_col, cancel_col, _ = st.columns([1, 1, 4])
    saved = save_col.button("Save", key=f"{key}-save-{note.id}", type="primary", width="stretch")
    cancel_col.button("Cancel", key=f"{key}-cancel-edit-{note.id}", width="stretch",
                      on_click=close_note_editor, kwargs={"key": key})
    return NoteAction("update", note.id, title, body) if saved else None


def _render_delete(note: Note, *, key: str) -> NoteAction | None:
    st.warning(f"Delete the note **{escape_markdown(note.title)}**? This cannot be undone.", icon=":material/warning:")
    confirm_col, cancel_col, _ = st.columns([2, 1, 3])
    confirmed = confirm_col.button("Delete permanently", key=f"{key}-confirm-delete-{note.id}", type="primary",
                                   width="stretch")
    cancel_col.button("Cancel", key=f"{key}-cancel-delete-{note.id}", width="stretch",
                      on_click=close_note_editor, kwargs={"key": key})
    return NoteAction("delete", note.id) if confirmed else None


def _open_editor(key: str, mode: str, note_id: str) -> None:
    st.session_state[_editor_key(key)] = (mode, note_id)


def _editor_key(key: str) -> str:
    return f"{key}-editor"
