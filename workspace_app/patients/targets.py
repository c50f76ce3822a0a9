"""Targets and thresholds stated in guideline sentences, and how a patient's values compare with them (issue 28
item 3): "INR 目标范围一般在2.0~3.0 之间", "maintain the INR at 2.0 to 3.0", "LDL-C less than 70 mg/dL (<1.8 mmol/L)".

The grammar is small and lives in the lexicon: lexicon/measures.tsv names each measure in guideline text (English
and Chinese), the lab items the record measures it by, its unit and the units it converts from; lexicon/
comparators.tsv the words and signs before or after a number (below, at most, above, at least, a range) and the
words that make a number a target rather than a threshold. A measure is read only from the numbers that follow its
name, up to the next measure named or the end of the clause, and only when their unit is the measure's own, one it
converts from, or none: 'TTR > 70%' after 'INR' is not an INR target, '>65 岁' is an age.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from workspace_app.models.events import Event
from workspace_app.patients.concepts import lab_value
from workspace_app.patients.lexicon import load_lexicon, phrase_pattern

_FOLDER = Path(__file__).with_name("lexicon")
_NUMBER = r"(?P<{}>\d+(?:\.\d+)?)"
_CLAUSE_END = re.compile(r"[;；。]|\.\s|，(?=[^，]*(?:推荐|建议|应))")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_OTHER_UNITS: dict[str, list[str]] = {}  # measure -> its other units as measures.tsv spells them
WINDOW = 32  # characters after a measure's name its number may be found in


def _rows(name: str) -> list[list[str]]:
    lines = (_FOLDER / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def _split(field: str) -> list[str]:
    return [w.strip() for w in field.split("|") if w.strip()]


def _alternation(words: Sequence[str]) -> str:
    """Longest first, words with letters bounded as whole words."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        escaped = re.escape(word)
        parts.append(rf"(?<![a-z]){escaped}(?![a-z])" if re.search(r"[a-z]", word) else escaped)
    return "|".join(parts)


@dataclass(frozen=True)
class Measure:
    """Something a guideline sets a target for and the record measures (lexicon/measures.tsv)."""

    key: str
    labs: frozenset[str]  # lab concepts of the record's items
    names: tuple[str, ...]
    unit: str
    units: dict[str, float]  # unit (lower-case) -> how many of `unit` one of it is; the measure's own is 1
    brought_up_by: frozenset[str]

    def name(self, language: str) -> str:
        """How answers name it: its first Chinese or English name."""
        chinese = [n for n in self.names if _CJK.search(n)]
        english = [n for n in self.names if not _CJK.search(n)]
        if language == "zh" and chinese and english[0] != english[0].upper():
            return chinese[0]  # an abbreviation ('INR', 'LDL-C') is how Chinese guidelines write it too
        return english[0]


@dataclass(frozen=True)
class Grammar:
    """The measures, and one pattern of the numbers a target is written with."""

    measures: dict[str, Measure]
    names: dict[str, str]  # lower-case name -> measure key
    mention: re.Pattern[str]
    quantity: re.Pattern[str]
    comparators: dict[str, str]  # lower-case word or sign -> comparator
    target_words: re.Pattern[str]
    age_units: frozenset[str]


@dataclass(frozen=True)
class Target:
    """A target or threshold a sentence states: the measure, the comparator ('range', 'below', 'at most',
    'above', 'at least'), its bound(s) in the measure's unit, as written, and whether it is a target to reach."""

    measure: str
    comparator: str
    low: float | None
    high: float | None
    written: str
    is_target: bool
    shown: tuple[float | None, float | None, str] = (None, None, "")  # the bounds and unit as the sentence gives them

    def place(self, value: float) -> str:
        """Where a value is against it: 'within', 'below' or 'above' (for a one-sided bound, 'within' is on the
        side it asks for)."""
        if self.low is not None and (value < self.low or (self.comparator == "above" and value == self.low)):
            return "below"
        if self.high is not None and (value > self.high or (self.comparator == "below" and value == self.high)):
            return "above"
        return "within"


@cache
def load_grammar() -> Grammar:
    """The shipped measures and comparators (read once)."""
    measures: dict[str, Measure] = {}
    lexicon = load_lexicon()
    for row in _rows("measures.tsv"):
        row += [""] * (6 - len(row))
        key, unit = row[0].strip(), row[3].strip()
        units = {unit.lower(): 1.0} if unit else {}
        for pair in _split(row[4]):
            other, _, factor = pair.partition("=")
            units[other.strip().lower()] = float(factor)
            _OTHER_UNITS.setdefault(key, []).append(other.strip())
        labs = frozenset(lexicon.lab(label) for label in _split(row[1]))
        measures[key] = Measure(key, labs, tuple(_split(row[2])), unit, units, frozenset(_split(row[5])))
    names = {n.lower(): m.key for m in measures.values() for n in m.names}
    comparators: dict[str, str] = {}
    before, after, separators, targets, other_units = [], [], [], [], []
    for row in _rows("comparators.tsv"):
        row += [""] * (3 - len(row))
        kind, words, tail = row[0].strip(), _split(row[1]), _split(row[2])
        if kind == "to":
            separators += words
        elif kind == "units":
            other_units += [w.lower() for w in words]
        elif kind == "target":
            targets += words
        else:
            before += words
            after += tail
            comparators.update({w.lower(): kind for w in (*words, *tail)})
    age_units = frozenset(w.lower() for r in _rows("populations.tsv") if r[0] == "age" for w in _split(r[2]))
    all_units = {u for m in measures.values() for u in m.units} | age_units | set(other_units)
    quantity = re.compile(
        rf"(?P<before>{_alternation([w.lower() for w in before])})?\s*{_NUMBER.format('low')}"
        rf"(?:\s*(?P<unit1>{_alternation(sorted(all_units))}))?"
        rf"(?:\s*(?:{_alternation([w.lower() for w in separators])})\s*{_NUMBER.format('high')})?"
        rf"(?:\s*(?P<unit>{_alternation(sorted(all_units))}))?"
        rf"(?:\s*(?P<after>{_alternation([w.lower() for w in after])}))?"
    )
    return Grammar(
        measures, names, phrase_pattern(list(names)), quantity, comparators,
        re.compile(_alternation([w.lower() for w in targets])), age_units,
    )


def read_targets(sentence: str) -> list[Target]:
    """The targets and thresholds a sentence states, one per measure (its first), in order."""
    grammar = load_grammar()
    text = _normalized(sentence)
    mentions = list(grammar.mention.finditer(text))
    found: dict[str, Target] = {}
    for i, mention in enumerate(mentions):
        measure = grammar.measures[grammar.names[mention.group(0)]]
        if measure.key in found:
            continue
        end = min(mention.end() + WINDOW, mentions[i + 1].start() if i + 1 < len(mentions) else len(text))
        stop = _CLAUSE_END.search(text, mention.end(), end)
        window = text[mention.end(): stop.start() if stop else end]
        target = _first_quantity(window, measure, grammar)
        if target is not None:
            near = text[max(0, mention.start() - WINDOW): mention.end() + len(window)]
            comparator, low, high, written, shown = target
            is_target = bool(grammar.target_words.search(near))
            found[measure.key] = Target(measure.key, comparator, low, high, written, is_target, shown)
    return list(found.values())


def read_quantities(text: str, units: frozenset[str]) -> list[tuple[str, float | None, float | None, str]]:
    """Every (comparator, low, high, as written) of a number written with one of the units ('40 to 75 years',
    '≥65 岁', 'older than 75 years'), in order; no conversion."""
    grammar = load_grammar()
    found = []
    for match in grammar.quantity.finditer(_normalized(text)):
        unit = (match["unit"] or match["unit1"] or "").lower()
        comparator_word = (match["before"] or match["after"] or "").lower()
        bare = match["high"] is None and grammar.comparators.get(comparator_word, "range") == "range"
        if unit in units and not bare:  # a bare '10-year' (risk) or 'aged 65 years' gives no bound
            comparator, low, high = _bounds(match, grammar)
            found.append((comparator, low, high, match.group(0).strip()))
    return found


def _normalized(text: str) -> str:
    """Lower-case, one space, full-width signs and a number broken across a line ('1.5~2. 0') joined."""
    text = re.sub(r"\s+", " ", text).lower().replace("－", "-").replace("＝", "=")
    return re.sub(r"(\d)\.\s(\d)", r"\1.\2", text)


def _first_quantity(
    window: str, measure: Measure, grammar: Grammar
) -> tuple[str, float | None, float | None, str, tuple[float | None, float | None, str]] | None:
    """The first number(s) in the window written in one of the measure's units (or none), converted to its unit."""
    for match in grammar.quantity.finditer(window):
        unit = (match["unit"] or match["unit1"] or "").lower()
        if unit and unit not in measure.units:
            continue
        comparator_word = (match["before"] or match["after"] or "").lower()
        if match["high"] is None and grammar.comparators.get(comparator_word, "range") == "range":
            continue  # a bare number ('INR 2', 'a threshold of 70 mg/dL') says no side
        comparator, low, high = _bounds(match, grammar)
        factor = measure.units.get(unit, 1.0)
        shown_unit = _unit_as_named(measure, unit) if unit else measure.unit
        scaled = [None if v is None else round(v * factor, 2) for v in (low, high)]
        return comparator, scaled[0], scaled[1], match.group(0).strip(), (low, high, shown_unit)
    return None


def _unit_as_named(measure: Measure, unit: str) -> str:
    """The unit as the lexicon spells it ('mmol/l' -> 'mmol/L')."""
    return measure.unit if unit == measure.unit.lower() else next(
        (u for u in _OTHER_UNITS.get(measure.key, ()) if u.lower() == unit), unit)


def _bounds(match: re.Match[str], grammar: Grammar) -> tuple[str, float | None, float | None]:
    first = float(match["low"])
    if match["high"] is not None:
        second = float(match["high"])
        return "range", min(first, second), max(first, second)
    comparator = grammar.comparators.get((match["before"] or match["after"] or "").lower(), "range")
    if comparator in ("below", "at most"):
        return comparator, None, first
    if comparator in ("above", "at least"):
        return comparator, first, None
    return "range", first, first


@dataclass(frozen=True)
class Reading:
    """One value of a measure in the record: the lab event, its number in the measure's unit."""

    event: Event
    value: float


def measure_readings(measure: Measure, events: Sequence[Event]) -> list[Reading]:
    """The record's numeric results of the measure's lab items, in time order, converted to the measure's unit
    when the result's unit is one the measure converts from (left out when its unit is unknown to it)."""
    lexicon = load_lexicon()
    found = []
    for event in events:
        if event.event_type != "lab":
            continue
        label, value = _lab_label(event.content), lab_value(event.content)
        if value is None or lexicon.lab(label) not in measure.labs:
            continue
        unit = _lab_unit(event.content, label)
        if unit and measure.units and unit not in measure.units:
            continue
        found.append(Reading(event, round(value * measure.units.get(unit, 1.0), 2)))
    return found


_LAB_VALUE = re.compile(r"\s+[<>]?=?\s*-?\d")


def _lab_label(content: str) -> str:
    match = _LAB_VALUE.search(content)
    return content[: match.start()] if match else content


def _lab_unit(content: str, label: str) -> str:
    """'mEq/L' of 'Potassium 3.1 mEq/L (low; ref 3.5–5.1)', lower-case; '' without one."""
    rest = content[len(label):].split("(", 1)[0].split()
    return rest[1].lower() if len(rest) > 1 else ""


def bound_text(target: Target, measure: Measure, language: str) -> str:
    """'2.0–3.0', 'below 70 mg/dL', '<1.8 mmol/L' (in the unit the sentence wrote) as an answer says it."""
    low, high, unit = target.shown if target.shown[2] or target.shown[:2] != (None, None) else (
        target.low, target.high, measure.unit)
    unit = unit if unit == "%" or not unit else f" {unit}"
    number = lambda v: f"{v:.1f}" if v < 10 else f"{v:g}"
    if target.comparator == "range" and low is not None and high is not None:
        return f"{number(low)}–{number(high)}{unit}"
    words = {"below": ("below", "<"), "at most": ("at most", "≤"), "above": ("above", ">"), "at least": ("at least", "≥")}
    word, sign = words[target.comparator]
    value = high if target.comparator in ("below", "at most") else low
    assert value is not None
    return f"{sign}{number(value)}{unit}" if language == "zh" else f"{word} {number(value)}{unit}"
