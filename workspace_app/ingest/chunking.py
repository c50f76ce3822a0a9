"""Cut paragraphs into chunks that fit the embedder: within a section, paragraph-aligned, small overlap.

Sizes are counted in the embedder's own word pieces. A paragraph longer than a chunk is cut at sentence
ends; a sentence longer than a chunk at word (or, for CJK, character) boundaries. Each chunk keeps the
boxes of the lines it covers so the UI can draw exactly that chunk.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from workspace_app.ingest.layout import LineSpan, Paragraph, TextLine, needs_space
from workspace_app.models.documents import Rect

TokenCounter = Callable[[list[str]], list[int]]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[(\"“A-Z0-9])|(?<=[。！？；])")
_MIN_TAIL_SHARE = 0.25


@dataclass
class Unit:
    """A paragraph or a piece of one, the smallest thing a chunk is built from."""

    text: str
    spans: list[LineSpan]
    tokens: int = 0


@dataclass
class ChunkDraft:
    """A chunk before it is stored: text, section, pages and boxes."""

    text: str
    section: str
    page_start: int
    page_end: int
    token_count: int
    rects: list[Rect] = field(default_factory=list)
    recommendation: tuple[str, str] | None = None


def chunk_paragraphs(
    paragraphs: list[Paragraph], count_tokens: TokenCounter, size: int, overlap: int,
    report: Callable[[int, int], None] | None = None,
) -> list[ChunkDraft]:
    """Pack the body paragraphs of each section into chunks of at most `size` word pieces; `report(done, total)`
    after each section."""
    chunks: list[ChunkDraft] = []
    for done, total, drafts in section_chunks(paragraphs, count_tokens, size, overlap):
        chunks.extend(drafts)
        if report:
            report(done, total)
    return chunks


def section_chunks(
    paragraphs: list[Paragraph], count_tokens: TokenCounter, size: int, overlap: int
) -> Iterator[tuple[int, int, list[ChunkDraft]]]:
    """(sections done, sections, the chunks of the section just done), section by section (`chunk_paragraphs`)."""
    sections = list(_sections(paragraphs))
    for done, (section, body) in enumerate(sections, start=1):
        units = _split_to_fit([_unit(p) for p in body], count_tokens, size)
        yield done, len(sections), list(_pack(units, section, size, overlap))


def _sections(paragraphs: list[Paragraph]) -> Iterator[tuple[str, list[Paragraph]]]:
    section, body = "", list[Paragraph]()
    for paragraph in paragraphs:
        if paragraph.is_heading or paragraph.section != section:
            if body:
                yield section, body
            section, body = paragraph.section, []
        if not paragraph.is_heading and paragraph.text.strip():
            body.append(paragraph)
    if body:
        yield section, body


def _unit(paragraph: Paragraph) -> Unit:
    return Unit(paragraph.text, list(paragraph.spans))


def _split_to_fit(units: list[Unit], count_tokens: TokenCounter, size: int) -> list[Unit]:
    """Count every unit; cut those over `size` into sentences, then into word windows."""
    for unit, tokens in zip(units, count_tokens([u.text for u in units]), strict=True):
        unit.tokens = tokens
    fitted: list[Unit] = []
    for unit in units:
        if unit.tokens <= size:
            fitted.append(unit)
            continue
        pieces = _cut(unit, _sentence_bounds(unit.text))
        for piece, tokens in zip(pieces, count_tokens([p.text for p in pieces]), strict=True):
            piece.tokens = tokens
        for piece in pieces:
            fitted.extend([piece] if piece.tokens <= size else _window(piece, count_tokens, size))
    return fitted


def _sentence_bounds(text: str) -> list[int]:
    return [0] + [m.end() for m in _SENTENCE_END.finditer(text) if 0 < m.end() < len(text)] + [len(text)]


def _cut(unit: Unit, bounds: list[int]) -> list[Unit]:
    pieces = []
    for start, end in itertools.pairwise(bounds):
        text = unit.text[start:end]
        lead = len(text) - len(text.lstrip())
        text = text.strip()
        if not text:
            continue
        begin = start + lead
        spans = [s for s in unit.spans if s.start < begin + len(text) and s.end > begin]
        pieces.append(Unit(text, spans))
    return pieces


def _window(unit: Unit, count_tokens: TokenCounter, size: int) -> list[Unit]:
    """Cut an over-long sentence at word boundaries (characters for CJK) into pieces that fit."""
    words = [m.start() for m in re.finditer(r"\S+", unit.text)]
    if len(words) < 4:
        words = list(range(len(unit.text)))
    share = max(1, int(len(words) * size / max(unit.tokens, 1) * 0.9))
    bounds = words[::share] + [len(unit.text)]
    pieces = _cut(unit, bounds)
    for piece, tokens in zip(pieces, count_tokens([p.text for p in pieces]), strict=True):
        piece.tokens = tokens
    result: list[Unit] = []
    for piece in pieces:
        result.extend([piece] if piece.tokens <= size or len(piece.text) < 8 else _window(piece, count_tokens, size))
    return result


def _pack(units: list[Unit], section: str, size: int, overlap: int) -> list[ChunkDraft]:
    groups: list[list[Unit]] = []
    current: list[Unit] = []
    used = 0
    for unit in units:
        if current and used + unit.tokens > size:
            groups.append(current)
            current = _overlap_tail(current, overlap, size - unit.tokens)
            used = sum(u.tokens for u in current)
        current.append(unit)
        used += unit.tokens
    if current:
        groups.append(current)
    groups = _merge_small_tail(groups, size)
    return [_draft(group, section) for group in groups]


def _overlap_tail(units: list[Unit], overlap: int, room: int) -> list[Unit]:
    """The last units of a chunk to repeat in the next, if they fit the overlap budget."""
    tail: list[Unit] = []
    budget = min(overlap, room)
    for unit in reversed(units):
        if unit.tokens > budget:
            break
        tail.insert(0, unit)
        budget -= unit.tokens
    return tail if len(tail) < len(units) else []


def _merge_small_tail(groups: list[list[Unit]], size: int) -> list[list[Unit]]:
    if len(groups) < 2:
        return groups
    last, previous = groups[-1], groups[-2]
    fresh = [u for u in last if all(u is not p for p in previous)]
    if sum(u.tokens for u in last) < _MIN_TAIL_SHARE * size and sum(u.tokens for u in previous + fresh) <= size:
        return groups[:-2] + [previous + fresh]
    return groups


def _draft(units: list[Unit], section: str) -> ChunkDraft:
    text = ""
    previous_apart = False
    for unit in units:
        # Chinese paragraphs run on without a break (a sentence cut by a column or page goes on), except a table's
        # rows, which stay lines of their own.
        apart = any(span.line.apart for span in unit.spans)
        text += ("\n" if text and (needs_space(text, unit.text) or apart or previous_apart) else "") + unit.text
        previous_apart = apart
    lines: list[TextLine] = []
    for unit in units:
        for span in unit.spans:
            if (not lines or lines[-1] is not span.line) and all(span.line is not seen for seen in lines[-4:]):
                lines.append(span.line)
    rects = [Rect(line.page, line.x0, line.y0, line.x1, line.y1) for line in lines]
    pages = [r.page for r in rects] or [1]
    tokens = sum(u.tokens for u in units) + len(units) - 1
    tagged = next((line.recommendation for line in lines if line.recommendation), None)
    return ChunkDraft(text, section, min(pages), max(pages), tokens, rects, tagged)
