"""The policy (what each role allows) and the account service on a real SQLite catalog: passwords hashed with a
salt, sign-in, keys shown once and stored hashed, sharing, the gate (a stranger gets 'not found'), the audit log
and its export; with accounts off nothing is refused and nothing recorded."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from workspace_app.accounts.passwords import hash_password, password_matches
from workspace_app.accounts.policy import ALLOWED, Action, Role, allows, check
from workspace_app.accounts.service import AccountService, export_audit
from workspace_app.config import AccountsSettings
from workspace_app.errors import PermissionDeniedError, SignInError, WorkspaceError, WorkspaceNotFoundError
from workspace_app.storage.sqlite.catalog import SqliteCatalog

PASSWORD = "correct horse battery"


@pytest.fixture
def catalog(tmp_path: Path) -> SqliteCatalog:
    opened = SqliteCatalog(tmp_path / "catalog.sqlite")
    yield opened
    opened.close()


def service(catalog: SqliteCatalog, enabled: bool = True) -> AccountService:
    return AccountService(*[catalog.accounts] * 4, catalog, AccountsSettings(enabled=enabled, password_cost=1024))


def test_the_policy_grants_each_role_its_actions_and_no_more() -> None:
    table = {(role.value, action.value): allows(role, action) for role in Role for action in Action}
    assert table == {
        ("viewer", "read"): True, ("viewer", "ask"): True, ("viewer", "edit"): False, ("viewer", "manage"): False,
        ("editor", "read"): True, ("editor", "ask"): True, ("editor", "edit"): True, ("editor", "manage"): False,
        ("owner", "read"): True, ("owner", "ask"): True, ("owner", "edit"): True, ("owner", "manage"): True,
    }
    assert not any(allows(None, action) for action in Action) and set(ALLOWED) == set(Role)
    with pytest.raises(WorkspaceNotFoundError, match="There is no workspace 'Secret'"):
        check(None, Action.READ, "Secret")
    with pytest.raises(PermissionDeniedError, match="viewer"):
        check(Role.VIEWER, Action.EDIT, "Shared")


def test_password_hashes_are_salted_and_checked_in_constant_time() -> None:
    one, two = hash_password(PASSWORD, 1024), hash_password(PASSWORD, 1024)
    assert one != two and PASSWORD not in one and one.startswith("scrypt$1024$")
    assert password_matches(PASSWORD, one) and not password_matches(PASSWORD + "!", one)
    assert not password_matches(PASSWORD, "not a hash") and not password_matches(PASSWORD, "")


def test_users_sign_in_and_the_first_is_an_admin(catalog: SqliteCatalog) -> None:
    accounts = service(catalog)
    ada = accounts.add_user("ada", PASSWORD)
    bob = accounts.add_user("bob", PASSWORD)
    assert ada.is_admin and not bob.is_admin
    assert accounts.sign_in("bob", PASSWORD) == bob
    for name, password in (("bob", "wrong password"), ("nobody", PASSWORD)):
        with pytest.raises(SignInError, match="The user name or password is not right"):
            accounts.sign_in(name, password)
    with pytest.raises(WorkspaceError, match="at least 10 characters"):
        accounts.add_user("carol", "short")
    with pytest.raises(WorkspaceError, match="user name"):
        accounts.add_user("two words", PASSWORD)
    assert [e.action for e in accounts.user_audit(None, "bob")] == ["signed in"]
    assert PASSWORD not in (catalog.accounts.password_hash(bob.id) or "")


def test_keys_are_shown_once_stored_hashed_and_revocable(catalog: SqliteCatalog, tmp_path: Path) -> None:
    accounts = service(catalog)
    ada, bob = accounts.add_user("ada", PASSWORD), accounts.add_user("bob", PASSWORD)
    record, key = accounts.create_key(bob, "bob", "laptop")
    assert accounts.identify(key) == bob and accounts.identify(key + "x") is None
    assert accounts.identify("wsk_" + record.id + "_guess") is None and accounts.identify("plain") is None
    assert key not in (tmp_path / "catalog.sqlite").read_bytes().decode("latin-1"), "only the digest is stored"
    with pytest.raises(PermissionDeniedError):
        accounts.create_key(bob, "ada")
    accounts.create_key(ada, "bob")  # an admin may
    accounts.revoke_key(bob, "bob", record.id)
    assert accounts.identify(key) is None
    with pytest.raises(WorkspaceError, match="no live key"):
        accounts.revoke_key(bob, "bob", record.id)


def test_the_gate_hides_private_workspaces_and_sharing_opens_them(catalog: SqliteCatalog) -> None:
    accounts = service(catalog)
    ada, bob, eve = (accounts.add_user(n, PASSWORD) for n in ("ada", "bob", "eve"))
    private = catalog.create_workspace("Private")
    accounts.created(ada, private)
    assert accounts.visible(bob, catalog.list_workspaces()) == []
    with pytest.raises(WorkspaceNotFoundError) as hidden:
        accounts.open(bob, "Private", Action.READ)
    with pytest.raises(WorkspaceNotFoundError) as missing:
        accounts.open(bob, "Nowhere", Action.READ)
    assert hidden.value.user_message.replace("Private", "X") == missing.value.user_message.replace("Nowhere", "X")
    accounts.share(ada, "Private", "bob", "viewer")
    assert accounts.open(bob, "Private", Action.ASK) == accounts.open(ada, "Private", Action.READ)
    with pytest.raises(PermissionDeniedError):
        accounts.open(bob, "Private", Action.EDIT)
    with pytest.raises(PermissionDeniedError):
        accounts.share(bob, "Private", "eve", "owner")
    with pytest.raises(WorkspaceNotFoundError):
        accounts.share(eve, "Private", "eve", "owner")
    with pytest.raises(WorkspaceError, match="only owner"):
        accounts.unshare(ada, "Private", "ada")
    with pytest.raises(WorkspaceError, match="only owner"):
        accounts.share(ada, "Private", "ada", "viewer")
    accounts.unshare(ada, "Private", "bob")
    assert accounts.visible(bob, catalog.list_workspaces()) == []
    assert accounts.open(None, "Private", Action.MANAGE).name == "Private", "the operator opens everything"


def test_the_audit_log_is_the_owners_and_exports_as_jsonl_and_csv(catalog: SqliteCatalog) -> None:
    accounts = service(catalog)
    ada, bob = accounts.add_user("ada", PASSWORD), accounts.add_user("bob", PASSWORD)
    workspace = catalog.create_workspace("W")
    accounts.created(ada, workspace)
    accounts.share(ada, "W", "bob", "editor")
    accounts.record(bob, "asked", workspace.id, "", "=HYPERLINK(\"http://x\") what INR?")
    with pytest.raises(PermissionDeniedError):
        accounts.audit(bob, "W")
    entries = accounts.audit(ada, "W")
    assert [(e.user, e.action) for e in entries] == [("ada", "created workspace"), ("ada", "shared"), ("bob", "asked")]
    lines = [json.loads(line) for line in export_audit(entries, "jsonl").splitlines()]
    assert lines[2]["detail"].startswith("=HYPERLINK") and lines[1]["target"] == "bob"
    rows = list(csv.reader(io.StringIO(export_audit(entries, "csv"))))
    assert rows[0] == ["at", "user", "action", "workspace_id", "target", "detail"]
    assert rows[3][5].startswith("'=HYPERLINK"), "a question is never a formula in a spreadsheet"
    assert accounts.audit(ada, "W")[-1].action == "exported audit log"


def test_with_accounts_off_nothing_is_refused_or_recorded(catalog: SqliteCatalog) -> None:
    accounts = service(catalog, enabled=False)
    workspace = catalog.create_workspace("W")
    assert accounts.open(None, "W", Action.MANAGE) == workspace
    assert accounts.visible(None, catalog.list_workspaces()) == [workspace]
    accounts.record(None, "asked", workspace.id, "", "q")
    assert catalog.accounts.workspace_entries(workspace.id, 10) == []
