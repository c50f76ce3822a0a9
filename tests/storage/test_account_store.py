"""Users, memberships, API keys and the audit log in the catalog, on SQLite and on PostgreSQL (`catalog_store`):
kept across reopening, unique names, memberships gone with their workspace or user, the audit log kept."""

from __future__ import annotations

import pytest
from catalogs import CatalogStore

from workspace_app.errors import UserExistsError
from workspace_app.models.accounts import AuditEntry


def test_users_keys_roles_and_audit_survive_reopening(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    store = catalog.accounts
    ada = store.add_user("ada", "scrypt$hash-a", True)
    bob = store.add_user("bob", "scrypt$hash-b", False)
    with pytest.raises(UserExistsError, match="already exists"):
        store.add_user("ada", "other", False)
    workspace = catalog.create_workspace("Cardio")
    store.set_role(workspace.id, ada.id, "owner")
    store.set_role(workspace.id, bob.id, "viewer")
    store.set_role(workspace.id, bob.id, "editor")  # replaces the role
    store.add_key("k1", bob.id, "digest-1", "laptop")
    store.add_key("k2", bob.id, "digest-2", "")
    assert store.revoke_key(bob.id, "k2") and not store.revoke_key(bob.id, "k2")
    assert not store.revoke_key(ada.id, "k1"), "a user revokes only their own keys"
    store.record(AuditEntry("2026-01-01T00:00:00.000+00:00", "bob", "asked", workspace.id, "", "INR range?"))
    store.record(AuditEntry("2026-01-01T00:00:01.000+00:00", "ada", "shared", workspace.id, "bob", "editor"))
    catalog.close()

    again = catalog_store.open().accounts
    assert [u.name for u in again.list_users()] == ["ada", "bob"]
    assert again.find_user("bob") == bob and again.find_user(bob.id) == bob and again.find_user("carol") is None
    assert again.find_user("ada").is_admin and not again.find_user("bob").is_admin
    assert again.password_hash(ada.id) == "scrypt$hash-a"
    again.set_password(ada.id, "scrypt$new")
    assert again.password_hash(ada.id) == "scrypt$new"
    assert again.role_of(workspace.id, bob.id) == "editor" and again.role_of(workspace.id, "nobody") is None
    assert [(m.user_name, m.role) for m in again.members(workspace.id)] == [("ada", "owner"), ("bob", "editor")]
    assert again.user_workspaces(bob.id) == {workspace.id: "editor"}
    assert again.live_key("k1") == (bob.id, "digest-1") and again.live_key("k2") is None
    assert [(k.id, k.label, k.revoked) for k in again.list_keys(bob.id)] == [("k1", "laptop", False), ("k2", "", True)]
    entries = again.workspace_entries(workspace.id, 10)
    assert [(e.user, e.action, e.detail) for e in entries] == [("bob", "asked", "INR range?"), ("ada", "shared", "editor")]
    assert [e.action for e in again.workspace_entries(workspace.id, 1)] == ["shared"], "the latest, oldest first"
    assert [e.action for e in again.user_entries("bob", 10)] == ["asked"]


def test_memberships_go_with_the_workspace_and_the_audit_log_stays(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    store = catalog.accounts
    ada = store.add_user("ada", "h", True)
    workspace, other = catalog.create_workspace("W"), catalog.create_workspace("Other")
    store.set_role(workspace.id, ada.id, "owner")
    store.set_role(other.id, ada.id, "viewer")
    store.record(AuditEntry("2026-01-01T00:00:00.000+00:00", "ada", "deleted workspace", workspace.id, "W"))
    catalog.delete_workspace(workspace.id)
    assert store.user_workspaces(ada.id) == {other.id: "viewer"}
    assert store.remove_member(other.id, ada.id) and not store.remove_member(other.id, ada.id)
    assert [e.action for e in store.workspace_entries(workspace.id, 10)] == ["deleted workspace"]
    assert catalog_store.scalar("SELECT COUNT(*) FROM memberships") == 0
