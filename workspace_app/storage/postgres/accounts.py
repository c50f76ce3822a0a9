"""Users, memberships, API keys and the audit log in the PostgreSQL catalog (migration 9; SQL in
storage/accounts.py)."""

from __future__ import annotations

import psycopg

from workspace_app.storage.accounts import SqlAccounts
from workspace_app.storage.postgres.database import PostgresDatabase


class PostgresAccounts(SqlAccounts):
    """The `UserStore`, `MembershipStore`, `ApiKeyStore` and `AuditLog` over the PostgreSQL catalog's database."""

    def __init__(self, database: PostgresDatabase) -> None:
        super().__init__(database, "%s", psycopg.errors.UniqueViolation)
