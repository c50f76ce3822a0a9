"""The source's own reference markers ("(S4.5-33)", "[12]", "［6‑7］", "(671,681,682)"), which a quote or a summary
shows without: the reader gets our [n] instead, and the marker stays in the source view."""

from __future__ import annotations

import re

# The source's own citation markers: "(S4.5-33)", "(S2.3-1, S2.3-4)", "[12]", "[6-7]", "［6‑7］", "[12,13]".
_SOURCE_MARKER = re.compile(
    r"\s?\((?:S\d+(?:\.\d+)*-\d+(?:\s*[,–-]\s*(?:S\d+(?:\.\d+)*-)?\d+)*)(?:\s*[,;]\s*S\d+(?:\.\d+)*-\d+"
    r"(?:\s*[,–-]\s*\d+)*)*\)"
    r"|\s?[\[［](?:\d{1,3}(?:\s*[,，、‑–-]\s*\d{1,3})*)[\]］]"
    # "(671,681,682)", "(64–66)", "(486)": numbered references (a lone number only from 10 up, not "(1)").
    r"|(?<=[\w.,;:)%])\s?\((?:\d{1,4}(?:\s*[,–-]\s*\d{1,4})+|[1-9]\d{1,3})\)(?!\s*(?:mg|g|%|mm|y|years))",
)


def without_source_markers(sentence: str) -> str:
    """The sentence without the source's own reference markers (ours, [n], are added afterwards)."""
    cleaned = _SOURCE_MARKER.sub("", sentence)
    return re.sub(r"\s+([.,;:。，；])", r"\1", cleaned).strip() or sentence

