"""The session's current workspace, kept in the URL too (`?workspace=<id>`), and what a page shows without one.

A reload or a bookmark starts a new session with only the URL: the workspace comes back from its query
parameter, and with a single workspace and none named, that one is opened. Pages may add their own parameters
(the Chat page adds `chat`) with `set_url_param`.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components.account import current_user, require
from components.application import current_app
from workspace_app.app import Action
from workspace_app.errors import WorkspaceNotFoundError
from workspace_app.models.documents import Workspace

CURRENT = "workspace"
PARAM = "workspace"


def current_workspace_id() -> str | None:
    """The workspace the URL names, else the session's (the URL wins: it is what a bookmark brings back)."""
    from_url = st.query_params.get(PARAM)
    return from_url or st.session_state.get(CURRENT)


def remember_workspace(workspace_id: str) -> None:
    """Make a workspace the current one, in the session and in the URL."""
    st.session_state[CURRENT] = workspace_id
    if st.query_params.get(PARAM) != workspace_id:
        st.query_params.clear()
        st.query_params[PARAM] = workspace_id


def forget_workspace() -> None:
    """No current workspace any more (it was deleted)."""
    st.session_state.pop(CURRENT, None)
    st.query_params.clear()


def set_url_param(name: str, value: str | None) -> None:
    """Put a page's own state in the URL (None removes it); unchanged values are not written again."""
    if value is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value


def render_workspace_gate(lookup: Callable[[str], Workspace], *, purpose: str) -> Workspace | None:
    """The current workspace, or None after pointing the user to the Workspaces page.

    Args:
        lookup: finds a workspace by id and raises WorkspaceNotFoundError when it is gone.
        purpose: what the page does with a workspace, e.g. "its sources are managed here".
    """
    workspace_id = current_workspace_id()
    if workspace_id is not None:
        try:
            workspace = lookup(workspace_id)
            require(current_app(), workspace.id, Action.READ)  # accounts on: a stranger is told it does not exist
        except WorkspaceNotFoundError:
            forget_workspace()
            st.warning("The workspace in this link no longer exists.", icon=":material/link_off:")
        else:
            remember_workspace(workspace.id)
            return workspace
    only = _only_workspace()
    if only is not None:
        remember_workspace(only.id)
        return only
    st.info(f"Open or create a workspace first; {purpose}.", icon=":material/folder_open:")
    st.page_link("pages/workspaces.py", label="Go to Workspaces", icon=":material/arrow_forward:")
    return None


def _only_workspace() -> Workspace | None:
    """The workspace when there is exactly one: nothing to choose between."""
    app = current_app()
    workspaces = app.accounts.visible(current_user(), app.workspaces.list())
    return workspaces[0] if len(workspaces) == 1 else None


def remembered_citation(state_key: str, param: str) -> tuple[str, int] | None:
    """The citation a page has open, as (the id of the answer's message or note, its number): from the session,
    else from the URL (`?<param>=<id>:<n>`), so a reload or a shared link opens it again."""
    wanted = st.session_state.get(state_key)
    if wanted:
        return wanted  # type: ignore[no-any-return]
    owner, _, n = str(st.query_params.get(param) or "").rpartition(":")
    if not owner or not n.isdigit():
        return None
    st.session_state[state_key] = (owner, int(n))
    return owner, int(n)


def remember_citation(state_key: str, param: str, owner: str, n: int) -> None:
    """Keep the citation a chip opened, in the session and in the URL."""
    st.session_state[state_key] = (owner, n)
    set_url_param(param, f"{owner}:{n}")


def forget_citation(state_key: str, param: str) -> None:
    """Close the citation: neither the session nor the URL names it any more."""
    st.session_state.pop(state_key, None)
    set_url_param(param, None)
