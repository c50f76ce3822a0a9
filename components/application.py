"""The App of this UI process, built once (`st.cache_resource`) and handed to every page, typed; and the evaluation
over it (the Evaluation page's), which sits above the App and so is built beside it by the same wiring."""

from __future__ import annotations

import streamlit as st

from workspace_app.adapters.wiring import EvaluationService, build_app, build_evaluation
from workspace_app.app import App
from workspace_app.config import load_settings


@st.cache_resource(show_spinner="Opening the workspace store…")
def current_app() -> App:
    """One App per process: storage connections and the embedder are long-lived."""
    return build_app(load_settings())


def current_evaluation() -> EvaluationService:
    """The evaluation of question files on this process's App (cheap: it holds only the App)."""
    return build_evaluation(current_app())
