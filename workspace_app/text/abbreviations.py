"""Abbreviations defined in the text, e.g. "orthostatic hypotension (OH)" -> {"OH": "orthostatic hypotension"}.

Guidelines define a term once and use the short form afterwards, while people ask with the long form; the
pairs let search add the short form to a query that spells out the long one.

SEE: Schwartz & Hearst, "A simple algorithm for identifying abbreviation definitions in biomedical text",
PSB 2003.
"""

from __future__ import annotations

import re

_CANDIDATE = re.compile(r"((?:[A-Za-z][\w'’-]*\s+){0,8}[A-Za-z][\w'’-]*)\s*\(([A-Za-z][A-Za-z0-9&/-]{1,9})\)")


# A table's glossary note: "AVB indicates atrioventricular block; BBB, bundle-branch block; …; and VHD, valvular
# heart disease." Its terms are used in the table above it and defined only here.
_GLOSSARY = re.compile(r"\b([A-Z][A-Za-z0-9&/-]{1,9}) indicates ([^;]+?)(?=;)")
_GLOSSARY_ITEM = re.compile(r"^\s*(?:and\s+)?([A-Za-z][A-Za-z0-9&/-]{1,9}),\s+([^;]+?)\.?\s*$")


def find_abbreviations(text: str) -> dict[str, str]:
    """Short form -> long form for every definition "long form (SHORT)" in the text, and every entry of a glossary
    note ("SFSR, San Francisco Syncope Rule"); the first one wins."""
    found: dict[str, str] = {}
    for match in _CANDIDATE.finditer(text):
        _keep(found, match.group(2), " ".join(match.group(1).split()))
    for note in _GLOSSARY.finditer(text):
        _keep(found, note.group(1), note.group(2), whole=True)
        for item in text[note.end() :].split("\n", 1)[0].split(";")[1:]:
            entry = _GLOSSARY_ITEM.match(item)
            if entry is None:
                break
            _keep(found, entry.group(1), entry.group(2), whole=True)
    return found


def _keep(found: dict[str, str], short: str, words: str, whole: bool = False) -> None:
    """Add a pair when the short form's letters are the long form's, in order (`whole`: from its first word)."""
    if not _looks_like_abbreviation(short):
        return
    words = " ".join(words.split())
    long_form = _long_form(words, short)
    if not long_form or whole and long_form != words:
        return
    if len(long_form) > len(short) and len(long_form.split()) <= min(len(short) + 5, 2 * len(short)):
        found.setdefault(short, long_form)


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
