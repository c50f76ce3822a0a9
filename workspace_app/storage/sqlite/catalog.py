"""The SQLite catalog: one `Database` (WAL, foreign keys, migrations) with its repositories on top.

Each repository is an attribute (`catalog.workspaces`, `.documents`, `.chunks`, `.leases`, `.chats`, `.notes`,
`.guides`, `.patients`, `.vocabulary`, `.imports`, `.figures`, `.accounts`);
the catalog also answers every repository method itself, so it satisfies the `Catalog`, `ChatRepository` and
`NoteRepository` protocols as one object.
"""

from __future__ import annotations

from pathlib import Path

from workspace_app.storage.facade import CatalogFacade
from workspace_app.storage.sqlite.accounts import SqliteAccounts
from workspace_app.storage.sqlite.chats import SqliteChats, SqliteNotes
from workspace_app.storage.sqlite.chunks import SqliteChunks
from workspace_app.storage.sqlite.database import Database
from workspace_app.storage.sqlite.documents import SqliteDocuments
from workspace_app.storage.sqlite.figures import SqliteFigures
from workspace_app.storage.sqlite.guides import SqliteGuides
from workspace_app.storage.sqlite.imports import SqliteImports
from workspace_app.storage.sqlite.leases import SqliteJobLeases
from workspace_app.storage.sqlite.migrations import MIGRATIONS
from workspace_app.storage.sqlite.patients import SqlitePatientStore
from workspace_app.storage.sqlite.vocabulary import SqliteVocabularyStore
from workspace_app.storage.sqlite.workspaces import SqliteWorkspaces


class SqliteCatalog(CatalogFacade):
    """The catalog in one SQLite file; safe to use from several threads and processes (WAL)."""

    def __init__(self, path: Path) -> None:
        self.database = Database(path)
        self.database.migrate(MIGRATIONS)
        self.workspaces = SqliteWorkspaces(self.database)
        self.documents = SqliteDocuments(self.database)
        self.chunks = SqliteChunks(self.database)
        self.leases = SqliteJobLeases(self.database)
        self.chats = SqliteChats(self.database)
        self.notes = SqliteNotes(self.database)
        self.guides = SqliteGuides(self.database)
        self.patients = SqlitePatientStore(self.database)
        self.vocabulary = SqliteVocabularyStore(self.database)
        self.imports = SqliteImports(self.database)
        self.accounts = SqliteAccounts(self.database)
        self.figures = SqliteFigures(self.database)

    def close(self) -> None:
        """Close the connection."""
        self.database.close()
