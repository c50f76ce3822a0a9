"""Recommendation gradings in gold answers and in the app's answers: does an answer state the class and level?

A grading is a (class, level) pair in one canonical spelling: ACC/AHA Class of Recommendation `I`, `IIa`, `IIb`,
`III` (Roman numerals ASCII; "III: No Benefit" / "III (Harm)" count as `III`) with a Level of Evidence `A`, `B`,
`B-R`, `B-NR`, `C`, `C-LD`, `C-EO`; or a GRADE strength (`strong`, `weak`, `conditional`) with a quality
(`high`, `moderate`, `low`, `very low`).

`find_gradings` reads every pair stated in a text, English ("Class IIa, LOE B-R", "(Class I; Level of Evidence
A)", "COR: I, LOE: A", "strong recommendation, moderate-quality evidence") or Chinese ("Ⅰ类推荐，C级证据",
"Ⅱa类推荐，证据水平B-R", "（Ⅰ，A）"), and adds what the app's own grammar (`workspace_app.text.grades`) reads in
each paragraph, such as the table cells "IIa B-NR" of a recommendation table. The same function parses the gold
`answer` of a row, so gold and answer are compared in one spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from workspace_app.text.grades import find_recommendation

_CLASS = r"III|IIa|IIb|II|I|Ⅲ|Ⅱ\s?a|Ⅱ\s?b|Ⅱ|Ⅰ"
_LEVEL = r"B-NR|B-R|C-LD|C-EO|A|B|C"
_AFTER_LEVEL = r"(?![\w-])"
_EN = re.compile(
    rf"(?:Class|COR)\s*:?\s*({_CLASS})(?![a-z])(?:\s*:?\s*\(?\s*(?:No\s+Benefit|Harm)\s*\)?)?"
    rf"[^.()]{{0,40}}?(?:Level\s+of\s+Evidence|LOE)\s*:?\s*({_LEVEL}){_AFTER_LEVEL}",
    re.IGNORECASE,
)
_ZH = re.compile(
    rf"({_CLASS})\s*类(?:推荐)?\s*[，,、;；]?\s*(?:证据(?:水平|级别|等级)\s*({_LEVEL}){_AFTER_LEVEL}|({_LEVEL})\s*级(?:证据)?)"
)
_ZH_PAIR = re.compile(rf"[（(]\s*({_CLASS})\s*[，,、]\s*({_LEVEL})\s*[）)]")
_STRENGTH = r"strong|weak|conditional"
_QUALITY = r"high|moderate|low|very\s+low"
_GRADE = re.compile(
    rf"\b({_STRENGTH})\s+recommendation[^.;]{{0,40}}?\b({_QUALITY})[-\s]+(?:quality|certainty)\s+(?:of\s+)?evidence"
    rf"|\b({_QUALITY})[-\s]+(?:quality|certainty)\s+(?:of\s+)?evidence[^.;]{{0,40}}?\b({_STRENGTH})\s+recommendation",
    re.IGNORECASE,
)
_ROMAN = str.maketrans({"Ⅰ": "I", "Ⅱ": "II", "Ⅲ": "III"})


@dataclass(frozen=True)
class Grading:
    """A class of recommendation (or GRADE strength) with its level of evidence (or GRADE quality)."""

    recommendation_class: str
    evidence_level: str

    def __str__(self) -> str:
        return f"{self.recommendation_class} {self.evidence_level}"


def canonical_class(value: str) -> str:
    """'Ⅱa' -> 'IIa', 'iii' -> 'III', 'III: No Benefit' -> 'III'."""
    value = re.sub(r"\s+", "", value.translate(_ROMAN)).split(":")[0]
    return value[:-1].upper() + value[-1].lower() if value[-1:].lower() in ("a", "b") else value.upper()


def canonical_level(value: str) -> str:
    """'b-nr' -> 'B-NR', 'very  low' -> 'very low'."""
    value = re.sub(r"\s+", " ", value.strip())
    return value.lower() if value.lower() in ("high", "moderate", "low", "very low") else value.upper()


def find_gradings(text: str) -> list[Grading]:
    """Every grading stated in a text, in order of appearance, each once."""
    found: list[tuple[int, Grading]] = []
    for match in _EN.finditer(text):
        found.append((match.start(), _grading(match.group(1), match.group(2))))
    for match in _ZH.finditer(text):
        found.append((match.start(), _grading(match.group(1), match.group(2) or match.group(3))))
    for match in _ZH_PAIR.finditer(text):
        found.append((match.start(), _grading(match.group(1), match.group(2))))
    for match in _GRADE.finditer(text):
        strength, quality = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
        found.append((match.start(), Grading(strength.lower(), canonical_level(quality))))
    offset = 0
    for paragraph in text.split("\n\n"):
        app = find_recommendation(paragraph)
        if app.recommendation_class and app.evidence_level:
            found.append((offset, _grading(app.recommendation_class, app.evidence_level)))
        offset += len(paragraph) + 2
    return list(dict.fromkeys(grading for _, grading in sorted(found, key=lambda pair: pair[0])))


def _grading(recommendation_class: str, evidence_level: str) -> Grading:
    return Grading(canonical_class(recommendation_class), canonical_level(evidence_level))


def cited_grading(recommendation_class: str | None, evidence_level: str | None) -> Grading | None:
    """The grading a citation carries (its chip), or None when it lacks the class or the level."""
    if not recommendation_class or not evidence_level:
        return None
    return _grading(recommendation_class, evidence_level)


def states_all(gold: Iterable[Grading], stated: Iterable[Grading]) -> bool:
    """Whether every gold grading is among the stated ones (False when there is no gold grading)."""
    gold, stated = list(gold), set(stated)
    return bool(gold) and all(g in stated for g in gold)
