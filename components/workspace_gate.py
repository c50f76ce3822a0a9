"""The session's current workspace, and what a page shows when there is none."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from workspace_app.errors import WorkspaceNotFoundError
from workspace_app.models.documents import Workspace

CURRENT = "workspace"


def render_workspace_gate(lookup: Callable[[str], Workspace], *, purpose: str) -> Workspace | None:
    """The current workspace, or None after pointing the user to the Workspaces page.

    Args:
        lookup: finds a workspace by id and raises WorkspaceNotFoundError when it is gone.
        purpose: what the page does with a workspace, e.g. "its sources are managed here".
    """
    workspace_id = st.session_state.get(CURRENT)
    if workspace_id is not None:
        try:
            return lookup(workspace_id)
        except WorkspaceNotFoundError:
            st.session_state.pop(CURRENT, None)
    st.info(f"Open or create a workspace first; {purpose}.", icon=":material/folder_open:")
    st.page_link("pages/workspaces.py", label="Go to Workspaces", icon=":material/arrow_forward:")
    return None
