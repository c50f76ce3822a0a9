"""Notes page: answers saved from chat (with their citations), studio outputs (FAQ, briefing, study guide built
from the sources) and notes of one's own in Markdown; edit them, delete them (after a confirmation), or export
them all to Markdown."""

from __future__ import annotations

import streamlit as st

from components.account import export_recorder, may, require
from components.application import current_app
from components.feedback import flash, report_errors, show_flash
from components.notes import NoteAction, close_note_editor, render_new_note, render_note
from components.source_viewer import render_citation_viewer, sticky_viewer_style
from components.studio import render_studio
from components.workspace_gate import forget_citation, remember_citation, remembered_citation, render_workspace_gate
from workspace_app.app import Action, App, NoteService, safe_file_name
from workspace_app.models.answers import Citation, Note
from workspace_app.models.documents import Workspace

LIST_KEY = "note"
CITED = "notes-cited"
CITE_PARAM = "note-cite"  # ?note-cite=<note id>:<n>: the citation open in the panel, kept over a reload
VIEWER_KEY = "notes-viewer"


def apply_note_action(app: App, notes: NoteService, workspace: Workspace, action: NoteAction) -> None:
    """Add, edit, delete a note or add it to the sources, then rerun so the page shows the result."""
    with report_errors():
        require(app, workspace.id, Action.EDIT)
        if action.kind == "source":
            add_as_source(app, notes, workspace, action.note_id or "")
        elif action.kind == "create":
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


def add_as_source(app: App, notes: NoteService, workspace: Workspace, note_id: str) -> None:
    """Queue the note as a Markdown source of the workspace (its title, text and citations), and say so."""
    note = notes.get_note(workspace.id, note_id)
    markdown = notes.note_markdown(workspace.id, note_id)
    report = app.documents.submit(workspace.id, markdown.encode("utf-8"), safe_file_name(note.title, "md", "note"))
    if report.status in ("failed", "duplicate"):
        flash(report.error or "The note could not be added as a source.", icon=":material/info:")
    else:
        flash(f"“{report.document}” added to the sources; it is being read (see Sources).")


def render_page(app: App, notes: NoteService) -> None:
    """Header, a new note, export, one card per note."""
    st.title("Notes")
    workspace = render_workspace_gate(app.workspaces.get, purpose="its notes are listed here")
    if workspace is None:
        return
    show_flash()
    editable = may(app, workspace.id, Action.EDIT)
    if not editable:  # a viewer reads the notes; nothing that writes one is drawn (and each write checks the role)
        st.caption("Your role here is viewer: you can read and export the notes; writing, building or saving one needs "
                   "an editor's role.")
    render_studio(app, workspace, can_save=editable)
    created = render_new_note(key="new-note") if editable else None
    if created:
        apply_note_action(app, notes, workspace, created)
    listed = None
    with report_errors():
        listed = notes.list_notes(workspace.id)
    if listed is None:
        return
    if not listed:
        st.info("No notes yet. Build one in the studio, write one above, or use “Save to notes” under an answer in Chat.",
                icon=":material/bookmark:")
        return
    st.download_button(
        "Export notes to Markdown", notes.export_notes(workspace.id).encode("utf-8"),
        file_name=safe_file_name(f"Notes - {workspace.name}", "md", "notes"), mime="text/markdown",
        key="notes-export", icon=":material/download:", on_click=export_recorder(app, workspace.id, "notes"),
    )
    present: set[str] | None = None
    with report_errors():
        present = {d.id for d in app.documents.list(workspace.id)}
    cards, panel = st.columns([3, 2], gap="large")
    with cards:
        for note in listed:
            action = render_note(note, key=LIST_KEY, present=present, editable=editable)
            if action and action.kind == "cite":
                remember_citation(CITED, CITE_PARAM, note.id, action.n)
            elif action:
                apply_note_action(app, notes, workspace, action)
    with panel:
        sticky_viewer_style(VIEWER_KEY)
        cited, marks = _cited(listed)
        render_citation_viewer(app, workspace.id, cited, marks, key=VIEWER_KEY)


def _cited(notes: list[Note]) -> tuple[Citation | None, list[Citation]]:
    """The citation a chip opened (set while the notes above rendered; after a reload, the one the URL names) and
    its answer's citations. One of a note that is gone is forgotten."""
    note_id, n = remembered_citation(CITED, CITE_PARAM) or (None, None)
    note = next((x for x in notes if x.id == note_id), None)
    if note is None or note.answer is None:
        if note_id is not None:
            forget_citation(CITED, CITE_PARAM)
        return None, []
    return next((c for c in note.answer.citations if c.n == n), None), note.answer.citations


app = current_app()
render_page(app, app.notes)
