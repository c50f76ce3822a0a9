"""Abbreviations defined in the text, e.g. "orthostatic hypotension (OH)" -> {"OH": "orthostatic hypotension"}.

Guidelines define a term once and use the short form afterwards, while people ask with the long form; the
pairs let search add the short form to a query that spells out the long one.

SEE: Schwartz & Hearst, "A simple algorithm for identifying abbreviation definitions in biomedical text",
PSB 2003.
"""

from __future__ import annotations

import re

_CANDIDATE = re.compile(r"((?:[A-Za-z][\w'’-]*\s+){0,8}[A-Za-z][\w'’-]*)\s*\(([A-Za-z][A-Za-z0-9&/-]{1,9})\)")


def find_abbreviations(text: str) -> dict[str, str]:
    """Short form -> long form for every definition "long form (SHORT)" in the text (first one wins)."""
    found: dict[str, str] = {}
    for match in _CANDIDATE.finditer(text):
        words, short = " ".join(match.group(1).split()), match.group(2)
        if not _looks_like_abbreviation(short):
            continue
        long_form = _long_form(words, short)
        if long_form and len(long_form) > len(short) and len(long_form.split()) <= min(len(short) + 5, 2 * len(short)):
            found.setdefault(short, long_form)
    return found


def _looks_like_abbreviation(short: str) -> bool:
    capitals = sum(ch.isupper() for ch in short)
    return capitals >= 2 or (capitals == 1 and len(short) <= 3 and short[0].isupper())


def _long_form(words: str, short: str) -> str | None:
    """Match the short form's characters right to left inside the words; the first must start a word."""
    letters = [ch for ch in (short[:-1] if short.endswith("s") and short[:-1].isupper() else short).lower() if ch.isalnum()]
    text = words.lower()
    position = len(text) - 1
    for index in range(len(letters) - 1, -1, -1):
        char = letters[index]
        while position >= 0 and (text[position] != char or (index == 0 and position > 0 and text[position - 1].isalnum())):
            position -= 1
        if position < 0:
            return None
        position -= 1
    start = text.rfind(" ", 0, position + 1) + 1
    return words[start:]
