"""What may be quoted: whole sentences, list items and table rows, never reference entries or figure titles.

An extractive answer quotes evidence verbatim, so a quote must stand on its own: a sentence cut by a chunk
boundary ("Intake of trans fat has been shown to be harmful and"), a bibliography entry, a figure or table
caption or a contents line is not an answer. Quotes are read from a passage by `quote_sentences`, which also parts
two statements the source runs together ("… before surgery.6 Coronary …", "… kPa陈述8：…"), and shown by
`clean_quote`, without the source's reference numbers and footnote marks (the passage keeps them: a citation
locates its quote on the page by its raw text and offsets).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from workspace_app.text.cjk import has_cjk
from workspace_app.text.quotable import is_caption, is_fragment, is_reference_entry, is_table_title, quotable
from workspace_app.text.sentences import Span, split_sentences
from workspace_app.text.source_markers import without_source_markers

# The checks of what may be quoted live in `text/quotable.py` (the source guides choose sentences with them too).
__all__ = [
    "clean_quote", "is_caption", "is_fragment", "is_reference_entry", "is_table_title", "quotable", "quote_sentences",
    "table_rows",
]

# Where one cell of a Chinese table row ends and the next begins: the cells of a row are joined by a space
# (ingest/captioned_tables.py), and Chinese prose never puts one after its full stop.
_CELL_BREAK = re.compile(r"[。；](?= \S)")
_ROW_CHARS = 700


def table_rows(text: str, spans: Sequence[Span], table: bool = False) -> list[tuple[int, Span]]:
    """The table rows holding several sentences, as spans of `text` (a row is one line of it), each with the index
    of its first sentence in `spans` (the sentences of `text`): a Chinese table's, told by the cell breaks in its
    lines, and every line of a ruled table's passage (`table`). A row of one sentence is a sentence."""
    rows = []
    offset = 0
    for line in text.split("\n"):
        start, end = offset, offset + len(line)
        offset = end + 1
        inside = [i for i, span in enumerate(spans) if start <= span.start and span.end <= end]
        row = line.strip()
        cells = table or has_cjk(row) and bool(_CELL_BREAK.search(row))
        if len(inside) >= 2 and cells and len(row) <= _ROW_CHARS:
            lead = len(line) - len(line.lstrip())
            rows.append((inside[0], Span(start + lead, start + lead + len(row), row)))
    return rows


# A reference number set as a superscript reads as digits glued to the word or punctuation before it ("the Institute
# of Medicine,1,2 and", "genetic disease33 should", "before surgery.6 Coronary"), a footnote mark as a symbol glued
# the same way ("30-d serious events# No"); a lone lower-case letter before the full stop is a misread digit ("l.27").
_MARKS = re.compile(
    r"(?:(?<=[a-z]{3})|(?<=[A-Za-z][A-Za-z)][.,;:]))\d{1,3}(?:[,–-]\d{1,3})*(?=[\s.,;:]|$)"
    r"|(?<=[\w)%])[*#†‡§¶‖]+(?=[\s.,;:)]|$)"
)
# Where a source runs two statements together: a full stop, a glued reference number and the next sentence
# ("surgery.6 Coronary": not a class cell, "results.35-38 I B"), or a numbered statement label set right after
# Latin text, as a footnote or a figure's text runs into it ("1 mmHg=0.133 kPa陈述8：推荐…").
_SEAM = re.compile(
    r"(?<=[A-Za-z][A-Za-z)][.?!])\d{1,3}(?:[,–-]\d{1,3})*\s+(?=[A-Z(])(?![IV]+[ab]?\s)"
    r"|(?<=[A-Za-z0-9)）])(?=[\u4e00-\u9fff]{1,4}\d{1,3}[：:])"
)


def quote_sentences(text: str) -> list[Span]:
    """The sentences of a passage as quotes are read from it: `split_sentences`, parted again at each seam where the
    source runs two statements together (the reference number at the seam belongs to neither). Offsets point into
    `text`."""
    spans = []
    for span in split_sentences(text):
        begin = 0
        for seam in [*_SEAM.finditer(span.text), None]:
            end = seam.start() if seam else len(span.text)
            piece = span.text[begin:end]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                spans.append(Span(span.start + begin + lead, span.start + begin + len(piece.rstrip()), piece.strip()))
            begin = seam.end() if seam else end
    return spans


def clean_quote(quote: str) -> str:
    """A quote as the reader sees it: without the source's reference markers ("[12,13]", "(S4.5-33)", "(77,99)",
    "surgery.6") and footnote marks ("events#", "ECG‡")."""
    cleaned = _MARKS.sub("", without_source_markers(quote))
    return re.sub(r"\s+([.,;:。，；])", r"\1", cleaned).strip() or quote
