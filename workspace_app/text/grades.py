"""Class of Recommendation and Level of Evidence stated with guideline recommendations: one grammar of the grades
as guidelines print them, in table cells and in lines.

The vocabulary:

    class     ACC/AHA  I, IIa, IIb, III: No Benefit, III: Harm (and the bare III, II of older tables)
              ACC/AHA since 2024 in table cells  1, 2a, 2b, 3: No Benefit, 3: Harm     -> I, IIa, IIb, III: ...
              Chinese guidelines  Ⅰ, Ⅱa, Ⅱb, Ⅲ (Roman numeral characters)                  -> I, IIa, IIb, III
              GRADE strength  强 / 条件 / 有条件 / 弱, GPS (a good practice statement)   -> Strong, Conditional, GPS
    level     A, B, C; B-R, B-NR, C-LD, C-EO (ACC/AHA); GRADE quality A-D or 高/中/低/极低 -> A, B, C, D

and where it is printed:

    table cells        "IIa B-NR", "2a C-LD", "Ⅱa B", "强 B", "GPS -": a line of its own, or the end of a row
                       ("…以减轻症状和体征 强 A", "…in patients with HCM (Table 4).4-14 2a C-LD")
    prose              "(Class I; Level of Evidence B)", "COR I, LOE A", "ACC/AHA COR: I, LOE: A"; a statement's
                       "(Level of Evidence: C)" under a list's "CLASS IIa" line (the class of the statements below it)
    Chinese lines      "推荐强度：强  证据质量：B", "（推荐级别Ⅰ，证据水平A）", "推荐级别Ⅰ证据级别C", "推荐强度：GPS",
                       "（Ⅰ，A）", "Ⅱa类推荐，B级证据"

Ingestion reads the grading of a chunk and of a table cell; answers read the grading stated at a quoted
sentence (`grading_in`): in the quote, or after it up to the end of its recommendation (the row's cells, the
grading line under a statement), since a chunk may hold several recommendations with different gradings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workspace_app.text.cjk import IDEOGRAPHS, WIDE_CHAR

_LATIN_CLASS = r"III:\s*(?:No\s+Benefit|Harm)|IIa|IIb|III|II|I"
_ROMAN_CLASS = r"Ⅲ|Ⅱ\s?a|Ⅱ\s?b|Ⅱ|Ⅰ"
_ARABIC_CLASS = r"3:\s*(?:No\s+[Bb]enefit|Harm)|2a|2b|1"
_STRENGTH = r"有条件|条件|强|弱|GPS"
_LEVEL = r"B-NR|B-R|C-LD|C-EO|A|B|C"
_ACC_LEVEL = r"B-NR|B-R|C-LD|C-EO|A"  # the levels of the tables whose classes are numbered 1-3
_QUALITY = r"极低|高|中|低|[A-D]"  # GRADE quality of evidence
_NO_LEVEL = r"[-–—]"  # a good practice statement's empty level cell
_END = r"(?![A-Za-z0-9-])"  # Chinese text may follow a level directly ("证据质量：B证据概述")

# Cells: a class and a level side by side, never inside letter-spaced type ("A M E R I C A N").
_TABLE_CELL = re.compile(rf"(?<![\w:])(?<![A-Z] )({_LATIN_CLASS})\s+({_LEVEL}){_END}(?!\s[A-Z](?:\s|$))")
_ROMAN_CELL = re.compile(rf"(?<![\w])({_ROMAN_CLASS})\s+({_LEVEL}){_END}")
# Numbered classes and GRADE strengths are common words and numbers: read as cells only where a cell stands, on a
# line of its own or at the end of a row (after the statement's last word, its full stop or its reference marks).
_ROW_END = r"(?:^|(?<=\s))"
_ARABIC_CELL = re.compile(rf"{_ROW_END}({_ARABIC_CLASS})\s+({_ACC_LEVEL})\s*$", re.MULTILINE)
_STRENGTH_CELL = re.compile(rf"{_ROW_END}({_STRENGTH})\s+({_QUALITY}|{_NO_LEVEL})\s*$", re.MULTILINE)
# Not a list of classes or levels ("Class I and IIa; Level of Evidence A and B only"): that defines the grades.
_LIST = r"\s*(?:and|or|,|/)\s*"
_PROSE = re.compile(
    rf"(?:Class|COR)[:\s]*({_LATIN_CLASS})\b(?!{_LIST}(?:Class\s+)?I)[^.()]{{0,40}}?(?:Level of Evidence|LOE)[:\s]*"
    rf"({_LEVEL}){_END}(?!{_LIST}[ABC]\b)"
)
# "推荐强度：强  证据质量：B", "推荐级别Ⅰ，证据水平A", "推荐强度：GPS"; and a table header read before its cells
# ("推荐级别 证据级别 Ⅰ C").
_ZH_CLASS_LABEL = r"推荐(?:强度|级别|类别|等级)"
_ZH_LEVEL_LABEL = r"证据(?:质量|水平|级别|等级)"
_ZH_LABELLED = re.compile(
    rf"{_ZH_CLASS_LABEL}\s*[：:]?\s*({_ROMAN_CLASS}|{_LATIN_CLASS}|{_STRENGTH})(?![a-zA-Z])"
    rf"(?:\s*[，,；;、]?\s*{_ZH_LEVEL_LABEL}\s*[：:]?\s*({_LEVEL}|{_QUALITY}){_END})?"
)
_ZH_HEADERS = re.compile(
    rf"{_ZH_CLASS_LABEL}\s*{_ZH_LEVEL_LABEL}\s*({_ROMAN_CLASS}|{_STRENGTH})\s*({_LEVEL}|{_QUALITY}){_END}"
)
_ZH_PAIR = re.compile(rf"[（(]\s*({_ROMAN_CLASS}|{_LATIN_CLASS})\s*[，,、]\s*({_LEVEL})\s*[）)]")
_PAIRS = (_TABLE_CELL, _PROSE, _ZH_PAIR, _ZH_LABELLED, _ZH_HEADERS, _ROMAN_CELL, _ARABIC_CELL, _STRENGTH_CELL)
_ZH_CLASS_ONLY = re.compile(rf"({_ROMAN_CLASS}|IIa|IIb|III|I)\s*类")
_ZH_LEVEL_ONLY = re.compile(r"([ABC])\s*级")
_LEVEL_ONLY = re.compile(rf"\(\s*(?:Level of Evidence|LOE)\s*:?\s*({_LEVEL}){_END}")
_CLASS_HEADING = re.compile(rf"^\s*(?:CLASS|Class)\s+({_LATIN_CLASS})\s*$", re.MULTILINE)

_CELL_CLASS = rf"{_LATIN_CLASS}|{_ROMAN_CLASS}"
_CELLS = re.compile(
    rf"\s*(?:({_CELL_CLASS})\s+({_LEVEL})|({_ARABIC_CLASS})\s+({_ACC_LEVEL})|({_STRENGTH})\s+({_QUALITY}|{_NO_LEVEL}))\s*"
)
_CLASS_CELL = re.compile(rf"\s*(?:{_CELL_CLASS}|{_STRENGTH})\s*")
_ARABIC_CLASS_CELL = re.compile(rf"\s*(?:{_ARABIC_CLASS})\s*")
# The cells ending a recommendation row ("…控制心室率 Ⅰ B", "…以减轻症状和体征 强 A", "…(Table 4).4-14 2a C-LD"): no
# sentence goes on past them. Latin cells stand after a space; Roman numeral characters may touch Chinese text.
ROW_CELLS = (
    rf"(?:(?<=\s)|(?<=^)|(?<=[{IDEOGRAPHS}）)]))(?:{_ROMAN_CLASS})\s*(?:{_LEVEL}){_END}"
    rf"|(?:(?<=\s)|(?<=^))(?:(?:{_LATIN_CLASS})\s+(?:{_LEVEL})|(?:{_ARABIC_CLASS})\s+(?:{_ACC_LEVEL})"
    rf"|(?:{_STRENGTH})\s+(?:{_QUALITY}|{_NO_LEVEL})){_END}"
)

_ROMAN = str.maketrans({"Ⅰ": "I", "Ⅱ": "II", "Ⅲ": "III"})
_ARABIC = {"1": "I", "2a": "IIa", "2b": "IIb", "3": "III"}
_STRENGTHS = {"强": "Strong", "条件": "Conditional", "有条件": "Conditional", "弱": "Conditional", "GPS": "GPS"}
_QUALITIES = {"高": "A", "中": "B", "低": "C", "极低": "D"}
_CLASS_NAMES = {"Strong": "Strong recommendation", "Conditional": "Conditional recommendation",
                "GPS": "Good practice statement"}


@dataclass(frozen=True)
class Recommendation:
    """The class and level found in a passage (either may be missing)."""

    recommendation_class: str | None
    evidence_level: str | None


def find_recommendation(text: str) -> Recommendation:
    """Return the first class/level pair stated in the text, or what can be found of one."""
    found = _first_pair(text)
    if found is not None:
        return found
    level = _LEVEL_ONLY.search(text)
    if level:
        return Recommendation(class_heading_before(text, level.start()), level.group(1))
    zh_class = _ZH_CLASS_ONLY.search(text)
    zh_level = _ZH_LEVEL_ONLY.search(text)
    if zh_class or zh_level:
        return Recommendation(
            normalise_class(zh_class.group(1)) if zh_class else None,
            zh_level.group(1) if zh_level else None,
        )
    return Recommendation(None, None)


def class_heading_before(text: str, position: int) -> str | None:
    """The class of the list a statement at `position` is in: the last "CLASS IIa" line before it (older ACC/AHA
    guidelines list their statements under such a line, each ending with its "(Level of Evidence: B)")."""
    found = [match.group(1) for match in _CLASS_HEADING.finditer(text, 0, position)]
    return normalise_class(found[-1]) if found else None


def _first_pair(text: str) -> Recommendation | None:
    """The grading stated first in the text by any of the printed forms (a class alone where a line states only
    a class: "推荐强度：GPS")."""
    matches = [match for pattern in _PAIRS if (match := pattern.search(text))]
    if not matches:
        return None
    first = min(matches, key=lambda match: (match.start(), match.group(2) is None))
    return Recommendation(normalise_class(first.group(1)), normalise_level(first.group(2)))


def normalise_class(value: str) -> str:
    """One spelling per class: 'Ⅱa' and '2a' -> 'IIa', '3: No benefit' -> 'III: No Benefit', '强' -> 'Strong'."""
    value = re.sub(r"\s+", " ", value).strip()
    if value in _STRENGTHS:
        return _STRENGTHS[value]
    head, colon, tail = value.partition(":")
    head = _ARABIC.get(head.strip(), head.translate(_ROMAN).replace(" ", ""))
    return f"{head}: {tail.strip().title()}" if colon else head


def normalise_level(value: str | None) -> str | None:
    """'中' -> 'B' (GRADE's quality words name its letters); a dash (no level) -> None."""
    if value is None or re.fullmatch(_NO_LEVEL, value):
        return None
    return _QUALITIES.get(value, value)


def describe_class(value: str) -> str:
    """How a class reads in a sentence: 'Class IIa', 'Strong recommendation', 'Good practice statement'."""
    return _CLASS_NAMES.get(value, f"Class {value}")


def table_cell_recommendation(text: str) -> Recommendation | None:
    """The class and level when a line holds nothing else (the COR/LOE cells of a recommendation table)."""
    match = _CELLS.fullmatch(text)
    if match is None:
        return None
    klass, level = next((match.group(i), match.group(i + 1)) for i in (1, 3, 5) if match.group(i))
    return Recommendation(normalise_class(klass), normalise_level(level))


def is_class_cell(text: str, *, numbered: bool = False) -> bool:
    """Whether a line holds only a class of recommendation ("IIa", "Ⅰ", "强"; "2a", "1" when `numbered`)."""
    return bool(_CLASS_CELL.fullmatch(text) or (numbered and _ARABIC_CLASS_CELL.fullmatch(text)))


# A line stating the grading of the recommendation above it ("NHLBI Grade: A (strong); ACC/AHA COR: I, LOE: A",
# "推荐强度：强  证据质量：B").
_GRADING_LINE = re.compile(
    rf"\(?(?:NHLBI Grade|ACC/AHA COR|COR|Class of Recommendation|Class|Level of Evidence|LOE)\b"
    rf"|[（(]?{_ZH_CLASS_LABEL}|{_ZH_LEVEL_LABEL}"
)
# Where a recommendation's text ends if no grading has: the next numbered statement, a table's header, the text
# that supports a recommendation, a Chinese consensus's next statement or the text explaining one, a table note.
_NEXT_STATEMENT = re.compile(
    r"\n\s*(?:\d{1,2}\.\s|COR\b|See Online|Synopsis|Recommendation-Specific)|(?<=[.)])\s+\d{1,2}\.\s+(?=[A-Z])"
    rf"|陈述\s*\d+\s*[：:]|推荐说明|证据概述|注[：:]|{_ZH_CLASS_LABEL}\s*{_ZH_LEVEL_LABEL}"
)
# A level closing a statement of a list under a class line: "… with symptoms. (Level of Evidence: B) (74,76)".
_CLOSING_LEVEL = re.compile(rf"[.。]\s*(\(\s*(?:Level of Evidence|LOE)\s*:?\s*(?:{_LEVEL}){_END}[^)]*\))")
_REACH = 400  # characters after a quote that may still be its recommendation
# A line ending a sentence: a full stop, maybe closing brackets and reference marks after it ("(76).", ".1-6"; not
# the decimal point of "(1.7 to 4.8").
_FINISHED = re.compile(r"(?<!\d)[.!?。！？][\"”’)\]]*(?:\d[\d,–-]*)?$")
# The cells that end a row: at the end of its line, or where a Chinese table's next row runs straight on ("…抗凝治疗4 周
# I B适合口服抗凝药的NVAF 患者…"); never inside letter-spaced type.
_CLOSING_CELLS = re.compile(rf"(?<![A-Z] )(?:{ROW_CELLS})(?=\s*$|[{IDEOGRAPHS}（(])")


def states_grading(text: str) -> bool:
    """Whether a text starts with a grading statement ("推荐强度：强 证据质量：A…", "NHLBI Grade: A…; ACC/AHA COR: I, LOE:
    A"), not advice nor a header ("COR LOE RECOMMENDATIONS")."""
    start = _GRADING_LINE.match(text.strip())
    found = find_recommendation(text[:200]) if start else None
    return bool(found and (found.recommendation_class or found.evidence_level))


def grading_window(text: str, start: int, quote: str) -> str:
    """The quote and the grading that closes its recommendation after it, if any: the cells ending its row or a
    later line of it, or the grading line under its statement."""
    stated = _first_pair(quote)
    if stated and stated.recommendation_class and stated.evidence_level:
        return quote  # a row quoted with its own cells ("…抗凝药物治疗 I A"), a sentence with its own grade
    end = start + len(quote) if start >= 0 else 0
    rest = text[end : end + _REACH]
    boundary = _NEXT_STATEMENT.search(rest)
    closing = _closing_grading(quote, rest[: boundary.start()] if boundary else rest)
    return f"{quote}\n{closing}" if closing else quote


def _closing_grading(quote: str, rest: str) -> str:
    """The grading that ends the rest of a recommendation ("" when it states none). A grading inside the prose of a
    later sentence ("… (Class I; Level of Evidence A).") is that sentence's own, not the quote's."""
    paragraph = _own_paragraph(quote, rest)
    closing_level = _CLOSING_LEVEL.search(paragraph)
    if closing_level:
        return closing_level.group(1)
    for line in paragraph.split("\n"):
        stripped = line.strip()
        if _GRADING_LINE.match(stripped):  # under the quote, or right after it ("… cardiomegaly. (Level of Evidence: C)")
            return stripped
        label = _ZH_LABELLED.search(line)  # Chinese lines run on: "…托伐普坦。推荐强度：强  证据质量：A"
        if label:
            return label.group(0)
        cells = _CLOSING_CELLS.search(line)
        if cells:
            return cells.group(0)
    return ""


def _own_paragraph(quote: str, rest: str) -> str:
    """The rest of the quote's paragraph: its lines up to one that follows a finished sentence or a Chinese line (a
    newline there starts the text that supports a statement, or the next row of a table), except the row's cells or
    grading line standing on a line of their own."""
    lines = rest.split("\n")
    kept = lines[:1]
    for number in range(1, len(lines)):
        stripped = lines[number].strip()
        above = (quote + lines[0] if number == 1 else lines[number - 1]).strip()
        own = table_cell_recommendation(stripped) or _GRADING_LINE.match(stripped)
        if not own and (_FINISHED.search(above) or WIDE_CHAR.match(stripped[:1]) or WIDE_CHAR.match(above[-1:])):
            break
        kept.append(lines[number])
    return "\n".join(kept)


def grading_in(text: str, start: int, quote: str) -> Recommendation:
    """The grading stated at a quote starting at `start` in `text` (the class of a level-only statement from the
    class line its list starts with, when the text holds it)."""
    found = find_recommendation(grading_window(text, start, quote))
    if found.evidence_level and not found.recommendation_class and start > 0:
        return Recommendation(class_heading_before(text, start), found.evidence_level)
    return found
