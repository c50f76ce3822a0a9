"""The UI password: with `WORKSPACE_UI__PASSWORD` set, every page waits behind a sign-in form (AppTest)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture(params=["correct horse", "sha256:" + hashlib.sha256(b"correct horse").hexdigest()],
                ids=["in-clear", "as-sha256"])
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[AppTest]:
    """The app behind the password "correct horse", configured in clear or as its SHA-256."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORKSPACE_UI__PASSWORD", request.param)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    yield at
    st.cache_resource.clear()


def sign_in(at: AppTest, password: str) -> AppTest:
    at.text_input(key="sign-in-password").input(password)
    return at.button(key="sign-in-submit").click().run()


def test_nothing_but_the_sign_in_form_without_the_password(locked: AppTest) -> None:
    assert [t.value for t in locked.title] == ["Workspace"]
    assert [t.key for t in locked.text_input] == ["sign-in-password"]
    assert [b.key for b in locked.button] == ["sign-in-submit"]

    wrong = sign_in(locked, "wrong horse")
    assert [e.value for e in wrong.error] == ["Wrong password."]
    assert [t.value for t in wrong.title] == ["Workspace"]
    for guess in ("", hashlib.sha256(b"correct horse").hexdigest()):  # nothing, or the configured digest itself
        refused = sign_in(locked, guess)
        assert [e.value for e in refused.error] == ["Wrong password."] and refused.title[0].value == "Workspace"


def test_the_password_opens_the_pages(locked: AppTest) -> None:
    opened = sign_in(locked, "correct horse")
    assert not opened.exception
    assert opened.title[0].value == "Workspaces"
    assert "No workspaces yet" in opened.info[0].value


def test_without_a_password_configured_the_pages_open_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("WORKSPACE_UI__PASSWORD", raising=False)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception and at.title[0].value == "Workspaces"
    st.cache_resource.clear()


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_password_opens_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    """Run directly (`streamlit run app.py`, without serve's refusal first), a blank password shows what to fix and
    neither a sign-in form (that an empty answer would pass) nor a page."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORKSPACE_UI__PASSWORD", blank)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        ("The settings are not valid: WORKSPACE_UI__PASSWORD is empty or only spaces: set a real password (or "
        "sha256:<hex> of one), or unset it to run the UI on 127.0.0.1 without a password")
    ]
    assert not at.text_input and not at.title
    st.cache_resource.clear()
