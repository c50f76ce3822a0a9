"""The Workspaces page driven through Streamlit's AppTest, widgets found by key, on a data dir in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"
LIST = "workspaces"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The app on an empty data dir; the cached service is dropped before and after."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no stray .env from the repo
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    yield at
    st.cache_resource.clear()


def create(at: AppTest, name: str) -> str:
    """Create a workspace through the form; returns its id (it becomes the current workspace)."""
    at.text_input(key="create-workspace-name").input(name)
    at.button(key="create-workspace-submit").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    return str(at.session_state["workspace"])


def shown_text(at: AppTest) -> str:
    """What the user reads in the markdown elements, rendered the way a CommonMark renderer does."""
    renderer = MarkdownIt("commonmark", {"html": True})
    return "\n".join(renderer.render(element.value) for element in at.markdown)


def test_empty_state_explains_what_to_do(app: AppTest) -> None:
    assert app.title[0].value == "Workspaces"
    assert "No workspaces yet" in app.info[0].value


def test_create_lists_the_workspace_and_makes_it_current(app: AppTest) -> None:
    workspace_id = create(app, "Diabetes guidelines")

    assert "Diabetes guidelines" in shown_text(app)
    assert any("0 documents" in caption.value for caption in app.caption)
    assert app.button(key=f"{LIST}-open-{workspace_id}").disabled
    assert "Created workspace" in app.toast[0].value


def test_rename(app: AppTest) -> None:
    workspace_id = create(app, "Old name")

    app.button(key=f"{LIST}-rename-{workspace_id}").click().run()
    app.text_input(key=f"{LIST}-new-name-{workspace_id}").input("New name")
    app.button(key=f"{LIST}-save-{workspace_id}").click().run()

    assert not app.exception
    text = shown_text(app)
    assert "New name" in text and "Old name" not in text
    assert not [t for t in app.text_input if t.key == f"{LIST}-new-name-{workspace_id}"]


def test_delete_asks_first_and_cancel_keeps_the_workspace(app: AppTest) -> None:
    workspace_id = create(app, "Keep me")

    app.button(key=f"{LIST}-delete-{workspace_id}").click().run()
    assert "cannot be undone" in app.warning[0].value
    app.button(key=f"{LIST}-cancel-delete-{workspace_id}").click().run()

    assert not app.exception
    assert not app.warning
    assert "Keep me" in shown_text(app)


def test_delete_after_confirmation(app: AppTest) -> None:
    workspace_id = create(app, "Delete me")

    app.button(key=f"{LIST}-delete-{workspace_id}").click().run()
    app.button(key=f"{LIST}-confirm-delete-{workspace_id}").click().run()

    assert not app.exception
    assert "Delete me" not in shown_text(app)
    assert "workspace" not in app.session_state
    assert "No workspaces yet" in app.info[0].value


def test_open_switches_the_current_workspace(app: AppTest) -> None:
    first = create(app, "First")
    second = create(app, "Second")
    assert app.session_state["workspace"] == second

    app.button(key=f"{LIST}-open-{first}").click().run()

    assert not app.exception
    assert app.session_state["workspace"] == first
    assert app.button(key=f"{LIST}-open-{first}").disabled
    assert not app.button(key=f"{LIST}-open-{second}").disabled


def test_html_and_markdown_in_names_show_as_text(app: AppTest) -> None:
    name = "<script>alert(1)</script> **bold** :red[x]"
    create(app, name)

    html = shown_text(app)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **bold** :red[x]" in html
    assert "<script>" not in html and "<strong>bold</strong>" not in html


@pytest.mark.parametrize("name", ["", "   "])
def test_blank_name_is_refused_with_a_message(app: AppTest, name: str) -> None:
    app.text_input(key="create-workspace-name").input(name)
    app.button(key="create-workspace-submit").click().run()

    assert not app.exception
    assert "1 to 80 visible characters" in app.error[0].value


def test_duplicate_name_is_refused_with_a_message(app: AppTest) -> None:
    create(app, "Twice")
    app.text_input(key="create-workspace-name").input("Twice")
    app.button(key="create-workspace-submit").click().run()

    assert not app.exception
    assert "already exists" in app.error[0].value


def test_the_card_counts_a_failed_file_apart(app: AppTest, tmp_path: Path) -> None:
    """A file that could not be ingested is not one of the workspace's documents: the card says it failed."""
    from workspace_app.storage.sqlite.database import Database

    workspace_id = create(app, "Cardiology")
    database = Database(tmp_path / "data" / "catalog.sqlite")
    with database.transaction() as db:
        for document_id, status in (("doc-ready", "ready"), ("doc-failed", "failed")):
            db.execute(
                "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, status, stage, "
                "added_at, updated_at) VALUES (?, ?, ?, ?, 10, 'application/pdf', ?, ?, '2026-11-27', '2026-11-27')",
                (document_id, workspace_id, f"{document_id}.pdf", document_id, status, status),
            )
    database.close()
    app.run()
    assert not app.exception
    captions = [caption.value for caption in app.caption]
    assert any(c.startswith("1 document · 1 failed · created") for c in captions), captions
