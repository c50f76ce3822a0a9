"""Workspaces page: create, open, rename and delete workspaces; the open one is the current workspace.

The current workspace's id is kept in `st.session_state["workspace"]` for the other pages, and in the URL
(`?workspace=<id>`) so a reload or a bookmark comes back to it.
"""

from __future__ import annotations

import streamlit as st

from components.account import current_user, may, record, require
from components.application import current_app
from components.feedback import flash, report_errors, show_flash
from components.sharing import SharingAction, render_audit_download, render_sharing
from components.workspace_gate import current_workspace_id, forget_workspace, remember_workspace
from components.workspaces import (
    WorkspaceAction,
    close_workspace_editor,
    render_create_form,
    render_workspace_list,
)
from workspace_app.app import Action, App, export_audit
from workspace_app.models.documents import Workspace

LIST_KEY = "workspaces"


def apply_action(app: App, action: WorkspaceAction) -> None:
    """Carry out what the user asked for, then rerun so the list shows the result."""
    with report_errors():
        if action.kind == "create":
            workspace = app.workspaces.create(action.name or "")
            app.accounts.created(current_user(), workspace)  # accounts on: private to its creator, its owner
            remember_workspace(workspace.id)
            flash(f"Created workspace {workspace.name}.")
        elif action.kind == "open":
            require(app, action.workspace_id or "", Action.READ)
            workspace = app.workspaces.get(action.workspace_id or "")
            remember_workspace(workspace.id)
            flash(f"Now working in {workspace.name}.")
        elif action.kind == "rename":
            require(app, action.workspace_id or "", Action.MANAGE)
            workspace = app.workspaces.rename(action.workspace_id or "", action.name or "")
            record(app, "renamed workspace", workspace.id, workspace.name)
            flash(f"Renamed to {workspace.name}.")
        else:
            require(app, action.workspace_id or "", Action.MANAGE)
            _delete(app, action.workspace_id or "")
        close_workspace_editor(key=LIST_KEY)
        st.rerun()


def _delete(app: App, workspace_id: str) -> None:
    workspace = app.workspaces.get(workspace_id)
    app.workspaces.delete(workspace.id)
    record(app, "deleted workspace", workspace.id, workspace.name)
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
        workspaces = app.accounts.visible(current_user(), app.workspaces.list())
    if workspaces is not None:
        current = current_workspace_id()
        if current in {w.id for w in workspaces}:
            remember_workspace(current)
        manageable = None if current_user() is None else {w.id for w in workspaces if may(app, w.id, Action.MANAGE)}
        picked = render_workspace_list(workspaces, current=current, key=LIST_KEY, manageable=manageable)
        if picked:
            apply_action(app, picked)
        if current in {w.id for w in workspaces} and current_user() is not None and may(app, current, Action.MANAGE):
            share_workspace(app, next(w for w in workspaces if w.id == current))


AUDIT = "workspaces-audit-export"


def share_workspace(app: App, workspace: Workspace) -> None:
    """The owner's sharing section: members, share, unshare, the audit log export."""
    members = []
    with report_errors():
        members = app.accounts.members(current_user(), workspace.id)
    action = render_sharing(members, key="sharing")
    if isinstance(action, SharingAction):
        with report_errors():
            apply_sharing(app, workspace, action)
    if st.session_state.get(AUDIT, ("", ""))[0] == workspace.id:
        render_audit_download(st.session_state[AUDIT][1], key="sharing")


def apply_sharing(app: App, workspace: Workspace, action: SharingAction) -> None:
    """Share, unshare or prepare the audit export (the service checks the role again and records each)."""
    user = current_user()
    if action.kind == "audit":
        st.session_state[AUDIT] = (workspace.id, export_audit(app.accounts.audit(user, workspace.id), "csv"))
        return
    if action.kind == "share":
        app.accounts.share(user, workspace.id, action.user, action.role)
        flash(f"Shared {workspace.name} with {action.user} as {action.role}.")
    else:
        app.accounts.unshare(user, workspace.id, action.user)
        flash(f"{action.user} no longer has a role in {workspace.name}.")
    st.rerun()


render_page(current_app())
