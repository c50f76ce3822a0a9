"""Class of Recommendation and Level of Evidence stated with guideline recommendations.

ACC/AHA tables put the class and level in cells beside the text ("IIa B-NR"); older guidelines write
"(Class I; Level of Evidence B)" or "COR I, LOE A"; Chinese guidelines "Ⅱa类推荐，B级证据" or "（Ⅰ，A）".
Ingestion reads the grading of a chunk and of a table cell; answers read the grading stated at a quoted
sentence (`grading_in`): the quote and the short cell after it, since a chunk may hold several
recommendations with different gradings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLASS = r"III:\s*(?:No\s+Benefit|Harm)|IIa|IIb|III|II|I"
_LEVEL = r"B-NR|B-R|C-LD|C-EO|A|B|C"
# Not inside letter-spaced type ("A M E R I C A N"), where single capitals stand apart.
_TABLE_CELL = re.compile(rf"(?<![\w:])(?<![A-Z] )({_CLASS})\s+({_LEVEL})(?![\w-])(?!\s[A-Z](?:\s|$))")
_PROSE = re.compile(
    rf"(?:Class|COR)[:\s]*({_CLASS})\b[^.()]{{0,40}}?(?:Level of Evidence|LOE)[:\s]*({_LEVEL})(?![\w-])"
)
_ZH_CLASS = r"Ⅲ|Ⅱa|Ⅱb|Ⅰ|IIa|IIb|III|I"
_ZH_PAIR = re.compile(rf"[（(]\s*({_ZH_CLASS})\s*[，,、]\s*([ABC])\s*[）)]")
_ZH_TABLE = re.compile(r"推荐(?:级别|类别)\s*(?:证据(?:级别|水平|等级))?\s*([ⅠⅡⅢ][ab]?)\s*(?:证据(?:级别|水平|等级))?\s*([ABC])(?![\w])")
_ZH_CELLS = re.compile(r"(?<![\w])([ⅠⅡⅢ][ab]?)\s+([ABC])(?![\w])")
_ZH_CLASS_ONLY = re.compile(rf"({_ZH_CLASS})\s*类")
_ZH_LEVEL_ONLY = re.compile(r"([ABC])\s*级")
_ROMAN = str.maketrans({"Ⅰ": "I", "Ⅱ": "II", "Ⅲ": "III"})


@dataclass(frozen=True)
class Recommendation:
    """The class and level found in a passage (either may be missing)."""

    recommendation_class: str | None
    evidence_level: str | None


def find_recommendation(text: str) -> Recommendation:
    """Return the first class/level pair stated in the text, or what can be found of one."""
    for pattern in (_TABLE_CELL, _PROSE, _ZH_PAIR, _ZH_TABLE, _ZH_CELLS):
        match = pattern.search(text)
        if match:
            return Recommendation(_normalise_class(match.group(1)), match.group(2))
    zh_class = _ZH_CLASS_ONLY.search(text)
    zh_level = _ZH_LEVEL_ONLY.search(text)
    if zh_class or zh_level:
        return Recommendation(
            _normalise_class(zh_class.group(1)) if zh_class else None,
            zh_level.group(1) if zh_level else None,
        )
    return Recommendation(None, None)


def _normalise_class(value: str) -> str:
    value = re.sub(r"\s+", " ", value.translate(_ROMAN))
    return value.replace("III: No Benefit", "III: No Benefit").strip()


_CELL_ONLY = re.compile(rf"\s*({_CLASS}|Ⅲ|Ⅱa|Ⅱb|Ⅰ)\s+({_LEVEL})\s*")


def table_cell_recommendation(text: str) -> Recommendation | None:
    """The class and level when a line holds nothing else (the COR/LOE cells of a recommendation table)."""
    match = _CELL_ONLY.fullmatch(text)
    return Recommendation(_normalise_class(match.group(1)), match.group(2)) if match else None


_CLASS_ONLY = re.compile(rf"\s*(?:{_CLASS}|Ⅲ|Ⅱa|Ⅱb|Ⅰ)\s*")


def is_class_cell(text: str) -> bool:
    """Whether a line holds only a class of recommendation ("IIa", "Ⅰ")."""
    return bool(_CLASS_ONLY.fullmatch(text))


# A line stating the grading of the recommendation above it ("NHLBI Grade: A (strong); ACC/AHA COR: I, LOE: A").
_GRADING_LINE = re.compile(r"(?:NHLBI Grade|ACC/AHA COR|COR|Class of Recommendation|\(?Class|Level of Evidence|LOE)\b")


def grading_window(text: str, start: int, quote: str) -> str:
    """The quote and the line after it when that line is a short cell or a grading statement."""
    end = start + len(quote) if start >= 0 else 0
    following = text[end : end + 80].lstrip().split("\n")[0]
    if len(following) <= 20 or _GRADING_LINE.match(following):
        return quote + "\n" + following
    return quote


def grading_in(text: str, start: int, quote: str) -> Recommendation:
    """The grading stated at a quote starting at `start` in `text`."""
    return find_recommendation(grading_window(text, start, quote))
