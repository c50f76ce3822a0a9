"""Plain data of accounts: users, their roles in workspaces, their API keys and the audit log."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class User:
    """A person who signs in: a unique name; admins manage users and keys (the first user is one)."""

    id: str
    name: str
    is_admin: bool
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """The user as JSON (never the password hash)."""
        return {"id": self.id, "name": self.name, "is_admin": self.is_admin, "created_at": self.created_at}


@dataclass(frozen=True)
class Identity:
    """Who an identity provider says signed in: its issuer and subject (together, one person for good) and the
    email and name claims it gave."""

    issuer: str
    subject: str
    email: str = ""
    name: str = ""
    email_verified: bool | None = None


@dataclass(frozen=True)
class Membership:
    """A user's role in a workspace: owner, editor or viewer."""

    workspace_id: str
    user_id: str
    user_name: str
    role: str

    def to_json(self) -> dict[str, Any]:
        """The membership as JSON."""
        return asdict(self)


@dataclass(frozen=True)
class ApiKey:
    """One of a user's API keys as stored: its public id (the key's prefix), never the key itself."""

    id: str
    user_id: str
    label: str
    created_at: str
    revoked: bool = False

    def to_json(self) -> dict[str, Any]:
        """The key's record as JSON."""
        return asdict(self)


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit log: when, who, what, in which workspace, on what, and a detail (the question asked)."""

    at: str
    user: str
    action: str
    workspace_id: str
    target: str = ""
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON."""
        return asdict(self)


def now_precise() -> str:
    """Current UTC time as ISO 8601 text to the millisecond (audit entries made close together keep their order)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
