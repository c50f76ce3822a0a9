"""Notes page: answers saved from chat (with their citations) and notes of one's own in Markdown; edit them,
delete them (after a confirmation), or export them all to Markdown."""

from __future__ import annotations

import streamlit as st

from components.application import current_app
from components.feedback import flash, report_errors, show_flash
from components.notes import NoteAction, close_note_editor, render_new_note, render_note
from components.source_viewer import render_citation_viewer, sticky_viewer_style
from components.workspace_gate import render_workspace_gate
from workspace_app.app import App, NoteService, safe_file_name
from workspace_app.models.answers import Citation, Note
from workspace_app.models.documents import Workspace

LIST_KEY = "note"
CITED = "notes-cited"
VIEWER_KEY = "notes-viewer"


def apply_note_action(notes: NoteService, workspace: Workspace, action: NoteAction) -> None:
    """Add, edit or delete a note, then rerun so the list shows the result."""
    with report_errors():
        if action.kind == "create":
            notes.add_note(workspace.id, action.title or "", action.body or "")
            flash("Note added.")
        elif action.kind == "update":
            notes.update_note(workspace.id, action.note_id or "", action.title or "", action.body or "")
            flash("Note saved.")
        else:
            notes.delete_note(workspace.id, action.note_id or "")
            flash("Note deleted.")
        close_note_editor(key=LIST_KEY)
        st.rerun()


def render_page(app: App, notes: NoteService) -> None:
    """Header, a new note, export, one card per note."""
    st.title("Notes")
    workspace = render_workspace_gate(app.workspaces.get, purpose="its notes are listed here")
    if workspace is None:
        return
    show_flash()
    created = render_new_note(key="new-note")
    if created:
        apply_note_action(notes, workspace, created)
    listed = None
    with report_errors():
        listed = notes.list_notes(workspace.id)
    if listed is None:
        return
    if not listed:
        st.info("No notes yet. Write one above, or use “Save to notes” under an answer in Chat.", icon=":material/bookmark:")
        return
    st.download_button(
        "Export notes to Markdown", notes.export_notes(workspace.id).encode("utf-8"),
        file_name=safe_file_name(f"Notes - {workspace.name}", "md", "notes"), mime="text/markdown",
        key="notes-export", icon=":material/download:", on_click="ignore",
    )
    present: set[str] | None = None
    with report_errors():
        present = {d.id for d in app.documents.list(workspace.id)}
    cards, panel = st.columns([3, 2], gap="large")
    with cards:
        for note in listed:
            action = render_note(note, key=LIST_KEY, present=present)
            if action and action.kind == "cite":
                st.session_state[CITED] = (note.id, action.n)
            elif action:
                apply_note_action(notes, workspace, action)
    with panel:
        sticky_viewer_style(VIEWER_KEY)
        cited, marks = _cited(listed)
        render_citation_viewer(app, workspace.id, cited, marks, key=VIEWER_KEY)


def _cited(notes: list[Note]) -> tuple[Citation | None, list[Citation]]:
    """The citation a chip opened (set while the notes above rendered) and its answer's citations."""
    note_id, n = st.session_state.get(CITED) or (None, None)
    note = next((x for x in notes if x.id == note_id), None)
    if note is None or note.answer is None:
        return None, []
    return next((c for c in note.answer.citations if c.n == n), None), note.answer.citations


app = current_app()
render_page(app, app.notes)
