"""Whom a recommendation is for, and whether a patient is among them (issue 28 item 3): a recommendation whose
population the patient's record does not meet (a condition, an age, a sex) is not applied to the patient.

The population is the part of the sentence that names it: its lead ("In adults 40 to 75 years of age with diabetes
mellitus, …", "For women with …", "对于房颤合并HF 的患者，…") or its subject ("Patients with HCM and persistent AF
have … such that … should be considered"). In it are read: the diseases of the patient lexicon and the conditions
of lexicon/populations.tsv ('without' one: the patient must not have it), a sex, and ages (numbers with an age unit,
read by the targets' grammar). The record answers with its diagnoses (their text), the patient's sex and age.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from workspace_app.models.events import Event, Patient
from workspace_app.patients.lexicon import phrase_pattern
from workspace_app.patients.questions import concept_names, concept_synonyms
from workspace_app.patients.targets import load_grammar, read_quantities

_FILE = Path(__file__).with_name("lexicon") / "populations.tsv"
_NUMBERING = re.compile(r"^\W*(?:(?:I|IIa|IIb|III|1|2a|2b|3)\s*:?\s*[A-C](?:-[A-Z]{1,3})?\s+)?(?:\d{1,2}\.\s+)?")
_LEAD = re.compile(r"^(?:in|for|among)\s+(?P<who>[^,;]{3,220}?),")
_NEGATION = re.compile(r"(?:without|no|non-?|not|free of|无|不伴|非)\s*(?:[a-z]+\s+){0,2}$")
_CJK = re.compile(r"[\u4e00-\u9fff]")
# 'or' between two descriptions of who ('with risk factors or in whom chest pain persists'), not between two words
_RISK = re.compile(r"^\s*(?:risk|高危|风险|危险)")  # 'stroke risk', '卒中高危因素': a risk, not a condition


@dataclass(frozen=True)
class Condition:
    """A condition a population names: its name, how the record shows it, and whether it is excluded."""

    name: str
    name_zh: str = ""
    disease: str = ""  # the patient lexicon's disease concept ('disease:atrial fibrillation'), or
    record_words: tuple[str, ...] = ()  # words of a diagnosis that show it (lexicon/populations.tsv)
    excluded: bool = False
    alternative: int = 0  # which of the population's 'or' parts names it ('… with X or in whom Y …')


@dataclass(frozen=True)
class Population:
    """Whom a recommendation is for, as its sentence says: the words, conditions, sex ('F', 'M'), ages."""

    phrase: str
    conditions: tuple[Condition, ...] = ()
    sex: str = ""
    ages: tuple[tuple[str, float | None, float | None, str], ...] = ()


@dataclass(frozen=True)
class _Grammar:
    """Where a recommendation names its population, built on the lexicon's population nouns (lexicon/populations.tsv)."""

    subject: re.Pattern[str]  # 'Patients with HCM … should …'
    inside: re.Pattern[str]  # '… is reasonable in adults aged …'
    zh: re.Pattern[str]  # '对于房颤合并HF 的患者'
    alternative: re.Pattern[str]  # 'or' between two descriptions of who ('with risk factors or in whom chest pain persists')


@cache
def _grammar() -> _Grammar:
    nouns = {language: words for kind, language, words in _rows() if kind == "who"}
    en, zh = "|".join(map(re.escape, nouns["en"])), "|".join(map(re.escape, nouns["zh"]))
    qualifier = r"\s+(?:with|who|aged|older|younger|\d)"
    return _Grammar(
        re.compile(rf"^(?P<who>(?:{en}){qualifier}[^;]{{0,220}}?)\s+(?:should|is|are|may|might|can|must|have|has|benefit)\b"),
        re.compile(rf"\b(?:in|for|among)\s+(?P<who>(?:{en}){qualifier}[^,;.]{{0,160}})"),
        re.compile(rf"^(?:对于|对|在)?(?P<who>[^，。；,;]{{1,60}}?(?:{zh}))"),
        re.compile(rf"\s(?:or|and/or)\s(?=(?:in whom|who|whose|with|{en})\b)|或(?=有|伴|合并)"),
    )


def _rows() -> list[tuple[str, str, list[str]]]:
    """(kind, name, words) of every row of lexicon/populations.tsv."""
    rows = []
    for line in _FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            row = line.split("\t") + ["", ""]
            rows.append((row[0], row[1], [w.strip() for w in row[2].split("|") if w.strip()]))
    return rows


@cache
def _table() -> tuple[dict[str, tuple[str, tuple[str, ...]]], dict[str, str], re.Pattern[str]]:
    """(word -> (condition, its record words)), (word -> sex), one pattern of all the words."""
    conditions: dict[str, tuple[str, tuple[str, ...]]] = {}
    sexes: dict[str, str] = {}
    for line in _FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        row = line.split("\t") + ["", ""]
        words = [w.strip().lower() for w in row[2].split("|") if w.strip()]
        if row[0] == "condition":
            record = tuple(w.strip().lower() for w in row[3].split("|") if w.strip())
            conditions.update(dict.fromkeys(words, (row[1], record)))
        elif row[0] == "sex":
            sexes.update(dict.fromkeys(words, row[1]))
    return conditions, sexes, phrase_pattern([*conditions, *sexes])


def population_part(sentence: str) -> str:
    """The words of a recommendation that say whom it is for ('' when it names no one)."""
    text = _NUMBERING.sub("", re.sub(r"\s+", " ", sentence).strip())
    if _CJK.search(text[:20]):
        match = _grammar().zh.match(text)
        return match["who"] if match else ""
    lowered = text.lower()
    grammar = _grammar()
    for pattern in (_LEAD, grammar.subject, grammar.inside):
        match = pattern.match(lowered) if pattern is not grammar.inside else pattern.search(lowered)
        if match:
            return text[match.start("who"): match.end("who")]
    return ""


def read_population(sentence: str) -> Population | None:
    """The population a recommendation is for (None when it names no condition, sex or age)."""
    part = population_part(sentence)
    if not part:
        return None
    lowered = part.lower()
    conditions: dict[str, Condition] = {}
    words, sexes, pattern = _table()
    for match in pattern.finditer(lowered):
        word = match.group(0)
        if word in words and not _RISK.match(lowered[match.end():]):
            name, record = words[word]
            excluded = bool(_NEGATION.search(lowered[: match.start()]))
            chinese = next((w for w, (n, _) in words.items() if n == name and _CJK.search(w)), name)
            part_of = _alternative_at(lowered, match.start())
            conditions.setdefault(name, Condition(name, chinese, record_words=record, excluded=excluded,
                                                  alternative=part_of))
    for concept in concept_names(part):
        if concept.kind == "disease" and concept.name not in conditions:
            at = _named_at(lowered, concept.key)
            if at is None or _RISK.match(lowered[at[1]:]):
                continue
            excluded = bool(_NEGATION.search(lowered[: at[0]]))
            conditions[concept.name] = Condition(concept.name, concept.name_zh, concept.key, excluded=excluded,
                                                 alternative=_alternative_at(lowered, at[0]))
    named_sexes = {sexes[m.group(0)] for m in pattern.finditer(lowered) if m.group(0) in sexes}
    sex = next(iter(named_sexes)) if len(named_sexes) == 1 else ""
    ages = tuple(read_quantities(part, load_grammar().age_units))
    if not conditions and not sex and not ages:
        return None
    return Population(part, tuple(conditions.values()), sex, ages)


def _alternative_at(lowered: str, position: int) -> int:
    """Which 'or' part of the population a position is in."""
    return sum(1 for m in _grammar().alternative.finditer(lowered) if m.start() < position)


def _named_at(lowered: str, key: str) -> tuple[int, int] | None:
    """Where the text first names a concept (any of its words), as (start, end)."""
    spans = [(m.start(), m.end()) for m in phrase_pattern([w.lower() for w in concept_synonyms(key)]).finditer(lowered)]
    return min(spans) if spans else None


def outside_reasons(population: Population, patient: Patient, diagnoses: Sequence[Event], language: str) -> list[str]:
    """Why the patient is not in the population, in words (empty: the record meets it, or cannot say)."""
    zh = language == "zh"
    alternatives = len(_grammar().alternative.findall(population.phrase.lower())) + 1
    missing: dict[int, list[str]] = {i: [] for i in range(alternatives)}  # a part naming no condition is met
    for condition in population.conditions:
        part = missing.setdefault(condition.alternative, [])
        if has_condition(condition, diagnoses) == condition.excluded:
            name = (condition.name_zh or condition.name) if zh else condition.name
            if condition.excluded:
                part.append(f"记录中有{name}的诊断" if zh else f"the record has a diagnosis of {name}")
            else:
                part.append(f"记录中没有{name}的诊断" if zh else f"the record has no diagnosis of {name}")
    # one 'or' part the record meets in full is enough
    reasons = [r for part in missing.values() for r in part] if all(missing.values()) else []
    if population.sex and patient.gender and patient.gender.upper()[:1] != population.sex:
        sex = {"F": ("女性", "female"), "M": ("男性", "male")}[patient.gender.upper()[:1]]
        reasons.append(f"患者为{sex[0]}" if zh else f"the patient is {sex[1]}")
    for comparator, low, high, written in population.ages:
        if patient.age is not None and not _age_within(patient.age, comparator, low, high):
            reasons.append(f"患者{patient.age}岁（推荐针对{written}）" if zh
                           else f"the patient is {patient.age} years old (it is for {written})")
    return reasons


def has_condition(condition: Condition, diagnoses: Sequence[Event]) -> bool:
    """Whether any of the patient's diagnoses shows the condition."""
    if condition.disease:
        return any(condition.disease in {c.key for c in concept_names(d.content)} for d in diagnoses)
    return any(word in d.content.lower() for d in diagnoses for word in condition.record_words)


def _age_within(age: int, comparator: str, low: float | None, high: float | None) -> bool:
    if comparator == "below":
        return high is None or age < high
    if comparator == "at most":
        return high is None or age <= high
    if comparator == "above":
        return low is None or age > low
    if comparator == "at least":
        return low is None or age >= low
    return (low is None or age >= low) and (high is None or age <= high)


def is_diagnosis(event: Event) -> bool:
    """A diagnosis of the record (an ICD-coded one, or one a generic events file calls a diagnosis)."""
    return event.source_table == "diagnoses_icd" or event.sub_type == "diagnosis"
