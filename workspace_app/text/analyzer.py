"""Terms for the BM25 index: words for Latin text, jieba words for Chinese, stopwords dropped from queries.

The index stores these terms separated by spaces in an FTS5 `porter unicode61` column, so English gets
stemmed by FTS5 and Chinese words (segmented here) stay whole: the trigram tokenizer alone misses
two-character terms such as 血糖. Storage receives the terms (`index_text`); answers and retrieval read
the content terms of questions and evidence through the same analyzer (`workspace_app.text.terms`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from functools import lru_cache

from workspace_app.text.cjk import IDEOGRAPHS, is_cjk

_WORD = re.compile(r"[0-9a-z\u00c0-\u024f\u0370-\u03ff]+(?:[.,][0-9]+)?", re.IGNORECASE)
_SEGMENTED = re.compile(f"([{IDEOGRAPHS}]+)")
_LOCK = threading.Lock()

STOPWORDS = frozenset(
    """a an and are as at be been being by can could did do does for from had has have how i if in into is it
    its may might more most much of on or should such than that the their them then there these they this those
    to was were what when where which while who whom why will with would you your patients patient
    的 是 在 和 了 吗 与 及 或 对 于 为 什么 如何 哪些 多少 怎样 是否 应 应该 需要 有 中 时 其 该 等 个 以 上 下 患者""".split()
)


@lru_cache(maxsize=1)
def _jieba() -> object:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    with _LOCK:
        jieba.initialize()
    return jieba


def _segment(run: str) -> list[str]:
    jieba = _jieba()
    return [word for word in jieba.cut(run, HMM=True) if word.strip()]  # type: ignore[attr-defined]


def analyze(text: str) -> list[str]:
    """Split text into lower-case index terms (jieba words for Chinese runs)."""
    terms: list[str] = []
    for piece in _SEGMENTED.split(text.lower()):
        if not piece:
            continue
        if is_cjk(piece):
            terms.extend(_segment(piece))
        else:
            terms.extend(match.group(0) for match in _WORD.finditer(piece))
    return terms


def index_text(text: str) -> str:
    """The space-separated terms stored in the keyword index."""
    return " ".join(analyze(text))


def query_terms(query: str) -> list[str]:
    """Distinct non-stopword terms of a query, in order."""
    seen: dict[str, None] = {}
    for term in analyze(query):
        if term not in STOPWORDS and (len(term) > 1 or is_cjk(term) or term.isdigit()):
            seen.setdefault(term, None)
    return list(seen)


def expand_with_abbreviations(query: str, terms: list[str], abbreviations: Mapping[str, str]) -> list[str]:
    """Add the short form of every defined term whose long form the query spells out ("... orthostatic
    hypotension" -> also "oh"). Only long -> short: expanding a short form into its words drifts off topic."""
    present = {_singular(term) for term in analyze(query)}
    extra = []
    for short, long_form in abbreviations.items():
        words = [_singular(word) for word in analyze(long_form)]
        if words and all(word in present for word in words):
            extra.append(short.lower())
    return list(dict.fromkeys(terms + extra))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
