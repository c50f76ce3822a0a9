"""Warm start: the UI process builds and warms its App before its server answers (what `serve` waits for), so
the pages' first session finds the embedding model loaded and the suggested questions ready."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    yield tmp_path / "data"
    st.cache_resource.clear()


def test_serve_starts_the_ui_through_the_warming_adapter(tmp_path: Path) -> None:
    from workspace_app.adapters.supervisor import READY_TIMEOUT_S, ui_spec

    spec = ui_spec(tmp_path, "http://127.0.0.1:1", 8501)
    assert spec.argv[1:3] == ["-m", "workspace_app.adapters.ui"]
    assert spec.argv[3:6] == ["--warm-file", str(spec.ready_file), str(APP)]
    assert spec.ready_url and spec.ready_file and spec.ready_file.parent == tmp_path / "run"
    assert spec.ready_timeout_s > READY_TIMEOUT_S  # warming takes longer than a bare start


def test_the_warmed_app_is_the_one_the_pages_use(
    data_dir: Path, build: Callable[..., Any], excerpt: Callable[..., Path]
) -> None:
    arranged = build(data_dir)
    workspace = arranged.workspaces.create("Cardiology")
    assert arranged.documents.ingest(workspace.id, excerpt("mosca-2011-women-cvd.pdf", 10, 11)).status == "ready"
    from components.application import current_app
    from workspace_app.adapters.ui import warm_in_background

    warmed = current_app()
    assert not warmed.embedder.is_loaded
    assert arranged.suggestions.stored(workspace.id) is None  # nobody asked for them before the warm-up
    warm_file = data_dir / "run" / "ui-warm.json"
    warm_in_background(APP, warm_file).join(120)
    assert "workspace Cardiology" in json.loads(warm_file.read_text())["timings_s"]
    assert current_app() is warmed and warmed.embedder.is_loaded
    assert arranged.suggestions.stored(workspace.id)  # found during the warm-up, not by the page

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["workspace"] = workspace.id
    at.run()
    at.switch_page("pages/chat.py").run()
    assert not at.exception
    assert current_app() is warmed
    questions = [b for b in at.button if b.key and b.key.startswith("greeting-question-")]
    assert questions
    questions[0].click().run()
    assert not at.exception
    chat = arranged.chats.list_chats(workspace.id)
    assert chat and arranged.chats.chat_messages(workspace.id, chat[0].id)[0].answer.citations


def test_with_a_language_model_the_warm_up_only_searches(
    tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path], embedder: Any
) -> None:
    from fake_openai import fake_openai_server

    from workspace_app.adapters.wiring import build_app

    arranged = build(tmp_path / "data")
    workspace = arranged.workspaces.create("Cardiology")
    assert arranged.documents.ingest(workspace.id, excerpt("mosca-2011-women-cvd.pdf", 10, 11)).status == "ready"
    with fake_openai_server() as fake:
        fake.status = 503  # a model that is down must not hold the UI's start
        settings = arranged.settings.model_copy(deep=True)
        settings.llm.base_url = fake.url
        with_model = build_app(settings, embedder=embedder)
        try:
            timings = with_model.warm_up()
        finally:
            with_model.close()
        assert "workspace Cardiology" in timings
        assert fake.requests == []
