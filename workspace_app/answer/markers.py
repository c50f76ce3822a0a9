"""Citation markers in generated answers: `[n]` after a claim, read, normalised, stripped and placed.

Models write citations in several shapes ("[1, 2]", "[Source 3]", "[Doc 1; 2]"); they are normalised to one
`[n]` per source before the answer's sentences are checked against the blocks they cite.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"\s*\[(\d{1,3})\]")
_LIST_MARKER = re.compile(r"\[\s*(?:source|doc|block)?\s*(\d{1,3}(?:\s*[,;，、]\s*(?:source|doc|block)?\s*\d{1,3})*)\s*\]", re.IGNORECASE)


def normalize_markers(text: str) -> str:
    """Write every citation as `[n]`: "[1, 2]", "[Source 3]" and "[Doc 1; 2]" become "[1][2]", "[3]", "[1][2]"."""

    def expand(match: re.Match[str]) -> str:
        return "".join(f"[{n}]" for n in re.findall(r"\d{1,3}", match.group(1)))

    return _LIST_MARKER.sub(expand, text)


def markers_of(sentence: str) -> list[int]:
    """The citation numbers `[n]` in a sentence, in order, each once."""
    return list(dict.fromkeys(int(n) for n in _MARKER.findall(sentence)))


def strip_markers(sentence: str) -> str:
    """The sentence without its `[n]` markers."""
    return _MARKER.sub("", sentence).strip()


def with_markers(text: str, markers: list[str], language: str) -> str:
    """The sentence with its markers before its final full stop: "... 50 mm Hg [1]."."""
    if not markers:
        return text
    joined = "".join(markers)
    space = "" if language == "zh" else " "
    if text and text[-1] in ".。!！?？" and not text.endswith(("..", "e.g.", "i.e.")):
        return f"{text[:-1]}{space}{joined}{text[-1]}"
    return f"{text}{space}{joined}"
