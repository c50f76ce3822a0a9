"""Users, memberships, API keys and the audit log in the SQLite catalog (migration 18; SQL in storage/accounts.py)."""

from __future__ import annotations

import sqlite3

from workspace_app.storage.accounts import SqlAccounts
from workspace_app.storage.sqlite.database import Database


class SqliteAccounts(SqlAccounts):
    """The `UserStore`, `MembershipStore`, `ApiKeyStore` and `AuditLog` over the SQLite catalog's database."""

    def __init__(self, database: Database) -> None:
        super().__init__(database, "?", sqlite3.IntegrityError)
