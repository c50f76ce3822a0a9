"""Accounts in the UI (WORKSPACE_ACCOUNTS__ENABLED): the local sign-in form, the signed-in user of the session,
and the role checks pages make before an action (the policy decides; the service refuses anyway).

With accounts off the user is None (the one person of the install) and every check passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import streamlit as st

from workspace_app.app import Action, App
from workspace_app.errors import WorkspaceError
from workspace_app.models.accounts import User

USER = "account-user"


def current_user() -> User | None:
    """The signed-in user of this session (None with accounts off)."""
    user: User | None = st.session_state.get(USER)
    return user


def is_signed_in(app: App) -> bool:
    """True with accounts off, or once this session has signed in."""
    return not app.accounts.enabled or current_user() is not None


def render_account_sign_in(app: App, *, key: str = "account") -> None:
    """The name-and-password form; a right pair signs the session in (recorded) and reruns into the app."""
    st.title("Workspace")
    with st.form(key=f"{key}-form"):
        name = st.text_input("User name", key=f"{key}-name")
        password = st.text_input("Password", type="password", key=f"{key}-password")
        submitted = st.form_submit_button("Sign in", key=f"{key}-submit")
    if not submitted:
        return
    try:
        st.session_state[USER] = app.accounts.sign_in(name, password)
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/lock:")
        return
    st.rerun()


def render_account_bar(user: User, *, key: str = "account-bar") -> None:
    """Who is signed in, and a button to sign out (in the sidebar)."""
    with st.sidebar:
        st.caption(f"Signed in as **{escape_name(user.name)}**{' (admin)' if user.is_admin else ''}")
        if st.button("Sign out", key=f"{key}-sign-out", icon=":material/logout:"):
            st.session_state.clear()
            st.rerun()


def escape_name(name: str) -> str:
    """A user name for Markdown (names are letters, digits and . _ @ + -; the underscore still needs escaping)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!|<>" else ch for ch in name)


def may(app: App, workspace_id: str, action: Action) -> bool:
    """Whether the signed-in user's role allows the action in the workspace (to hide or disable a control)."""
    return app.accounts.allowed(current_user(), workspace_id, action)


def require(app: App, workspace_id: str, action: Action) -> None:
    """Refuse (PermissionDeniedError, or not found for a stranger) an action the user's role does not allow."""
    app.accounts.open(current_user(), workspace_id, action)


def record(app: App, action: str, workspace_id: str = "", target: str = "", detail: str = "") -> None:
    """Append to the audit log as the signed-in user (nothing with accounts off)."""
    app.accounts.record(current_user(), action, workspace_id, target, detail)


def role_caption(app: App, workspace_id: str) -> str:
    """'Your role here: viewer…' for a user who cannot edit, else ''."""
    user = current_user()
    if user is None or may(app, workspace_id, Action.EDIT):
        return ""
    return "Your role here is viewer: you can read and ask; answers are not kept in chats."


def export_recorder(
    app: App, workspace_id: str, target: str, otherwise: Literal["ignore", "rerun"] = "ignore"
) -> Callable[[], None] | Literal["ignore", "rerun"]:
    """A download button's `on_click` that records the export (accounts on), else `otherwise` (as before)."""
    if current_user() is None:
        return otherwise
    return lambda: record(app, "exported", workspace_id, target)
