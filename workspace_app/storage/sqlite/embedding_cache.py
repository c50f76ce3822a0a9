"""SQLite embedding cache: the same text is never embedded twice by the same model, in any workspace."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray


class SqliteEmbeddingCache:
    """float32 vectors keyed by (model, sha256 of the text) in their own SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, key TEXT NOT NULL, vector BLOB NOT NULL, "
            "PRIMARY KEY (model, key)) WITHOUT ROWID"
        )

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors for the keys that have one."""
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                batch = list(keys[start : start + 500])
                rows = self._db.execute(
                    f"SELECT key, vector FROM embeddings WHERE model = ? AND key IN ({','.join('?' * len(batch))})",
                    (model, *batch),
                ).fetchall()
                found.update((key, np.frombuffer(blob, dtype=np.float32).tolist()) for key, blob in rows)
        return found

    def put_many(self, model: str, items: Mapping[str, Sequence[float] | NDArray[np.float32]]) -> None:
        """Store vectors (existing keys are kept)."""
        rows = [(model, key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in items.items()]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO embeddings (model, key, vector) VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
