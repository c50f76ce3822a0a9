"""The PostgreSQL catalog: one `PostgresDatabase` (migrations) with every repository of the SQLite catalog on it.

It answers the `Catalog`, `ChatRepository`, `NoteRepository` and `GuideRepository` protocols (workspaces,
documents, chunks with the BM25 keyword index, job leases, chats, notes, source guides and suggestions) as
`SqliteCatalog` does, with the patient, vocabulary and import stores as `.patients`, `.vocabulary` and `.imports`;
the graph store is built on its `.database` by the wiring (storage/postgres/graph.py), as for SQLite.
"""

from __future__ import annotations

from workspace_app.storage.facade import CatalogFacade
from workspace_app.storage.postgres.accounts import PostgresAccounts
from workspace_app.storage.postgres.chats import PostgresChats, PostgresNotes
from workspace_app.storage.postgres.chunks import PostgresChunks
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.postgres.documents import PostgresDocuments
from workspace_app.storage.postgres.figures import PostgresFigures
from workspace_app.storage.postgres.guides import PostgresGuides
from workspace_app.storage.postgres.imports import PostgresImports
from workspace_app.storage.postgres.leases import PostgresJobLeases
from workspace_app.storage.postgres.migrations import MIGRATIONS
from workspace_app.storage.postgres.patients import PostgresPatientStore
from workspace_app.storage.postgres.tokens import Fts5Tokenizer
from workspace_app.storage.postgres.vocabulary import PostgresVocabularyStore
from workspace_app.storage.postgres.workspaces import PostgresWorkspaces


class PostgresCatalog(CatalogFacade):
    """The catalog in one PostgreSQL database; safe to use from several threads (one connection under a lock)
    and processes (transactions)."""

    def __init__(self, url: str) -> None:
        self.database = PostgresDatabase(url)
        self.database.migrate(MIGRATIONS)
        self._tokenizer = Fts5Tokenizer()
        self.workspaces = PostgresWorkspaces(self.database)
        self.documents = PostgresDocuments(self.database)
        self.chunks = PostgresChunks(self.database, self._tokenizer)
        self.leases = PostgresJobLeases(self.database)
        self.chats = PostgresChats(self.database)
        self.notes = PostgresNotes(self.database)
        self.guides = PostgresGuides(self.database)
        self.vocabulary = PostgresVocabularyStore(self.database)
        self.patients = PostgresPatientStore(self.database)
        self.imports = PostgresImports(self.database)
        self.accounts = PostgresAccounts(self.database)
        self.figures = PostgresFigures(self.database)

    def close(self) -> None:
        """Close the connection."""
        self.database.close()
        self._tokenizer.close()
        self.figures.close()
