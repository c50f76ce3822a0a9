"""People an identity provider signs in, mapped to our users on a real catalog (SQLite, and PostgreSQL marked
`postgres`): the first sign-in makes a user (no password, no admin, no workspace), the next finds the same one, a
local user's name is never taken over, a domain not allowed is refused with a clear message, and the sign-ins and
sign-outs are in the audit log. Plus the settings that name a provider and the secrets file st.login reads."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest
from catalogs import CatalogStore

from workspace_app.accounts.identities import identity_from_claims, user_names
from workspace_app.accounts.service import AccountService
from workspace_app.adapters.supervisor import child_specs
from workspace_app.adapters.ui_auth import COOKIE_SECRET_FILE, SECRETS_FILE, write_streamlit_secrets
from workspace_app.config import AccountsSettings, Settings, load_settings
from workspace_app.errors import PermissionDeniedError, SignInError, WorkspaceError
from workspace_app.models.accounts import Identity

ISSUER = "https://id.example.org"
ALICE = Identity(ISSUER, "a1b2c3", "alice@clinic.example.org", "Alice Martin", True)
PROVIDER = {
    "oidc_metadata_url": f"{ISSUER}/.well-known/openid-configuration", "oidc_client_id": "workspace",
    "oidc_client_secret": "the client secret", "oidc_redirect_uri": "http://localhost:{port}/oauth2callback",
}


def accounts(catalog: Any, **settings: Any) -> AccountService:
    store = catalog.accounts
    return AccountService(store, store, store, store, catalog,
                          AccountsSettings(enabled=True, password_cost=1024, **{**PROVIDER, **settings}))


def test_a_first_sign_in_makes_a_user_and_the_next_finds_the_same(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    service = accounts(catalog)
    service.add_user("root", "a long enough password")  # the first user, an admin
    first = service.sign_in_identity(ALICE)
    assert (first.name, first.is_admin) == ("alice@clinic.example.org", False)
    assert service.visible(first, catalog.list_workspaces()) == [] and service.roles(first) == {}
    catalog.create_workspace("Ward")
    assert service.visible(first, catalog.list_workspaces()) == [], "workspaces are private until shared"
    again = accounts(catalog_store.open()).sign_in_identity(Identity(ISSUER, "a1b2c3", "alice@new-name.org"))
    assert again == first, "the issuer and subject say who it is, not the email"
    with pytest.raises(SignInError):  # no password: the local form never lets anyone in as her
        service.sign_in(first.name, "")
    service.sign_out(first)
    log = [(e.action, e.detail) for e in service.user_audit(None, first.name)]
    assert log == [("signed in", f"through {ISSUER}"), ("signed in", f"through {ISSUER}"), ("signed out", "")]


def test_the_same_subject_at_another_issuer_and_a_taken_name_make_other_users(catalog_store: CatalogStore) -> None:
    service = accounts(catalog_store.open())
    local = service.add_user("alice@clinic.example.org", "a long enough password")
    linked = service.sign_in_identity(ALICE)
    other = service.sign_in_identity(Identity("https://other.example.org", "a1b2c3", "alice@clinic.example.org"))
    assert linked.name == "alice@clinic.example.org-2" and other.name == "alice@clinic.example.org-3"
    assert len({local.id, linked.id, other.id}) == 3


def test_a_domain_not_allowed_is_refused_with_a_clear_message(catalog_store: CatalogStore) -> None:
    service = accounts(catalog_store.open(), oidc_allowed_domains="Clinic.Example.org, @lab.example.org")
    assert service.sign_in_identity(ALICE).name == ALICE.email
    with pytest.raises(PermissionDeniedError) as refused:
        service.sign_in_identity(Identity(ISSUER, "m4", "mallory@gmail.com", "Mallory"))
    assert refused.value.user_message.startswith(
        "mallory@gmail.com may not sign in here: only accounts of clinic.example.org, lab.example.org may"
    )
    with pytest.raises(PermissionDeniedError):  # the right domain, but the provider says it is not verified
        service.sign_in_identity(Identity(ISSUER, "m5", "eve@clinic.example.org", email_verified=False))
    assert [u.name for u in service.list_users()] == [ALICE.email], "nobody refused was made a user"


def test_claims_become_an_identity_and_a_user_name() -> None:
    claims = {"iss": ISSUER, "sub": "42", "name": "Zoë O'Neil", "email_verified": "yes", "is_logged_in": True}
    identity = identity_from_claims(claims)
    assert identity == Identity(ISSUER, "42", "", "Zoë O'Neil", None)
    names = user_names(identity)
    assert [next(names), next(names)] == ["Zoë.O.Neil", "Zoë.O.Neil-2"]
    assert next(user_names(Identity(ISSUER, "x" * 80))) == "user-" + "x" * 59
    with pytest.raises(SignInError):
        accounts_without_catalog().sign_in_identity(Identity("", "42"))


def accounts_without_catalog() -> AccountService:
    return AccountService(None, None, None, None, None, AccountsSettings(enabled=True))  # type: ignore[arg-type]


def test_a_provider_named_in_part_or_without_a_callback_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__OIDC_CLIENT_ID", "workspace")
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__OIDC_CLIENT_SECRET", "s3cr3t-value")
    with pytest.raises(WorkspaceError) as problem:
        load_settings()
    assert "set WORKSPACE_ACCOUNTS__OIDC_METADATA_URL too" in problem.value.user_message
    assert "s3cr3t-value" not in problem.value.user_message
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__OIDC_METADATA_URL", PROVIDER["oidc_metadata_url"])
    with pytest.raises(WorkspaceError, match="OIDC_REDIRECT_URI"):
        load_settings()
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__OIDC_REDIRECT_URI", "https://workspace.example.org/oauth2callback")
    assert load_settings().accounts.oidc_configured


def test_serve_s_launcher_writes_the_provider_for_st_login_private_to_this_user(tmp_path: Path) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path
    settings.accounts = AccountsSettings(**PROVIDER)
    assert write_streamlit_secrets(settings) is None, "accounts off: no sign-in through the provider"
    settings.accounts.enabled = True
    path = write_streamlit_secrets(settings)
    assert path == tmp_path / SECRETS_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    auth = tomllib.loads(path.read_text())["auth"]
    cookie = (tmp_path / COOKIE_SECRET_FILE).read_text()
    assert auth == {
        "redirect_uri": "http://localhost:{port}/oauth2callback", "cookie_secret": cookie, "client_id": "workspace",
        "client_secret": "the client secret", "server_metadata_url": f"{ISSUER}/.well-known/openid-configuration",
    }
    assert len(cookie) >= 32 and write_streamlit_secrets(settings) == path
    assert tomllib.loads(path.read_text())["auth"]["cookie_secret"] == cookie, "the same cookie secret after a restart"
    settings.accounts.oidc_client_id = ""
    settings.accounts.oidc_metadata_url = ""
    assert write_streamlit_secrets(settings) is None and not path.exists(), "a provider taken out stops signing in"


def test_serve_hands_the_provider_settings_to_its_children_as_they_are(tmp_path: Path) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.accounts = AccountsSettings(enabled=True, **PROVIDER)
    made = {spec.name: spec.env for spec in child_specs(settings, tmp_path, "http://127.0.0.1:1", 8501, "t", api_port=2)}
    ui = made["ui"]
    assert ui["WORKSPACE_ACCOUNTS__OIDC_CLIENT_SECRET"] == "the client secret", "the secret itself, not ***"
    assert "WORKSPACE_ACCOUNTS__OIDC_COOKIE_SECRET" not in ui, "an unset setting is left unset, not 'None'"
    assert made["api"]["WORKSPACE_ACCOUNTS__OIDC_CLIENT_ID"] == "workspace"
