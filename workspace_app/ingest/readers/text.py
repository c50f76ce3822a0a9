"""Plain-text and Markdown sources: paragraphs split at blank lines, Markdown `#` lines as headings."""

from __future__ import annotations

import re
from pathlib import Path

from workspace_app.errors import EmptyFileError, UnsupportedFileError
from workspace_app.ingest.layout import Paragraph, ParsedDocument
from workspace_app.ingest.sections import assign_sections

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def parse_text(path: Path, display_name: str, markdown: bool) -> ParsedDocument:
    """Read a UTF-8 text file into paragraphs (no page boxes: everything is on page 1)."""
    raw = path.read_bytes()
    if not raw.strip():
        raise EmptyFileError(f"{display_name} is empty. Upload a file with text in it.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedFileError(
            f"{display_name} is not UTF-8 text. Save it as UTF-8 (or as PDF) and upload it again."
        ) from exc
    if "\x00" in text:
        raise UnsupportedFileError(f"{display_name} is a binary file, not text. Upload a PDF, .txt or .md file.")
    paragraphs = [_paragraph(block, markdown) for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n"))]
    kept = [p for p in paragraphs if p.text]
    assign_sections(kept)
    title = next((p.text for p in kept if p.is_heading and p.heading_level == 1), "")
    return ParsedDocument(kept, 1, [], title)


def _paragraph(block: str, markdown: bool) -> Paragraph:
    block = block.strip()
    heading = _MD_HEADING.match(block) if markdown and "\n" not in block else None
    if heading:
        return Paragraph(text=heading.group(2), is_heading=True, heading_level=len(heading.group(1)))
    return Paragraph(text=re.sub(r"[ \t]*\n[ \t]*", " ", block))
