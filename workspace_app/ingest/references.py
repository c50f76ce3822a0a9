"""Recognise bibliography text, which search ranks below the body (its titles echo every topic)."""

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
