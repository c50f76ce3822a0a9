"""Both catalogs under one test: the `catalog_store` fixture (registered in tests/conftest.py) runs a test on a
SQLite file and on a PostgreSQL database (the latter marked `postgres`, on the session's throwaway cluster from
tests/postgres_cluster.py).

A test opens the catalog with `store.open()` (again, for reopen tests) and reads rows behind the repositories with
`store.scalar(sql)` and `store.keyword_rows()`, whichever backend it is.

Tests of processes (the CLI, workers) take `module_catalog_environ` instead: the environment that puts their catalog
on SQLite (nothing to add: catalog.sqlite in each data dir) or on a PostgreSQL database of the module's
(`WORKSPACE_CATALOG__URL`); `CatalogStore.of_process(data_dir, environ)` reads the catalog those processes use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from keyword_index import keyword_rows as sqlite_keyword_rows

CATALOGS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
CATALOG_URL = "WORKSPACE_CATALOG__URL"


class CatalogStore:
    """Where a test's catalog lives, and raw reads of it."""

    def __init__(self, kind: str, location: str) -> None:
        self.kind = kind
        self.location = location
        self._opened: list[Any] = []

    @classmethod
    def of_process(cls, data_dir: Path, environ: dict[str, str]) -> CatalogStore:
        """The catalog that a process started on `data_dir` with `environ` (a `module_catalog_environ`) uses."""
        url = environ.get(CATALOG_URL)
        return cls("postgres", url) if url else cls("sqlite", str(data_dir / "catalog.sqlite"))

    def open(self) -> Any:
        """A catalog on the store (migrated); closed at the end of the test."""
        if self.kind == "sqlite":
            from workspace_app.storage.sqlite.catalog import SqliteCatalog

            catalog: Any = SqliteCatalog(Path(self.location))
        else:
            from workspace_app.storage.postgres.catalog import PostgresCatalog

            catalog = PostgresCatalog(self.location)
        self._opened.append(catalog)
        return catalog

    def scalar(self, sql: str) -> Any:
        """The first value of a query without parameters, read through a connection of its own."""
        if self.kind == "sqlite":
            with sqlite3.connect(self.location) as db:
                return db.execute(sql).fetchone()[0]
        import psycopg

        with psycopg.connect(self.location) as db:
            row = db.execute(sql).fetchone()
            return None if row is None else row[0]

    def keyword_rows(self, document_id: str | None = None) -> int:
        """Rows of the keyword index (one per chunk in either backend), or those of one document's chunks."""
        if self.kind == "sqlite":
            with sqlite3.connect(self.location) as db:
                return sqlite_keyword_rows(db, document_id)
        where = f" WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = '{document_id}')" if document_id else ""
        return int(self.scalar("SELECT COUNT(*) FROM keyword_lengths" + where))

    def close(self) -> None:
        for catalog in self._opened:
            catalog.close()


@pytest.fixture(params=CATALOGS)
def catalog_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CatalogStore]:
    """The test's catalog store: a SQLite file under tmp_path, or a new PostgreSQL database."""
    if request.param == "sqlite":
        store = CatalogStore("sqlite", str(tmp_path / "catalog.sqlite"))
    else:
        store = CatalogStore("postgres", request.getfixturevalue("postgres_url"))
    try:
        yield store
    finally:
        store.close()


@contextmanager
def catalog_environ(kind: str, request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment of processes on a catalog of this kind: nothing for SQLite, the URL of a new database of the
    session's cluster for PostgreSQL (dropped afterwards, with whatever connections are left open to it)."""
    if kind == "sqlite":
        yield {}
        return
    with request.getfixturevalue("postgres_cluster").database() as url:
        yield {CATALOG_URL: url}


@pytest.fixture(scope="module", params=CATALOGS)
def module_catalog_environ(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment that puts the catalog of the processes a test module starts on SQLite, then on one
    PostgreSQL database for the whole module (pass it to `cli(..., **environ)` and to workers)."""
    with catalog_environ(request.param, request) as environ:
        yield environ
