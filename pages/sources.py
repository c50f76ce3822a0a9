"""Sources page: upload files into the current workspace, follow their ingestion live, manage them.

Uploading only stores the files and queues them; the worker ingests them. The one list below (a row per source:
state, progress, error, use in chat, actions, source guide) re-reads the documents every second (a fragment)
when the page is drawn while any of them is queued or running, until the page is drawn again (any click, another
page). The list never reruns the whole page itself when the last job ends: that run coincided with the user's next
click (the "ready" they waited for), and a click on a page link that reached the server during that run was lost
now and then under load: the page stayed Sources (Streamlit replaces the running run with the click's; both share
the session's page state).
"""

from __future__ import annotations

import streamlit as st

from components.account import record, require, role_caption
from components.application import current_app
from components.feedback import flash, report_errors, show_flash
from components.source_viewer import render_removal_warning, render_source_preview
from components.sources import (
    SourceAction,
    Upload,
    clear_uploader,
    close_remove_confirmation,
    render_source_rows,
    render_summary,
    render_upload_problems,
    render_uploader,
    take_early_action,
)
from components.text import escape_markdown, plural
from components.workspace_gate import render_workspace_gate
from workspace_app.app import Action, App
from workspace_app.models.documents import Workspace

UPLOAD_KEY = "sources-upload"
PROBLEMS = "sources-upload-problems"
DUPLICATES = "sources-upload-duplicates"
ROWS_KEY = "sources"
POLL_S = 1.0


def submit_uploads(app: App, workspace: Workspace, uploads: list[Upload]) -> None:
    """Queue the dropped files; remember the refused and the duplicate ones (with their reasons) to show them."""
    require(app, workspace.id, Action.EDIT)
    reports = [app.documents.submit(workspace.id, upload.data, upload.name) for upload in uploads]
    for report in reports:
        record(app, "uploaded", workspace.id, report.document, report.status)
    queued = [r for r in reports if r.status == "queued"]
    duplicates = [r for r in reports if r.status == "duplicate"]
    # A file refused before it was recorded (too large, unsupported) is listed here; one recorded as failed (empty,
    # not a PDF) shows its error in its own row.
    refused = [r for r in reports if r.status == "failed" and r.document_id is None]
    st.session_state[PROBLEMS] = [r.error or f"{r.document} could not be added." for r in refused]
    # Kept with the id of the source each one duplicates: once that source is removed the file is no longer "already
    # in this workspace", and its line goes (see current_duplicates).
    st.session_state[DUPLICATES] = [
        (r.document_id, r.error or f"{r.document} is already in this workspace.") for r in duplicates
    ]
    checked_out = [r for r in reports if r.status == "failed" and r.document_id is not None]
    parts = [f"Queued {plural(len(queued), 'file')} for ingestion"] if queued else []
    parts += [f"{plural(len(checked_out), 'file')} could not be read (the reason is shown in the list)"] if checked_out else []
    parts += [f"{plural(len(duplicates), 'file')} already in this workspace"] if duplicates else []
    if parts:
        flash("; ".join(parts) + ".", ":material/check_circle:" if queued else ":material/info:")
    clear_uploader(key=UPLOAD_KEY)
    st.rerun()


def current_duplicates(present: set[str]) -> list[str]:
    """The duplicate uploads' messages whose source is still in the workspace (the others are forgotten)."""
    kept = [(document_id, text) for document_id, text in st.session_state.get(DUPLICATES, []) if document_id in present]
    st.session_state[DUPLICATES] = kept
    return [text for _, text in kept]


def apply_early_action(app: App, workspace: Workspace, action: SourceAction) -> None:
    """Cancel, include or exclude a source before the list is drawn, which then shows it ("Cancelling…", the tick)."""
    with report_errors():
        require(app, workspace.id, Action.EDIT)
        if action.kind == "cancel":
            app.documents.cancel(workspace.id, action.document_id)
        else:
            app.documents.set_included(workspace.id, action.document_id, action.kind == "include")


def apply_action(app: App, workspace: Workspace, action: SourceAction) -> None:
    """Retry or remove a source, then rerun the whole page (a message follows)."""
    with report_errors():
        require(app, workspace.id, Action.EDIT)
        if action.kind == "retry":
            flash(f"Queued {app.documents.retry(workspace.id, action.document_id).name} again.")
        elif action.kind == "remove":
            removed = app.documents.remove(workspace.id, action.document_id)
            record(app, "removed", workspace.id, removed.name)
            flash(f"Removed {removed.name}.")
            close_remove_confirmation(key=ROWS_KEY)
        st.rerun()


def render_live_sources(app: App, workspace: Workspace) -> None:
    """Table, rows and the preview; re-run every POLL_S seconds when the page was drawn with something in progress."""
    early = take_early_action(key=ROWS_KEY)
    if early:
        apply_early_action(app, workspace, early)
    documents = None
    with report_errors():
        documents = app.documents.list(workspace.id)
    if documents is None:
        return
    if not documents:
        st.info("No sources yet. Drop PDF, text or Markdown files above.", icon=":material/upload_file:")
        return
    render_summary(documents)
    st.caption("Ticked sources are used to answer questions in chat.")
    guides = None
    with report_errors():
        guides = app.guides.guides(workspace.id)
    removing = next((d for d in documents if d.id == st.session_state.get(f"{ROWS_KEY}-confirm")), None)
    if removing:
        render_removal_warning(removing.name, app.chats.source_uses(workspace.id, removing.id))
    action = render_source_rows(documents, guides, key=ROWS_KEY)
    if action:
        apply_action(app, workspace, action)
    with report_errors():  # here, not after the fragment: a source that became ready can be previewed at once
        render_source_preview(app, workspace.id, documents, key="sources-preview")


def render_page(app: App) -> None:
    """The whole page: header, drop zone, refused uploads, live list and preview."""
    st.title("Sources")
    workspace = render_workspace_gate(app.workspaces.get, purpose="its sources are managed here")
    if workspace is None:
        return
    st.caption(f"Workspace **{escape_markdown(workspace.name)}**")
    show_flash()
    viewer_note = role_caption(app, workspace.id)
    if viewer_note:  # a viewer reads the sources; the drop zone is not drawn (the service refuses anyway)
        st.caption(viewer_note)
    uploads = None if viewer_note else render_uploader(
        suffixes=app.documents.upload_suffixes(), limit_mb=app.settings.ingest.max_file_mb, key=UPLOAD_KEY,
    )
    if uploads:
        with report_errors():
            submit_uploads(app, workspace, uploads)
    documents = []
    with report_errors():
        documents = app.documents.list(workspace.id)
    duplicates = current_duplicates({d.id for d in documents})
    if render_upload_problems(st.session_state.get(PROBLEMS, []), duplicates, key=PROBLEMS):
        st.session_state.pop(PROBLEMS, None)
        st.session_state.pop(DUPLICATES, None)
        st.rerun()
    polling = any(d.is_active for d in documents)
    st.fragment(render_live_sources, run_every=POLL_S if polling else None)(app, workspace)


render_page(current_app())
