"""Showing user-supplied text (workspace and document names) safely inside Streamlit markdown."""

from __future__ import annotations

import html
import string
from datetime import datetime

# html.escape handles these; every other ASCII punctuation mark gets a markdown backslash escape, which also
# disarms Streamlit's own syntax (:color[...], :material/icon:, $math$).
_HTML_SPECIAL = set("&<>\"'")
_MARKDOWN_SPECIAL = set(string.punctuation) - _HTML_SPECIAL


def escape_markdown(text: str) -> str:
    """Text that markdown renders literally: no formatting, links, HTML or Streamlit directives."""
    escaped = "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else ch for ch in text)
    return html.escape(escaped, quote=True).replace("\n", " ")


def escape_label(text: str) -> str:
    """Text for a widget label that may begin a line of Markdown (markdown without HTML): every ASCII punctuation
    mark backslash-escaped."""
    return "".join("\\" + ch if ch in string.punctuation else ch for ch in text.replace("\n", " "))


# What forms Markdown (or a Streamlit directive) in the middle of a line; "-", ".", "(" and the like form nothing there.
_INLINE_SPECIAL = set("\\`*_[]<>&:$~|")


def escape_mid_line(text: str) -> str:
    """Text for a widget label that does not begin a line of Markdown: only what would form Markdown mid-line is
    escaped, so a collapsed label, which is also the widget's accessible name, reads "Use arnett-2014.pdf in chat"."""
    return "".join("\\" + ch if ch in _INLINE_SPECIAL else ch for ch in text.replace("\n", " "))


def format_date(iso: str) -> str:
    """An ISO timestamp as a short date ("22 Nov 2025"); the input unchanged when it is not ISO."""
    try:
        return datetime.fromisoformat(iso).strftime("%-d %b %Y")
    except ValueError:
        return iso


def plural(count: int, noun: str) -> str:
    """ "1 document", "3 documents", "235,609 events": counts read with a thousands separator wherever they are
    shown, so one message never says "235609" beside "235,609"."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
