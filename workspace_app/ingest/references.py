"""Recognise bibliography and table-of-contents text, which search ranks below the body: reference titles and
contents entries echo every topic but answer nothing."""

from __future__ import annotations

import re

_CITATION_MARKS = re.compile(
    r"\b(?:19|20)\d{2}\s*;\s*\d+|\b\d+\s*:\s*e?\d+\s*[–-]\s*e?\d+|\bet al\b|\[[JMDC]\]|\bdoi:|Available at:"
    r"|Accessed \w+ \d|^\s*\[?\d{1,4}[.\]]\s+[A-Z][\w'’-]+ [A-Z]{1,3}[,.]",
    re.MULTILINE,
)


def looks_like_references(text: str) -> bool:
    """True when the text is mostly reference-list entries (journal years, volumes, pages, 'et al')."""
    marks = len(_CITATION_MARKS.findall(text))
    return marks >= 2 and marks * 220 >= len(text)


_LEADER = re.compile(r"(?:\.\s?){4,}|…{2,}")
# "2.2. Epidemiology and Demographics . . . . . e45": a title, a dot leader, a page number or label.
CONTENTS_LEADER = re.compile(rf"(?:{_LEADER.pattern})\s*[A-Za-z]?\d{{0,4}}\s*$")


def looks_like_contents(text: str) -> bool:
    """True when the text is mostly table-of-contents entries (a dot leader every ~150 characters or less)."""
    leaders = len(_LEADER.findall(text))
    return leaders >= 2 and leaders * 150 >= len(text)


def chunk_kind(text: str) -> str:
    """"references", "contents" or "body"."""
    if looks_like_references(text):
        return "references"
    return "contents" if looks_like_contents(text) else "body"
