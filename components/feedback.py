"""How pages report outcomes: user-facing errors, and short messages that survive a rerun."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from components.text import escape_markdown
from workspace_app.errors import WorkspaceError

log = logging.getLogger("workspace_app.ui")

GENERIC_ERROR = "Something went wrong on our side. Try again; if it keeps happening, check the server log."
_FLASH_KEY = "_flash"


@contextmanager
def report_errors() -> Iterator[None]:
    """Show a `WorkspaceError` as its user message and anything else as a generic one (logged in full)."""
    try:
        yield
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
    except Exception:
        log.exception("unexpected error in the UI")
        st.error(GENERIC_ERROR, icon=":material/error:")


def flash(message: str, icon: str = ":material/check_circle:") -> None:
    """Remember a confirmation (plain text) to show after the next rerun, with a ✓ unless another icon is given
    (":material/info:" for something that was not done, such as a file already in the workspace)."""
    st.session_state[_FLASH_KEY] = (message, icon)


def show_flash() -> None:
    """Show and forget the remembered confirmation, if any."""
    remembered = st.session_state.pop(_FLASH_KEY, None)
    if remembered:
        message, icon = remembered
        st.toast(escape_markdown(message), icon=icon)
