"""Accounts in the UI (WORKSPACE_ACCOUNTS__ENABLED): sign-in (through the identity provider with Streamlit's
`st.login` when one is configured, else the local name-and-password form), the signed-in user of the session, and
the role checks pages make before an action (the policy decides; the service refuses anyway).

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
REFUSED = "account-refused"  # why the identity provider's person may not sign in here


def current_user() -> User | None:
    """The signed-in user of this session (None with accounts off)."""
    user: User | None = st.session_state.get(USER)
    return user


def is_signed_in(app: App) -> bool:
    """True with accounts off, or once this session has signed in."""
    return not app.accounts.enabled or current_user() is not None


def provider_signed_in() -> bool:
    """Whether this browser is signed in at the identity provider (Streamlit's st.user; False without one)."""
    return bool(st.user.get("is_logged_in", False))


def sign_in_from_provider(app: App) -> bool:
    """Sign the session in as the user the identity provider's person is (made at their first sign-in; recorded),
    once the provider has sent the browser back; False when nobody signed in there or they may not sign in here
    (the reason is kept for the sign-in page)."""
    if not app.accounts.settings.oidc_configured or not provider_signed_in():
        return False
    try:
        st.session_state[USER] = app.accounts.sign_in_claims(st.user.to_dict())
    except WorkspaceError as exc:
        st.session_state[REFUSED] = exc.user_message
        return False
    return True


def render_account_sign_in(app: App, *, key: str = "account") -> None:
    """The sign-in page: 'Sign in with <provider>' when an identity provider is configured (and the local form too
    with WORKSPACE_ACCOUNTS__OIDC_WITH_PASSWORDS), else the local name-and-password form."""
    st.title("Workspace")
    settings = app.accounts.settings
    if not settings.oidc_configured:
        render_password_sign_in(app, key=key)
        return
    render_provider_sign_in(settings.oidc_provider_name, key=key)
    if settings.oidc_with_passwords:
        st.caption("Or with a local account:")
        render_password_sign_in(app, key=key)


def render_provider_sign_in(provider: str, *, key: str = "account") -> None:
    """The identity provider's button (st.login sends the browser there and back); a person signed in there but
    refused here is told why and may sign out of the provider to try another account."""
    if "is_logged_in" not in st.user.to_dict():  # Streamlit has no [auth] secrets: not started by our launcher
        st.error("Sign-in through the identity provider needs the UI started by `workspace-app serve` (or `python -m "
                 "workspace_app.adapters.ui app.py`), which hands the provider's settings to Streamlit.",
                 icon=":material/error:")
        return
    refused = st.session_state.get(REFUSED)
    if provider_signed_in() and refused:
        st.error(refused, icon=":material/lock:")
        if st.button("Sign out", key=f"{key}-provider-sign-out", icon=":material/logout:"):
            st.session_state.clear()
            st.logout()
            st.stop()
        return
    if st.button(f"Sign in with {provider}", key=f"{key}-provider", type="primary", icon=":material/login:"):
        st.login()
    st.caption(f"{escape_name(provider)} checks who you are and sends you back here. The first time, you start with "
               "no workspaces: you see those you create and those others share with you.")


def render_password_sign_in(app: App, *, key: str = "account") -> None:
    """The name-and-password form; a right pair signs the session in (recorded) and reruns into the app."""
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


def render_account_bar(app: App, user: User, *, key: str = "account-bar") -> None:
    """Who is signed in, and a button to sign out (in the sidebar; recorded; out of the identity provider too)."""
    with st.sidebar:
        st.caption(f"Signed in as **{escape_name(user.name)}**{' (admin)' if user.is_admin else ''}")
        if st.button("Sign out", key=f"{key}-sign-out", icon=":material/logout:"):
            app.accounts.sign_out(user)
            st.session_state.clear()
            if provider_signed_in():
                st.logout()  # the cookie goes, and the provider ends its session (when it offers that)
                st.stop()
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
