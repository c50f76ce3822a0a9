"""Users, memberships, API keys and the audit log in SQL that SQLite and PostgreSQL both run (`?` placeholders,
turned into `%s` for psycopg); storage/sqlite/accounts.py and storage/postgres/accounts.py bind it to their
database and say which exception a broken UNIQUE constraint raises. Tables: SQLite migrations 18 and 19,
PostgreSQL 9 and 10."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from workspace_app.errors import UserExistsError
from workspace_app.models.accounts import ApiKey, AuditEntry, Membership, User, now_precise


class Cursor(Protocol):
    """What both drivers' cursors give: the rows changed."""

    rowcount: int


class Connection(Protocol):
    """What both drivers' connections give inside a transaction."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...


class SqlDatabase(Protocol):
    """What both catalog databases give: a transaction and a read."""

    def transaction(self) -> AbstractContextManager[Any]: ...
    def query(self, sql: str, params: Sequence[Any] = ()) -> Sequence[Any]: ...


class SqlAccounts:
    """The `UserStore`, `MembershipStore`, `ApiKeyStore` and `AuditLog` over a catalog database."""

    def __init__(self, database: SqlDatabase, placeholder: str, unique_error: type[Exception]) -> None:
        self._db = database
        self._mark = placeholder
        self._unique_error = unique_error

    def _sql(self, sql: str) -> str:
        return sql if self._mark == "?" else sql.replace("?", self._mark)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Any]:
        yield from self._db.query(self._sql(sql), params)

    def _write(self, sql: str, params: Sequence[Any]) -> int:
        with self._db.transaction() as db:
            return int(db.execute(self._sql(sql), params).rowcount)

    # Users

    def add_user(self, name: str, password_hash: str, is_admin: bool) -> User:
        """Add a user with a unique name (UserExistsError when it is taken)."""
        user = User(uuid.uuid4().hex[:12], name, is_admin, now_precise())
        try:
            self._write(
                "INSERT INTO users (id, name, password_hash, is_admin, created_at) VALUES (?, ?, ?, ?, ?)",
                (user.id, user.name, password_hash, is_admin, user.created_at),
            )
        except self._unique_error as exc:
            raise UserExistsError(f"A user named '{name}' already exists. Pick another name.") from exc
        return user

    def find_user(self, name_or_id: str) -> User | None:
        """The user with this name or id, if any."""
        rows = list(self._rows("SELECT * FROM users WHERE name = ? OR id = ? ORDER BY name = ? DESC",
                               (name_or_id, name_or_id, name_or_id)))
        return _user(rows[0]) if rows else None

    def list_users(self) -> list[User]:
        """Every user, oldest first."""
        return [_user(row) for row in self._rows("SELECT * FROM users ORDER BY created_at, name")]

    def password_hash(self, user_id: str) -> str | None:
        """The stored password hash of a user, to check a password against."""
        rows = list(self._rows("SELECT password_hash FROM users WHERE id = ?", (user_id,)))
        return str(rows[0]["password_hash"]) if rows else None

    def set_password(self, user_id: str, password_hash: str) -> None:
        """Replace a user's password hash."""
        self._write("UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id))

    def identity_user(self, issuer: str, subject: str) -> User | None:
        """The user linked to an identity provider's person (issuer and subject), if any."""
        rows = list(self._rows(
            "SELECT u.* FROM user_identities i JOIN users u ON u.id = i.user_id WHERE i.issuer = ? AND i.subject = ?",
            (issuer, subject),
        ))
        return _user(rows[0]) if rows else None

    def add_identity_user(self, name: str, issuer: str, subject: str, email: str) -> User:
        """Add a user without a password (they sign in through the provider), linked to the identity, in one
        transaction; UserExistsError when the name or the identity is taken."""
        user = User(uuid.uuid4().hex[:12], name, False, now_precise())
        try:
            with self._db.transaction() as db:
                db.execute(self._sql("INSERT INTO users (id, name, password_hash, is_admin, created_at) "
                                     "VALUES (?, ?, '', ?, ?)"), (user.id, name, False, user.created_at))
                db.execute(self._sql("INSERT INTO user_identities (issuer, subject, user_id, email, created_at) "
                                     "VALUES (?, ?, ?, ?, ?)"), (issuer, subject, user.id, email, user.created_at))
        except self._unique_error as exc:
            raise UserExistsError(f"A user named '{name}' (or this sign-in) already exists.") from exc
        return user

    # Memberships

    def set_role(self, workspace_id: str, user_id: str, role: str) -> None:
        """Give a user a role in a workspace (replacing the one they had)."""
        with self._db.transaction() as db:
            db.execute(self._sql("DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?"),
                       (workspace_id, user_id))
            db.execute(
                self._sql("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)"),
                (workspace_id, user_id, role, now_precise()),
            )

    def remove_member(self, workspace_id: str, user_id: str) -> bool:
        """Take a user's role in a workspace away; False when they had none."""
        return self._write("DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?", (workspace_id, user_id)) > 0

    def role_of(self, workspace_id: str, user_id: str) -> str | None:
        """The user's role in the workspace, or None."""
        rows = list(self._rows("SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?",
                               (workspace_id, user_id)))
        return str(rows[0]["role"]) if rows else None

    def members(self, workspace_id: str) -> list[Membership]:
        """The workspace's members with their roles, by name."""
        rows = self._rows(
            "SELECT m.workspace_id, m.user_id, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id "
            "WHERE m.workspace_id = ? ORDER BY u.name", (workspace_id,),
        )
        return [Membership(r["workspace_id"], r["user_id"], r["name"], r["role"]) for r in rows]

    def user_workspaces(self, user_id: str) -> dict[str, str]:
        """Workspace id -> the user's role there, for every workspace they are a member of."""
        rows = self._rows("SELECT workspace_id, role FROM memberships WHERE user_id = ?", (user_id,))
        return {str(r["workspace_id"]): str(r["role"]) for r in rows}

    # API keys

    def add_key(self, key_id: str, user_id: str, digest: str, label: str) -> ApiKey:
        """Store a new key's id and digest for a user."""
        key = ApiKey(key_id, user_id, label, now_precise())
        self._write("INSERT INTO api_keys (id, user_id, digest, label, created_at) VALUES (?, ?, ?, ?, ?)",
                    (key_id, user_id, digest, label, key.created_at))
        return key

    def live_key(self, key_id: str) -> tuple[str, str] | None:
        """(user id, digest) of a key that is not revoked, or None."""
        rows = list(self._rows("SELECT user_id, digest FROM api_keys WHERE id = ? AND revoked_at IS NULL", (key_id,)))
        return (str(rows[0]["user_id"]), str(rows[0]["digest"])) if rows else None

    def list_keys(self, user_id: str) -> list[ApiKey]:
        """A user's keys (revoked ones too), oldest first."""
        rows = self._rows("SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id", (user_id,))
        return [ApiKey(r["id"], r["user_id"], r["label"], r["created_at"], r["revoked_at"] is not None) for r in rows]

    def revoke_key(self, user_id: str, key_id: str) -> bool:
        """Revoke one of the user's live keys; False when they have no such live key."""
        return self._write("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                           (now_precise(), key_id, user_id)) > 0

    # The audit log

    def record(self, entry: AuditEntry) -> None:
        """Append an entry."""
        self._write(
            "INSERT INTO audit_log (at, user_name, action, workspace_id, target, detail) VALUES (?, ?, ?, ?, ?, ?)",
            (entry.at, entry.user, entry.action, entry.workspace_id, entry.target, entry.detail),
        )

    def workspace_entries(self, workspace_id: str, limit: int) -> list[AuditEntry]:
        """The latest `limit` entries of a workspace, oldest first."""
        return self._entries("workspace_id", workspace_id, limit)

    def user_entries(self, user: str, limit: int) -> list[AuditEntry]:
        """The latest `limit` entries of what a user (by name) did, oldest first."""
        return self._entries("user_name", user, limit)

    def _entries(self, column: str, value: str, limit: int) -> list[AuditEntry]:
        rows = self._rows(
            f"SELECT * FROM (SELECT * FROM audit_log WHERE {column} = ? ORDER BY id DESC LIMIT ?) AS recent ORDER BY id",
            (value, limit),
        )
        return [AuditEntry(r["at"], r["user_name"], r["action"], r["workspace_id"], r["target"], r["detail"])
                for r in rows]


def _user(row: Any) -> User:
    return User(str(row["id"]), str(row["name"]), bool(row["is_admin"]), str(row["created_at"]))
