"""Sentence spans of evidence text and of generated answers (English and Chinese).

Chunk text keeps some of the PDF's line structure: a newline separates table cells, headings and paragraphs,
but also falls inside sentences that wrap around a table row or column. A newline ends a sentence when the
line before it ends with terminal punctuation, or in a recommendation row's class and level cells, or when
Chinese text touches it (Chinese paragraphs run on without one, so a newline there parts table rows), or when
the next line starts like a new sentence (upper case, bullet) and the line before leaves no bracket open
("(S4.4.6.2-1–"), nor a clause before an acronym ("… with an" "ACHD cardiologist."); otherwise the lines are
joined. Inside a line, English sentences end at . ! ? followed by a space and an upper-case letter, digit or
bracket (but not after common abbreviations); Chinese ones at 。！？；.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from workspace_app.text.grades import ROW_CELLS

_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "vs", "etc", "al", "fig", "figs", "no", "nos", "dr", "mr", "mrs", "ms", "approx", "ref", "refs", "ca", "cf", "eq", "vol", "pp", "st", "jr", "sr", "inc", "dept", "min", "max", "resp", "incl", "mo", "yr", "yrs", "wk", "wks", "h", "hr", "hrs"]
)
_EN_END = re.compile(r"[.!?](?:[\"')\]]*)\s+(?=[\"'(\[]?[A-Z0-9])")
_ZH_END = re.compile(r"[。！？；]+[”’）)]*")
_TERMINAL = set(".!?。！？；;:：")
_BULLETS = set("•·▪●○■□–—-*①②③④⑤⑥⑦⑧⑨⑩")
# A recommendation row ends in its class and level cells ("…控制心室率 Ⅰ B", "…(Table 4).4-14 2a C-LD"): the next line
# is another row. A row may also run straight on into the next one's first cell ("…的基础 Ⅰ C房颤伴…").
_GRADE_CELLS = rf"(?:{ROW_CELLS})"
_GRADE_CELLS_END = re.compile(rf"{_GRADE_CELLS}\s*$")
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# "2.\n0", not "in 2012.\n2. The …" (a numbered item) nor "… 2017.\n3 patients" (a year ends the sentence).
_WRAPPED_DECIMAL = re.compile(r"(?<![\d.])\d{1,2}\.(?=\n\d(?!\d*\.\s))")
# A line that leaves a bracket or a clause open: the sentence goes on in the next line, whatever its first letter.
_OPEN_BRACKET = re.compile(r"\([^()]{0,40}$")
_OPEN_CLAUSE = re.compile(r"\b(?:a|an|the|of|with|and|or|to|in|for|by|on|at|from|than|whose|is|are|be)$")
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]+\b")  # an upper-case start that need not start a sentence ("ACHD", "LDL-C")
# A table's or figure's caption ("Table 3.", "表1", "Figure 2"): a label, not a sentence to quote or summarise.
_CAPTION = re.compile(r"^\s*(?:表|图|Table|Figure|Fig\.)\s*\d", re.IGNORECASE)
_GRADE_CELLS_INLINE = re.compile(rf"(?<=[\u4e00-\u9fff）)\s]){_GRADE_CELLS}(?=[\u4e00-\u9fff（(［【])")


def is_caption(sentence: str) -> bool:
    """True when a sentence starts with a table's or figure's label ("Table 3. …", "表1 …")."""
    return _CAPTION.match(sentence) is not None


def leaves_clause_open(line: str) -> bool:
    """True when a line ends on a word that cannot end a clause ("… in patients with", "Dietary Patterns and"): its
    text goes on in the next line, or was cut there."""
    return _OPEN_CLAUSE.search(line.rstrip()) is not None


@dataclass(frozen=True)
class Span:
    """A sentence and where it sits in its text (character offsets, end exclusive)."""

    start: int
    end: int
    text: str


def split_sentences(text: str) -> list[Span]:
    """Sentences of a text in order; blank pieces are dropped, offsets point into `text`.

    A sentence joined across a newline has the newline replaced by a space in its `text`.
    """
    spans: list[Span] = []
    for offset, paragraph in _paragraphs(text):
        flat = paragraph.replace("\n", " ")
        for start, end in _line_sentences(flat, _wrapped_decimals(paragraph)):
            piece = flat[start:end]
            stripped = piece.strip()
            if stripped:
                lead = len(piece) - len(piece.lstrip())
                spans.append(Span(offset + start + lead, offset + start + lead + len(stripped), stripped))
    return spans


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """Runs of lines that belong together, with their offsets."""
    runs: list[tuple[int, str]] = []
    offset = 0
    for line in text.split("\n"):
        if runs and not _breaks(runs[-1][1], line):
            start, previous = runs[-1]
            runs[-1] = (start, previous + "\n" + line)
        else:
            runs.append((offset, line))
        offset += len(line) + 1
    return runs


def _breaks(before: str, after: str) -> bool:
    before, after = before.rstrip(), after.lstrip()
    if _WRAPPED_DECIMAL.search(before + "\n" + after[:8]) and before.endswith("."):
        return False  # a decimal number wrapped onto the next line
    if not before or not after or before[-1] in _TERMINAL or _GRADE_CELLS_END.search(before):
        return True
    if _CJK.match(before[-1]) or _CJK.match(after[0]):
        return True  # Chinese text wraps without a newline: one beside it parts table rows
    if _OPEN_BRACKET.search(before) or (_OPEN_CLAUSE.search(before) and _ACRONYM.match(after)):
        return False  # "(S4.4.6.2-1–" / "S4.4.6.2-3)."; "managed in collaboration with an" / "ACHD cardiologist."
    first = after[0]
    return first.isupper() or first in _BULLETS


def _wrapped_decimals(paragraph: str) -> set[int]:
    """Where a number's decimal point ends a line and its digits go on in the next ("1.5~2.\n0 之间"): no
    sentence ends there."""
    return {match.end() - 1 for match in _WRAPPED_DECIMAL.finditer(paragraph)}


def _line_sentences(line: str, decimals: set[int] = frozenset()) -> list[tuple[int, int]]:  # type: ignore[assignment]
    cuts = [0]
    for match in _ZH_END.finditer(line):
        cuts.append(match.end())
    for match in _EN_END.finditer(line):
        if match.start() not in decimals and not _after_abbreviation(line, match.start()):
            cuts.append(match.start() + 1 + len(match.group(0)[1:].rstrip()))
    cuts += [match.end() for match in _GRADE_CELLS_INLINE.finditer(line)]
    cuts = sorted(set(cuts + [len(line)]))
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def ends_in_grade_cells(sentence: str) -> bool:
    """Whether a sentence is a Chinese recommendation row ending in its class and level cells ("…控制心室率 Ⅰ B")."""
    return bool(_GRADE_CELLS_END.search(sentence.rstrip()))


def _after_abbreviation(line: str, dot: int) -> bool:
    word = re.search(r"([A-Za-z.]+)$", line[:dot])
    if word is None:
        return False
    token = word.group(1).lower().strip(".")
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())
