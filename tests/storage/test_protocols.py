"""The storage protocols stay small (3-8 methods of their own, STYLE.md §1; a few two-method caches and leases
predate the split), larger stores are unions of role protocols, and the SQLite classes provide every method of
the protocols the wiring hands them as. mypy checks the signatures; this checks the shape."""

from __future__ import annotations

import inspect
from typing import Protocol

from workspace_app.storage import base
from workspace_app.storage.files import LocalFileStore, LocalThumbnailStore, LocalUploadFolder
from workspace_app.storage.postgres.catalog import PostgresCatalog
from workspace_app.storage.postgres.figures import PostgresFigures
from workspace_app.storage.postgres.graph import PostgresGraphStore
from workspace_app.storage.postgres.imports import PostgresImports
from workspace_app.storage.postgres.patients import PostgresPatientStore
from workspace_app.storage.postgres.vocabulary import PostgresVocabularyStore
from workspace_app.storage.s3 import S3FileStore, S3ThumbnailStore, S3UploadFolder
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.storage.sqlite.chats import SqliteChats, SqliteNotes
from workspace_app.storage.sqlite.figures import SqliteFigures
from workspace_app.storage.sqlite.graph import SqliteGraphStore
from workspace_app.storage.sqlite.guides import SqliteGuides
from workspace_app.storage.sqlite.imports import SqliteImports
from workspace_app.storage.sqlite.patients import SqlitePatientStore
from workspace_app.storage.sqlite.vocabulary import SqliteVocabularyStore

# Protocols of fewer than three methods, each one thing a caller needs on its own.
SMALL = {"Lease", "EmbeddingCache", "VocabularyStore", "ResponseCache", "UploadFolder"}


def protocols() -> dict[str, type]:
    """Every protocol class that base.py defines."""
    return {
        name: cls for name, cls in vars(base).items()
        if inspect.isclass(cls) and cls.__module__ == base.__name__ and getattr(cls, "_is_protocol", False)
    }


def own_methods(protocol: type) -> set[str]:
    """The methods a protocol declares itself (not those it gathers from its role protocols)."""
    return {name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")}


def all_methods(protocol: type) -> set[str]:
    """Its own methods and those of every protocol it is made of."""
    bases = [cls for cls in protocol.__mro__ if cls not in (protocol, Protocol, object) and cls.__module__ == base.__name__]
    return own_methods(protocol).union(*(own_methods(cls) for cls in bases))


def test_every_protocol_declares_three_to_eight_methods_or_is_a_union_of_roles() -> None:
    sizes = {name: len(own_methods(cls)) for name, cls in protocols().items()}
    assert {"GraphWriter", "GraphReader", "EventWriter", "EventReader", "EventVectors", "ImportRecords"} <= set(sizes)
    unions = {"GraphStore", "EventStore", "ImportStore", "Catalog"}
    too_big = {name: size for name, size in sizes.items() if size > 8}
    too_small = {name: size for name, size in sizes.items() if size < 3 and name not in SMALL | unions}
    assert not too_big and not too_small, (too_big, too_small)
    assert all(len(protocols()[name].__mro__) > 3 for name in unions), "each union is made of role protocols"


def test_the_sqlite_classes_provide_every_method_of_their_protocols() -> None:
    provided = {
        "GraphStore": SqliteGraphStore, "ResponseCache": SqliteGraphStore, "EventStore": SqlitePatientStore,
        "VocabularyStore": SqliteVocabularyStore, "ImportStore": SqliteImports, "Catalog": SqliteCatalog,
        "ChatRepository": SqliteChats, "NoteRepository": SqliteNotes, "GuideRepository": SqliteGuides,
        "FigureRepository": SqliteFigures, "ThumbnailStore": LocalThumbnailStore,
    }
    missing = {
        name: sorted(all_methods(protocols()[name]) - set(dir(cls))) for name, cls in provided.items()
    }
    assert not any(missing.values()), missing


def test_the_postgres_catalog_provides_every_method_of_the_protocols_it_holds() -> None:
    for name in ("Catalog", "ChatRepository", "NoteRepository", "GuideRepository"):
        assert sorted(all_methods(protocols()[name]) - set(dir(PostgresCatalog))) == [], name
    assert sorted(all_methods(protocols()["VocabularyStore"]) - set(dir(PostgresVocabularyStore))) == []
    assert sorted(all_methods(protocols()["ImportStore"]) - set(dir(PostgresImports))) == []
    assert sorted(all_methods(protocols()["EventStore"]) - set(dir(PostgresPatientStore))) == []
    assert sorted(all_methods(protocols()["FigureRepository"]) - set(dir(PostgresFigures))) == []
    for name in ("GraphStore", "ResponseCache"):
        assert sorted(all_methods(protocols()[name]) - set(dir(PostgresGraphStore))) == [], name


def test_the_file_stores_on_disk_and_in_s3_provide_every_method_of_their_protocols() -> None:
    stores = {
        "FileStore": (LocalFileStore, S3FileStore), "ThumbnailStore": (LocalThumbnailStore, S3ThumbnailStore),
        "UploadFolder": (LocalUploadFolder, S3UploadFolder),
    }
    for name, classes in stores.items():
        for cls in classes:
            assert sorted(all_methods(protocols()[name]) - set(dir(cls))) == [], (name, cls.__name__)
