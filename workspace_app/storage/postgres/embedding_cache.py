"""PostgreSQL embedding cache: the same text is never embedded twice by the same model, on any machine.

With the catalog on PostgreSQL the processes of a deployment run on several machines; a cache file in each data dir
would leave the API's machine without the sentence vectors a worker made at ingestion (answer/sentence_vectors.py),
and every ask there would embed them again. So the cache is a table in the catalog's database, on a connection of
its own (the embedder's threads do not wait for the catalog's lock). Like the SQLite cache it keeps its own schema,
outside the catalog's migrations: a cache can always be made again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from workspace_app.storage.postgres.database import PostgresDatabase

_SCHEMA_LOCK = 7_230_413  # pg_advisory_xact_lock key: processes starting together create the table once
BATCH = 500


class PostgresEmbeddingCache:
    """float32 vectors keyed by (model, sha256 of the text) in the table `embedding_cache`."""

    def __init__(self, url: str) -> None:
        self._database = PostgresDatabase(url)
        with self._database.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            db.execute(
                "CREATE TABLE IF NOT EXISTS embedding_cache (model TEXT NOT NULL, key TEXT NOT NULL, "
                "vector BYTEA NOT NULL, PRIMARY KEY (model, key))"
            )

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors for the keys that have one."""
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), BATCH):
            rows = self._database.query(
                "SELECT key, vector FROM embedding_cache WHERE model = %s AND key = ANY(%s)",
                (model, list(keys[start : start + BATCH])),
            )
            found.update((row["key"], np.frombuffer(row["vector"], dtype=np.float32).tolist()) for row in rows)
        return found

    def put_many(self, model: str, items: Mapping[str, Sequence[float] | NDArray[np.float32]]) -> None:
        """Store vectors (existing keys are kept)."""
        rows = [(model, key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in items.items()]
        if not rows:
            return
        with self._database.transaction() as db, db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO embedding_cache (model, key, vector) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", rows
            )

    def close(self) -> None:
        """Close the connection."""
        self._database.close()
