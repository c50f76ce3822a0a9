"""Workspaces page: create, open, rename and delete workspaces; the open one is the current workspace.

The current workspace's id is kept in `st.session_state["workspace"]` for the other pages, and in the URL
(`?workspace=<id>`) so a reload or a bookmark comes back to it.
"""

from __future__ import annotations

import streamlit as st

from components.application import current_app
from components.feedback import flash, report_errors, show_flash
from components.workspace_gate import current_workspace_id, forget_workspace, remember_workspace
from components.workspaces import (
    WorkspaceAction,
    close_workspace_editor,
    render_create_form,
    render_workspace_list,
)
from workspace_app.app import App

LIST_KEY = "workspaces"


def apply_action(app: App, action: WorkspaceAction) -> None:
    """Carry out what the user asked for, then rerun so the list shows the result."""
    with report_errors():
        if action.kind == "create":
            workspace = app.workspaces.create(action.name or "")
            remember_workspace(workspace.id)
            flash(f"Created workspace {workspace.name}.")
        elif action.kind == "open":
            workspace = app.workspaces.get(action.workspace_id or "")
            remember_workspace(workspace.id)
            flash(f"Now working in {workspace.name}.")
        elif action.kind == "rename":
            workspace = app.workspaces.rename(action.workspace_id or "", action.name or "")
            flash(f"Renamed to {workspace.name}.")
        else:
            _delete(app, action.workspace_id or "")
        close_workspace_editor(key=LIST_KEY)
        st.rerun()


def _delete(app: App, workspace_id: str) -> None:
    workspace = app.workspaces.get(workspace_id)
    app.workspaces.delete(workspace.id)
    if current_workspace_id() == workspace.id:
        forget_workspace()
    flash(f"Deleted workspace {workspace.name}.")


def render_page(app: App) -> None:
    """The whole page: header, create form, list."""
    st.title("Workspaces")
    st.caption(
        "A workspace holds the sources of one project. Answers, citations and the entity graph only ever "
        "use the sources of the workspace you are working in."
    )
    show_flash()
    created = render_create_form(key="create-workspace")
    if created:
        apply_action(app, created)
    st.subheader("Your workspaces")
    workspaces = None
    with report_errors():
        workspaces = app.workspaces.list()
    if workspaces is not None:
        current = current_workspace_id()
        if current in {w.id for w in workspaces}:
            remember_workspace(current)
        picked = render_workspace_list(workspaces, current=current, key=LIST_KEY)
        if picked:
            apply_action(app, picked)


render_page(current_app())
