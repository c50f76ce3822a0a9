"""Accounts as the front ends use them: users and sign-in, API keys, sharing, the gate before every workspace action
(through the one policy, accounts/policy.py) and the audit log.

A caller is a `User`, or None for the operator: the one person of an install without accounts, or the CLI run on
the server without `--as` (whoever can run it can read the data dir anyway). With accounts off every caller is the
operator, so nothing changes for the one-person install: every workspace visible, nothing refused, nothing recorded.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workspace_app.accounts.identities import allowed_domains, check_domain, identity_from_claims, user_names
from workspace_app.accounts.passwords import (
    digests_match,
    hash_password,
    key_id_of,
    new_api_key,
    password_matches,
)
from workspace_app.accounts.policy import Action, Role, allows, check, parse_role
from workspace_app.config import AccountsSettings
from workspace_app.errors import PermissionDeniedError, SignInError, UserExistsError, WorkspaceError
from workspace_app.models.accounts import ApiKey, AuditEntry, Identity, Membership, User, now_precise
from workspace_app.models.documents import Workspace
from workspace_app.retrieval.scope import ScopeCatalog, find_workspace
from workspace_app.storage.base import ApiKeyStore, AuditLog, MembershipStore, UserStore

OPERATOR = "operator"  # the audit log's name of a caller without an account (the CLI on the server)
AUDIT_FORMATS = ("jsonl", "csv")
_NAME = re.compile(r"^[\w.@+-]{1,64}$")


def clean_user_name(name: str) -> str:
    """A user name: 1-64 letters, digits or . _ @ + - (no spaces, so it reads the same in a terminal and a log)."""
    cleaned = unicodedata.normalize("NFC", name.strip())
    if not _NAME.match(cleaned):
        raise WorkspaceError("A user name needs 1 to 64 letters, digits or . _ @ + - (no spaces).")
    return cleaned


class AccountService:
    """Users, keys, memberships, the gate and the audit log over the catalog's account store."""

    def __init__(
        self, users: UserStore, members: MembershipStore, keys: ApiKeyStore, log: AuditLog, workspaces: ScopeCatalog,
        settings: AccountsSettings,
    ) -> None:
        self._users = users
        self._members = members
        self._keys = keys
        self._log = log
        self._workspaces = workspaces
        self.settings = settings

    @property
    def enabled(self) -> bool:
        """Whether accounts are on (WORKSPACE_ACCOUNTS__ENABLED)."""
        return self.settings.enabled

    # Users and sign-in

    def add_user(self, name: str, password: str, is_admin: bool = False) -> User:
        """Add a local account; the first user is an admin whatever `is_admin` says."""
        cleaned = clean_user_name(name)
        self._check_password(password)
        first = not self._users.list_users()
        hashed = hash_password(password, self.settings.password_cost)
        return self._users.add_user(cleaned, hashed, is_admin or first)

    def _check_password(self, password: str) -> None:
        if len(password) < self.settings.password_min_length or not password.strip():
            raise WorkspaceError(
                f"A password needs at least {self.settings.password_min_length} characters "
                "(WORKSPACE_ACCOUNTS__PASSWORD_MIN_LENGTH)."
            )

    def list_users(self) -> list[User]:
        """Every user, oldest first."""
        return self._users.list_users()

    def user(self, name_or_id: str) -> User:
        """A user by name or id, or a clear error."""
        found = self._users.find_user(name_or_id)
        if found is None:
            raise WorkspaceError(f"There is no user '{name_or_id}'. Add one with `workspace-app users add NAME`.")
        return found

    def set_password(self, name: str, password: str) -> None:
        """Give a user a new password."""
        self._check_password(password)
        self._users.set_password(self.user(name).id, hash_password(password, self.settings.password_cost))

    def sign_in(self, name: str, password: str) -> User:
        """The user whose name and password these are (recorded), or SignInError saying nothing of which was wrong."""
        found = self._users.find_user(name.strip())
        stored = self._users.password_hash(found.id) if found else None
        # An unknown name costs a hash too, so the time taken does not tell which names exist.
        matches = password_matches(password, stored or self._decoy())
        if found is None or stored is None or not matches:
            raise SignInError("The user name or password is not right.")
        self.record(found, "signed in")
        return found

    def sign_in_identity(self, identity: Identity) -> User:
        """The user an identity provider's person is linked to, made (without a password, admin of nothing, with no
        workspace until one is shared) at their first sign-in; recorded. PermissionDeniedError for an email domain
        WORKSPACE_ACCOUNTS__OIDC_ALLOWED_DOMAINS does not allow."""
        if not identity.issuer or not identity.subject:
            raise SignInError("The identity provider did not say who signed in (no issuer or subject). Try again.")
        check_domain(identity, allowed_domains(self.settings.oidc_allowed_domains))
        user = self._users.identity_user(identity.issuer, identity.subject) or self._add_identity_user(identity)
        self.record(user, "signed in", detail=f"through {identity.issuer}")
        return user

    def sign_in_claims(self, claims: Mapping[str, Any]) -> User:
        """`sign_in_identity` for the person an ID token's claims name (the UI's st.user)."""
        return self.sign_in_identity(identity_from_claims(claims))

    def _add_identity_user(self, identity: Identity) -> User:
        for name in user_names(identity):
            if self._users.find_user(name) is not None:
                continue
            try:
                return self._users.add_identity_user(name, identity.issuer, identity.subject, identity.email)
            except UserExistsError:  # made meanwhile by another session: the same person, or a user of that name
                found = self._users.identity_user(identity.issuer, identity.subject)
                if found is not None:
                    return found
        raise WorkspaceError("No free user name was found for this sign-in. Ask the operator.")

    def sign_out(self, user: User) -> None:
        """Record that a user signed out of the UI."""
        self.record(user, "signed out")

    def _decoy(self) -> str:
        if not hasattr(self, "_decoy_hash"):
            self._decoy_hash = hash_password(new_api_key()[1], self.settings.password_cost)
        return self._decoy_hash

    # API keys

    def create_key(self, caller: User | None, owner: str, label: str = "") -> tuple[ApiKey, str]:
        """A new key for `owner` (the caller's own, or anyone's for an admin or the operator): (record, the key,
        to show once)."""
        user = self.user(owner)
        self.require_self_or_admin(caller, user)
        key_id, key, digest = new_api_key()
        record = self._keys.add_key(key_id, user.id, digest, label.strip()[:80])
        self.record(caller, "key created", target=f"{user.name}:{key_id}")
        return record, key

    def list_keys(self, caller: User | None, owner: str) -> list[ApiKey]:
        """A user's keys (the caller's own, or anyone's for an admin or the operator)."""
        user = self.user(owner)
        self.require_self_or_admin(caller, user)
        return self._keys.list_keys(user.id)

    def revoke_key(self, caller: User | None, owner: str, key_id: str) -> None:
        """Revoke one of a user's keys (recorded); a clear error when they have no such live key."""
        user = self.user(owner)
        self.require_self_or_admin(caller, user)
        if not self._keys.revoke_key(user.id, key_id):
            raise WorkspaceError(f"{user.name} has no live key '{key_id}'.")
        self.record(caller, "key revoked", target=f"{user.name}:{key_id}")

    def identify(self, key: str) -> User | None:
        """The user a presented API key belongs to, or None (unknown, revoked or malformed)."""
        key_id = key_id_of(key.strip())
        live = self._keys.live_key(key_id) if key_id else None
        if live is None or not digests_match(key.strip(), live[1]):
            return None
        return self._users.find_user(live[0])

    @staticmethod
    def require_self_or_admin(caller: User | None, user: User) -> None:
        """Refuse a caller who is neither the user nor an admin (the operator is both)."""
        if caller is not None and caller.id != user.id and not caller.is_admin:
            raise PermissionDeniedError("Only an admin manages another user's keys.")

    @staticmethod
    def require_admin(caller: User | None) -> None:
        """Refuse a caller who is not an admin (the operator is)."""
        if caller is not None and not caller.is_admin:
            raise PermissionDeniedError("Only an admin may do this. Ask an admin, or the server's operator.")

    # The gate

    def role(self, caller: User | None, workspace_id: str) -> Role | None:
        """The caller's role in a workspace: owner for the operator (and for everyone when accounts are off)."""
        if caller is None or not self.enabled:
            return Role.OWNER
        found = self._members.role_of(workspace_id, caller.id)
        return Role(found) if found else None

    def open(self, caller: User | None, workspace: str, action: Action) -> Workspace:
        """The workspace (by name or id) if the caller's role allows the action; a stranger gets the same 404 as a
        workspace that does not exist, a member without the right 403."""
        found = find_workspace(self._workspaces, workspace)
        check(self.role(caller, found.id), action, workspace)
        return found

    def allowed(self, caller: User | None, workspace_id: str, action: Action) -> bool:
        """Whether the caller may do the action in the workspace (for hiding controls; `open` still decides)."""
        return allows(self.role(caller, workspace_id), action)

    def visible(self, caller: User | None, workspaces: Iterable[Workspace]) -> list[Workspace]:
        """The workspaces the caller may see (all for the operator and with accounts off)."""
        if caller is None or not self.enabled:
            return list(workspaces)
        mine = self._members.user_workspaces(caller.id)
        return [w for w in workspaces if w.id in mine]

    def roles(self, caller: User) -> dict[str, str]:
        """Workspace id -> the caller's role, for each workspace shared with them."""
        return self._members.user_workspaces(caller.id)

    def created(self, caller: User | None, workspace: Workspace) -> None:
        """A new workspace is private to its creator, who owns it (recorded)."""
        if caller is not None:
            self._members.set_role(workspace.id, caller.id, Role.OWNER.value)
        self.record(caller, "created workspace", workspace.id, workspace.name)

    # Sharing

    def share(self, caller: User | None, workspace: str, user_name: str, role: str) -> Membership:
        """Give a user a role in a workspace (owners only; recorded)."""
        found = self.open(caller, workspace, Action.MANAGE)
        user = self.user(user_name)
        chosen = parse_role(role)
        if chosen is not Role.OWNER:
            self._keep_an_owner(found, user)
        self._members.set_role(found.id, user.id, chosen.value)
        self.record(caller, "shared", found.id, user.name, chosen.value)
        return Membership(found.id, user.id, user.name, chosen.value)

    def unshare(self, caller: User | None, workspace: str, user_name: str) -> None:
        """Take a user's role in a workspace away (owners only; recorded); the last owner cannot leave it ownerless."""
        found = self.open(caller, workspace, Action.MANAGE)
        user = self.user(user_name)
        self._keep_an_owner(found, user)
        if not self._members.remove_member(found.id, user.id):
            raise WorkspaceError(f"{user.name} has no role in '{found.name}'.")
        self.record(caller, "unshared", found.id, user.name)

    def _keep_an_owner(self, workspace: Workspace, leaving: User) -> None:
        """Refuse to take the owner role from a workspace's only owner (it would be left without one)."""
        owners = [m.user_id for m in self._members.members(workspace.id) if m.role == Role.OWNER.value]
        if owners == [leaving.id]:
            raise WorkspaceError(f"{leaving.name} is the only owner of '{workspace.name}': make someone else owner first.")

    def members(self, caller: User | None, workspace: str) -> list[Membership]:
        """The workspace's members with their roles (owners only)."""
        return self._members.members(self.open(caller, workspace, Action.MANAGE).id)

    # The audit log

    def record(
        self, caller: User | None, action: str, workspace_id: str = "", target: str = "", detail: str = ""
    ) -> None:
        """Append to the audit log (only when accounts are on); the detail is cut to WORKSPACE_ACCOUNTS__AUDIT_DETAIL_CHARS."""
        if not self.enabled:
            return
        name = caller.name if caller else OPERATOR
        cut = detail[: self.settings.audit_detail_chars]
        self._log.record(AuditEntry(now_precise(), name, action, workspace_id, target[:500], cut))

    def audit(self, caller: User | None, workspace: str) -> list[AuditEntry]:
        """A workspace's audit log, oldest first (owners only; reading it for export is recorded)."""
        found = self.open(caller, workspace, Action.MANAGE)
        entries = self._log.workspace_entries(found.id, self.settings.audit_limit)
        self.record(caller, "exported audit log", found.id, found.name)
        return entries

    def user_audit(self, caller: User | None, user_name: str) -> list[AuditEntry]:
        """What a user did, oldest first (the user themselves, an admin or the operator)."""
        user = self.user(user_name)
        self.require_self_or_admin(caller, user)
        return self._log.user_entries(user.name, self.settings.audit_limit)


def export_audit(entries: Sequence[AuditEntry], fmt: str) -> str:
    """The entries as JSON lines or CSV (with a header row)."""
    if fmt not in AUDIT_FORMATS:
        raise WorkspaceError(f"Unknown audit format '{fmt}': use jsonl or csv.")
    if fmt == "jsonl":
        return "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in entries)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["at", "user", "action", "workspace_id", "target", "detail"])
    for e in entries:
        writer.writerow([_csv_safe(v) for v in (e.at, e.user, e.action, e.workspace_id, e.target, e.detail)])
    return out.getvalue()


def _csv_safe(value: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula (a question may start with '=')."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
