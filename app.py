"""Streamlit entry point: page config, the App (built once per process), and navigation over `pages/`.

Run it through `workspace-app serve` (or `make run`), which also starts the Chroma server and tells this
process where it is (WORKSPACE_CHROMA_URL) and which data dir to use (WORKSPACE_DATA_DIR).
"""

from __future__ import annotations

import logging

from workspace_app.adapters.process import prepare_process

prepare_process()  # before anything imports pymupdf (onnxruntime) when Streamlit runs this file directly

import streamlit as st
from PIL import Image, ImageDraw

from components.access import is_unlocked, render_sign_in
from components.account import current_user, render_account_bar, render_account_sign_in, sign_in_from_provider
from components.application import current_app
from components.feedback import GENERIC_ERROR
from workspace_app.app import App
from workspace_app.config import load_settings
from workspace_app.errors import WorkspaceError

log = logging.getLogger("workspace_app.ui")

PAGES = [
    st.Page("pages/workspaces.py", title="Workspaces", icon=":material/folder_open:", default=True),
    st.Page("pages/sources.py", title="Sources", icon=":material/description:"),
    st.Page("pages/chat.py", title="Chat", icon=":material/forum:"),
    st.Page("pages/graph.py", title="Graph", icon=":material/hub:"),
    st.Page("pages/notes.py", title="Notes", icon=":material/bookmark:"),
    st.Page("pages/patients.py", title="Patients", icon=":material/patient_list:"),
    st.Page("pages/evaluation.py", title="Evaluation", icon=":material/fact_check:"),
]


@st.cache_resource(show_spinner=False)
def favicon() -> Image.Image:
    """A plain square served by this app: Material icons as favicons (also each page's icon) load from
    fonts.gstatic.com, which an offline app must not call."""
    image = Image.new("RGB", (32, 32), "#1d4ed8")
    ImageDraw.Draw(image).rectangle((8, 7, 24, 25), outline="#ffffff", width=3)
    return image


def main() -> None:
    """Configure the page, open the App (pages take it from `current_app()`), run the chosen page."""
    st.set_page_config(page_title="Workspace", page_icon=favicon(), layout="wide")
    try:
        settings = load_settings()
        password = settings.ui.password
    except WorkspaceError as exc:  # e.g. a blank WORKSPACE_UI__PASSWORD: nothing opens until the settings are fixed
        st.error("The settings are not valid: " + exc.user_message, icon=":material/error:")
        st.stop()
    if not is_unlocked(password):
        assert password is not None
        # The only page until the password is given: every URL (/chat, /sources...) leads here.
        sign_in = st.Page(lambda: render_sign_in(password), title="Sign in", icon=":material/lock:", url_path="sign-in")
        st.navigation([sign_in], position="hidden").run()
        return
    if settings.accounts.enabled and current_user() is None:
        app = open_app()
        if not sign_in_from_provider(app):  # back from the identity provider, or the only page until signed in
            sign_in = st.Page(lambda: render_account_sign_in(app), title="Sign in", icon=":material/login:",
                              url_path="sign-in")
            st.navigation([sign_in], position="hidden").run()
            return
    user = current_user()
    if user is not None:
        render_account_bar(open_app(), user)
    # Patient records are not shared per workspace yet: with accounts on only admins see them.
    page = st.navigation([p for p in PAGES if user is None or user.is_admin or p.title != "Patients"], position="top")
    open_app()
    page.run()


def open_app() -> App:
    """The App of this process, or the page stops with what went wrong."""
    try:
        return current_app()
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
        st.stop()
    except Exception:
        log.exception("the workspace application could not be built")
        st.error(GENERIC_ERROR, icon=":material/error:")
        st.stop()
    raise AssertionError("st.stop() ends the run")


main()
