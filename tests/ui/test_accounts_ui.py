"""Accounts in the UI (AppTest, accounts on): a local sign-in form before anything, each user sees only their
workspaces, a viewer gets no drop zone and cannot open a workspace not shared with them, an owner shares."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"
SignIn = Callable[[str], AppTest]


@pytest.fixture
def accounts(accounts_on: Any) -> dict[str, Any]:
    """root (admin), olga (owner of Shared and Secret), vic (viewer of Shared); the app's settings turn accounts on."""
    service, store = accounts_on.service, accounts_on.store
    _root, olga, _vic = (accounts_on.user(name) for name in ("root", "olga", "vic"))
    shared, secret = service.workspaces.create("Shared"), service.workspaces.create("Secret")
    store.created(olga, shared)
    store.created(olga, secret)
    store.share(olga, "Shared", "vic", "viewer")
    return {"store": store, "shared": shared, "secret": secret}


def page_text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [b.label for b in at.button] + [c.value for c in at.caption])


def test_nothing_but_the_sign_in_form_until_a_right_name_and_password(accounts: dict[str, Any]) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert [t.value for t in at.title] == ["Workspace"]
    assert [t.key for t in at.text_input] == ["account-name", "account-password"]
    at.text_input(key="account-name").input("vic")
    at.text_input(key="account-password").input("wrong password!")
    at.button(key="account-submit").click().run()
    assert [e.value for e in at.error] == ["The user name or password is not right."]
    assert "Shared" not in page_text(at)
    assert [e.action for e in accounts["store"].user_audit(None, "vic")] == []


def test_a_viewer_sees_only_their_workspace_and_cannot_upload(accounts: dict[str, Any], sign_in: SignIn) -> None:
    at = sign_in("vic")
    assert at.title[0].value == "Workspaces"
    shown = page_text(at)
    assert "Shared" in shown and "Secret" not in shown
    assert "Signed in as **vic**" in shown
    shared = accounts["shared"].id
    assert at.button(key=f"workspaces-rename-{shared}").disabled and at.button(key=f"workspaces-delete-{shared}").disabled
    assert not at.get("expander"), "no sharing section for a viewer"
    at.session_state["workspace"] = accounts["shared"].id
    at.switch_page("pages/sources.py").run()
    assert not at.exception and not at.get("file_uploader"), "a viewer gets no drop zone"
    assert any("viewer" in c.value for c in at.caption)
    at.query_params["workspace"] = accounts["secret"].id  # a link to a workspace not shared with vic
    at.switch_page("pages/sources.py").run()
    assert not at.exception and "Secret" not in page_text(at)
    assert [w.value for w in at.warning] == ["The workspace in this link no longer exists."]
    at.switch_page("pages/patients.py").run()
    assert [i.value for i in at.info] == ["Patient records are open to admins only."]
    assert [e.action for e in accounts["store"].user_audit(None, "vic")] == ["signed in"]


def test_an_owner_shares_from_the_workspaces_page(accounts: dict[str, Any], sign_in: SignIn) -> None:
    at = sign_in("olga")
    at.session_state["workspace"] = accounts["shared"].id
    at.run()
    assert not at.button(key=f"workspaces-rename-{accounts['shared'].id}").disabled
    at.text_input(key="sharing-user").input("root")
    at.selectbox(key="sharing-role").select("editor")
    at.button(key="sharing-share").click().run()
    assert not at.exception
    members = accounts["store"].members(None, "Shared")
    assert {(m.user_name, m.role) for m in members} == {("olga", "owner"), ("vic", "viewer"), ("root", "editor")}


def test_a_viewer_asks_in_chat_and_the_answer_is_not_kept(accounts: dict[str, Any], sign_in: SignIn, tmp_path: Path,
                                                          build: Callable[..., Any]) -> None:
    service = build(tmp_path / "data")
    source = tmp_path / "warfarin.txt"
    source.write_text("Warfarin should target an INR of 2.0 to 3.0 in atrial fibrillation.\n", encoding="utf-8")
    assert service.documents.ingest("Shared", source, "warfarin.txt").status == "ready"
    at = sign_in("vic")
    at.session_state["workspace"] = accounts["shared"].id
    at.switch_page("pages/chat.py").run()
    at.chat_input(key="chat-input").set_value("What INR should warfarin target?").run()
    assert not at.exception
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "")  # the answer's Markdown escapes "."
    assert "INR of 2.0 to 3.0" in shown, "the viewer sees the answer"
    assert service.chats.list_chats("Shared") == [], "a viewer's answer is not kept in a chat"
    asked = [e for e in accounts["store"].audit(None, "Shared") if e.action == "asked"]
    assert [(e.user, e.detail) for e in asked] == [("vic", "What INR should warfarin target?")]


def test_with_an_identity_provider_but_not_our_launcher_the_sign_in_page_says_how_to_start_it(
    accounts: dict[str, Any], sign_in: SignIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The provider's button, signing in through it and out, is tests/e2e/browser/test_sign_in_oidc_browser.py's:
    here Streamlit has no [auth] secrets, as under a bare `streamlit run app.py`.)"""
    for name, value in {"METADATA_URL": "https://id.example.org/.well-known/openid-configuration",
                        "CLIENT_ID": "workspace", "CLIENT_SECRET": "the client secret",
                        "REDIRECT_URI": "http://localhost:{port}/oauth2callback", "PROVIDER_NAME": "Clinic ID"}.items():
        monkeypatch.setenv(f"WORKSPACE_ACCOUNTS__OIDC_{name}", value)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception and not at.text_input, "no local form beside the provider by default"
    assert "started by `workspace-app serve`" in at.error[0].value
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__OIDC_WITH_PASSWORDS", "true")
    st.cache_resource.clear()
    assert sign_in("vic").title[0].value == "Workspaces", "the local form beside it"
