"""The tokens FTS5 makes of index terms, for the PostgreSQL keyword index to hold exactly what SQLite's would.

The core's analyzer gives storage space-separated terms; SQLite's FTS5 then tokenizes them once more
(`porter unicode61 remove_diacritics 2`: "1.5" becomes the phrase "1" "5", "treatments" the token "treatment",
"é" folds to "e"). For BM25 scores equal to SQLite's, PostgreSQL's postings must hold the same tokens, so the
tokenizing is done by FTS5 itself: an in-memory SQLite table with that tokenizer and its `fts5vocab` instance
view (term, row, column, position), written and rolled back per call. No file is touched.
SEE: https://www.sqlite.org/fts5.html#the_fts5vocab_virtual_table_module
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from workspace_app.storage.sqlite.keywords import FTS_TOKENIZER


class Fts5Tokenizer:
    """FTS5's tokenizer as a function of texts: each text's tokens in order."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._db.execute(f"CREATE VIRTUAL TABLE texts USING fts5(text, tokenize = '{FTS_TOKENIZER}')")
        self._db.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(texts, 'instance')")
        self._lock = threading.Lock()

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """The tokens of each text, in the order FTS5 reads them."""
        found: list[list[tuple[int, str]]] = [[] for _ in texts]
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany("INSERT INTO texts (rowid, text) VALUES (?, ?)", enumerate(texts, start=1))
                for term, row, offset in self._db.execute("SELECT term, doc, offset FROM tokens"):
                    found[row - 1].append((offset, term))
            finally:
                self._db.execute("ROLLBACK")
        return [[term for _, term in sorted(tokens)] for tokens in found]

    def close(self) -> None:
        """Close the in-memory database."""
        self._db.close()
