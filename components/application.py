"""The App of this UI process, built once (`st.cache_resource`) and handed to every page, typed."""

from __future__ import annotations

import streamlit as st

from workspace_app.adapters.wiring import build_app
from workspace_app.app import App
from workspace_app.config import load_settings


@st.cache_resource(show_spinner="Opening the workspace store…")
def current_app() -> App:
    """One App per process: storage connections and the embedder are long-lived."""
    return build_app(load_settings())
