"""The UI password (settings `ui.password`): a sign-in form in front of every page, once per session."""

from __future__ import annotations

import streamlit as st
from pydantic import SecretStr

from workspace_app.config import secret_digest, secret_matches

UNLOCKED = "ui-unlocked"


def password_matches(given: str, expected: SecretStr) -> bool:
    """Whether `given` is the password (configured in clear or as `sha256:<hex>`), compared by digest in constant
    time; an empty `given` never is (Settings refuse a blank password)."""
    return secret_matches(given, secret_digest(expected.get_secret_value()))


def is_unlocked(expected: SecretStr | None) -> bool:
    """True without a password configured, or once this session has given it."""
    return expected is None or bool(st.session_state.get(UNLOCKED))


def render_sign_in(expected: SecretStr, *, key: str = "sign-in") -> None:
    """The password form; a correct password unlocks the session and reruns into the app."""
    st.title("Workspace")
    with st.form(key=f"{key}-form"):
        given = st.text_input("Password", type="password", key=f"{key}-password")
        submitted = st.form_submit_button("Sign in", key=f"{key}-submit")
    if submitted and password_matches(given, expected):
        st.session_state[UNLOCKED] = True
        st.rerun()
    if submitted:
        st.error("Wrong password.", icon=":material/lock:")
