"""Heading detection and section paths.

A line is a heading when it is numbered like "3.2. Diagnosis" / "一、" / "（二）" and set apart (bold,
larger, capitals, or several number levels), or when it is short, bold or larger than the body text, and
does not read like a sentence. Table and figure captions are never headings, nor is the grading set in bold
under a statement ("推荐强度：强  证据质量：B"): it belongs to the statement's text.
"""

from __future__ import annotations

import re

from workspace_app.ingest.layout import Paragraph, TextLine
from workspace_app.ingest.references import CONTENTS_LEADER
from workspace_app.text.cjk import IDEOGRAPHS, has_cjk
from workspace_app.text.grades import states_grading

_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+(?=\S)(?!(?:mg|g|mm|cm|kg|mL|%|y|years?|h|min)\b)")
_ZH_LEVEL1 = re.compile(r"^[一二三四五六七八九十]{1,3}[、.．]")
_ZH_LEVEL2 = re.compile(r"^[（(][一二三四五六七八九十]{1,3}[）)]")
_CAPTION = re.compile(r"^(table|figure|fig\.|box|appendix|supplemental|表|图)\s*[\dA-Za-z一二三四五六七八九十]", re.IGNORECASE)
_SENTENCE_LIKE = re.compile(r"[.;,。；，]\s*$")
_TITLE_START = re.compile(f"[A-Z{IDEOGRAPHS}]")  # a capital or a Chinese character
_MAX_HEADING_CHARS = 110


def heading_level(line: TextLine, body_size: float, grade_lines: bool = True) -> int:
    """Return the heading level of a line (1 = top), or 0 when it is not a heading (nor, with `grade_lines`, a
    recommendation's grading set in bold)."""
    text = line.text.strip()
    if not text or len(text) > _MAX_HEADING_CHARS or _CAPTION.match(text) or _SENTENCE_LIKE.search(text):
        return 0
    if grade_lines and states_grading(text):
        return 0
    if CONTENTS_LEADER.search(text):
        return 0  # a table-of-contents entry names a section, it does not open one
    emphasised = line.bold or line.size >= body_size + 0.5
    if _ZH_LEVEL1.match(text) and emphasised:
        return 1
    if _ZH_LEVEL2.match(text) and (emphasised or len(text) <= 30):
        return 2
    numbered = _NUMBERED.match(text)
    if numbered:
        depth = numbered.group(1).count(".") + 1
        title = text[numbered.end():]
        if not _TITLE_START.match(title) or len(title.split()) > 14:
            return 0
        if emphasised or depth >= 2 or _in_capitals(title):
            return min(depth, 5)
        return 0
    if len(text) <= 3 or len(text.split()) > 12 or not _TITLE_START.match(text):
        return 0
    if line.size >= body_size * 1.4:
        return 1
    if line.bold and line.size >= body_size - 1.5:
        return 6
    return 0


def assign_sections(paragraphs: list[Paragraph]) -> None:
    """Give every paragraph the path of headings above it, e.g. "2. Evaluation > 2.3.1. History"."""
    stack: list[tuple[int, str]] = []
    numbered_level = 0
    for paragraph in paragraphs:
        if paragraph.is_heading:
            level = paragraph.heading_level
            if level == 6:
                # Unnumbered emphasised headings sit one level below the current numbered one.
                level = numbered_level + 1
                paragraph.heading_level = level
            else:
                numbered_level = level
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _title(paragraph.text)))
        # A table's rows are read in the table: its caption and header are their innermost section title.
        path = [title for _, title in stack] + ([paragraph.table] if paragraph.table else [])
        paragraph.section = " > ".join(path)


def _in_capitals(title: str) -> bool:
    """Whether a title is set in capitals ("DIAGNOSIS"). Chinese has no capitals: a Chinese line whose only Latin
    letters are an acronym ("血管入路：MATRIX 试验是…") is running text, not a heading in capitals."""
    return title.isupper() and not has_cjk(title)


def _title(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:_MAX_HEADING_CHARS]
