"""Widgets of the Workspaces page: the create form and the list with open, rename and delete.

Rename and delete open an inline editor under the row (one at a time); the page closes it with
`close_workspace_editor` once the service call succeeded, so a failed rename keeps what the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import streamlit as st

from components.text import escape_markdown, format_date, plural
from workspace_app.models.documents import Workspace

ActionKind = Literal["create", "open", "rename", "delete"]


@dataclass(frozen=True)
class WorkspaceAction:
    """What the user asked for: the kind, the workspace (by id) and a name where one was typed."""

    kind: ActionKind
    workspace_id: str | None = None
    name: str | None = None


def render_create_form(*, key: str) -> WorkspaceAction | None:
    """A one-line form for a new workspace name."""
    with st.form(key, clear_on_submit=True, border=False):
        name_col, button_col = st.columns([5, 1], vertical_alignment="bottom")
        name = name_col.text_input(
            "New workspace", key=f"{key}-name", max_chars=80, placeholder="e.g. Type 2 diabetes guidelines"
        )
        submitted = button_col.form_submit_button(
            "Create", key=f"{key}-submit", type="primary", icon=":material/add:", width="stretch"
        )
    return WorkspaceAction("create", name=name) if submitted else None


def render_workspace_list(
    workspaces: list[Workspace], *, current: str | None, key: str, manageable: set[str] | None = None
) -> WorkspaceAction | None:
    """One card per workspace with its document count, creation date and actions (Rename and Delete disabled on
    those not in `manageable`, when given: the user's role there does not allow them)."""
    if not workspaces:
        # Signed in (`manageable` given): a workspace someone else owns shows here once they share it.
        shared = " Workspaces others share with you appear here too." if manageable is not None else ""
        st.info(f"No workspaces yet. Create one above, then add PDFs to it as sources.{shared}", icon=":material/inbox:")
        return None
    action = None
    for workspace in workspaces:
        locked = manageable is not None and workspace.id not in manageable
        action = _render_card(workspace, is_current=workspace.id == current, key=key, locked=locked) or action
    return action


def close_workspace_editor(*, key: str) -> None:
    """Close the inline rename or delete editor of the list rendered with `key`."""
    st.session_state.pop(_editor_key(key), None)


def _render_card(workspace: Workspace, *, is_current: bool, key: str, locked: bool = False) -> WorkspaceAction | None:
    with st.container(border=True, key=f"{key}-card-{workspace.id}"):
        info_col, buttons_col = st.columns([3, 2], vertical_alignment="center")
        with info_col:
            _render_summary(workspace, is_current=is_current)
        with buttons_col:
            action = _render_buttons(workspace, is_current=is_current, key=key, locked=locked)
        editing = st.session_state.get(_editor_key(key))
        if editing == ("rename", workspace.id):
            action = _render_rename(workspace, key=key) or action
        elif editing == ("delete", workspace.id):
            action = _render_delete(workspace, key=key) or action
    return action


def _render_summary(workspace: Workspace, *, is_current: bool) -> None:
    badge = "  :primary-badge[:material/check: Current]" if is_current else ""
    st.markdown(f"**{escape_markdown(workspace.name)}**{badge}")
    # A file that failed is not a source of the workspace: it is counted apart.
    sources = plural(workspace.document_count - workspace.failed_count, "document")
    failed = f" · {workspace.failed_count} failed" if workspace.failed_count else ""
    st.caption(f"{sources}{failed} · created {format_date(workspace.created_at)}")


def _render_buttons(workspace: Workspace, *, is_current: bool, key: str, locked: bool = False) -> WorkspaceAction | None:
    open_col, rename_col, delete_col = st.columns(3)
    opened = open_col.button(
        "Current" if is_current else "Open", key=f"{key}-open-{workspace.id}", disabled=is_current,
        icon=":material/folder_open:", width="stretch",
    )
    rename_col.button(
        "Rename", key=f"{key}-rename-{workspace.id}", icon=":material/edit:", width="stretch", disabled=locked,
        on_click=_open_editor, args=(key, "rename", workspace.id),
    )
    delete_col.button(
        "Delete", key=f"{key}-delete-{workspace.id}", icon=":material/delete:", width="stretch", disabled=locked,
        on_click=_open_editor, args=(key, "delete", workspace.id),
    )
    return WorkspaceAction("open", workspace.id) if opened else None


def _render_rename(workspace: Workspace, *, key: str) -> WorkspaceAction | None:
    name_col, save_col, cancel_col = st.columns([4, 1, 1], vertical_alignment="bottom")
    new_name = name_col.text_input("New name", value=workspace.name, max_chars=80, key=f"{key}-new-name-{workspace.id}")
    saved = save_col.button("Save", key=f"{key}-save-{workspace.id}", type="primary", width="stretch")
    cancel_col.button("Cancel", key=f"{key}-cancel-rename-{workspace.id}", width="stretch",
                      on_click=close_workspace_editor, kwargs={"key": key})
    return WorkspaceAction("rename", workspace.id, new_name) if saved else None


def _render_delete(workspace: Workspace, *, key: str) -> WorkspaceAction | None:
    documents = plural(workspace.document_count, "document")
    st.warning(
        f"Delete **{escape_markdown(workspace.name)}** with its {documents} and everything built from them? "
        "This cannot be undone.",
        icon=":material/warning:",
    )
    confirm_col, cancel_col, _ = st.columns([2, 1, 3])
    confirmed = confirm_col.button(
        "Delete permanently", key=f"{key}-confirm-delete-{workspace.id}", type="primary", width="stretch"
    )
    cancel_col.button("Cancel", key=f"{key}-cancel-delete-{workspace.id}", width="stretch",
                      on_click=close_workspace_editor, kwargs={"key": key})
    return WorkspaceAction("delete", workspace.id) if confirmed else None


def _open_editor(key: str, mode: str, workspace_id: str) -> None:
    st.session_state[_editor_key(key)] = (mode, workspace_id)


def _editor_key(key: str) -> str:
    return f"{key}-editor"
