"""Notes page: answers saved from chat, with their citations; delete them or export them all to Markdown."""

from __future__ import annotations

import streamlit as st

from components.application import current_app
from components.citations import render_answer
from components.feedback import flash, report_errors, show_flash
from components.source_viewer import render_citation_viewer, sticky_viewer_style
from components.text import escape_markdown, format_date
from components.workspace_gate import render_workspace_gate
from workspace_app.app import AnswerService, App, answer_markdown, escape
from workspace_app.models.answers import Citation, Note
from workspace_app.models.documents import Workspace

CITED = "notes-cited"
VIEWER_KEY = "notes-viewer"


def notes_markdown(workspace: Workspace, notes: list[Note]) -> str:
    """All notes of a workspace as one Markdown document."""
    parts = [f"# Notes: {escape(workspace.name)}", ""]
    for note in notes:
        parts += [f"## {escape(note.title)}", "", answer_markdown(note.answer), ""]
    return "\n".join(parts).rstrip() + "\n"


def render_page(app: App, answers: AnswerService) -> None:
    """Header, export, one card per note."""
    st.title("Notes")
    workspace = render_workspace_gate(app.workspaces.get, purpose="its notes are listed here")
    if workspace is None:
        return
    show_flash()
    notes = None
    with report_errors():
        notes = answers.list_notes(workspace.id)
    if notes is None:
        return
    if not notes:
        st.info("No notes yet. Use “Save to notes” under an answer in Chat.", icon=":material/bookmark:")
        return
    st.download_button(
        "Export notes to Markdown", notes_markdown(workspace, notes).encode("utf-8"), file_name="notes.md",
        mime="text/markdown", key="notes-export", icon=":material/download:", on_click="ignore",
    )
    listed, panel = st.columns([3, 2], gap="large")
    with listed:
        for note in notes:
            _render_note(answers, workspace, note)
    with panel:
        sticky_viewer_style(VIEWER_KEY)
        cited, marks = _cited(notes)
        render_citation_viewer(app, workspace.id, cited, marks, key=VIEWER_KEY)


def _cited(notes: list[Note]) -> tuple[Citation | None, list[Citation]]:
    """The citation a chip opened (set while the notes above rendered) and its answer's citations."""
    note_id, n = st.session_state.get(CITED) or (None, None)
    note = next((x for x in notes if x.id == note_id), None)
    if note is None:
        return None, []
    return next((c for c in note.answer.citations if c.n == n), None), note.answer.citations


def _render_note(answers: AnswerService, workspace: Workspace, note: Note) -> None:
    with st.container(border=True, key=f"note-{note.id}"):
        st.markdown(f"**{escape_markdown(note.title)}**")
        st.caption(f"Saved {format_date(note.created_at)}")
        action = render_answer(note.answer, key=f"note-answer-{note.id}", can_save=False)
        if action and action.kind == "cite":
            st.session_state[CITED] = (note.id, action.n)
        if st.button("Delete note", key=f"note-delete-{note.id}", icon=":material/delete:", type="tertiary"):
            with report_errors():
                answers.delete_note(workspace.id, note.id)
                flash("Note deleted.")
                st.rerun()


app = current_app()
render_page(app, app.answers)
