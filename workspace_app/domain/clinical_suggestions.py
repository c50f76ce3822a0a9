"""The clinical pack's suggestion patterns: the question a graded recommendation answers, from how guidelines word
their advice ("For women with atrial fibrillation, warfarin should be used..." -> "What is recommended for women
with atrial fibrillation?"; "对于…患者，推荐…" -> "对于…患者，推荐什么？")."""

from __future__ import annotations

import re

from workspace_app.text.language import detect_language

_EN_POPULATION = re.compile(r"^(?:In|For|Among)\s+(?P<who>[^,;:()]{6,110}?),\s")
_EN_SUBJECT = re.compile(
    r"^(?P<what>[A-Z][^,;:()]{3,70}?)\s+(?:is|are|should|may|can)\s+(?:not\s+)?(?:be\s+)?"
    r"(?:recommended|indicated|reasonable|considered|used|useful|beneficial|performed|initiated|prescribed)\b"
)
_PARENTHESES = re.compile(r"\s*[(（][^()（）]*[)）]")
_DOSE = re.compile(r"\s+\d[\d.,–-]*\s*(?:mg|g|µg|mcg|mmol|units?|IU)\b(?:/\w+)?", re.IGNORECASE)
_ZH_POPULATION = re.compile(r"^(?:对于|对)(?P<who>[^，,。；]{2,30})[，,]")
_ZH_PATIENTS = re.compile(r"^(?P<who>[^，,。；]{2,25}?患者)[，,]")
_ZH_FIRST_CHOICE = re.compile(r"^(?P<what>[^，,。；\s]{4,30}?)(?:应?首选|优先选择)")
_ZH_SUBJECT = re.compile(r"^(?:推荐|建议)?(?P<what>[^，,。；]{2,20}?)(?:推荐|建议|应)")
_ACRONYM = re.compile(r"^[A-Z0-9]{2,}")
_GENERIC_SUBJECTS = frozenset("pharmacotherapy therapy treatment it this these they such".split())


def recommendation_question(statement: str, section: str = "") -> str | None:
    """A question a recommendation answers: who it is for when it opens with its population ("For women with …,"),
    else what it is about (with its section's topic when the subject alone says nothing, e.g. "pharmacotherapy"
    under "Blood pressure: pharmacotherapy"). A population named after the advice is not cut out: where it ends
    cannot be told from the words ("… in patients who are survivors of cardiac arrest due to VF …")."""
    if detect_language(statement) == "zh":
        return _zh_recommendation_question(statement)
    plain = _DOSE.sub("", _PARENTHESES.sub("", statement))
    who = _EN_POPULATION.match(plain)
    if who:
        return f"What is recommended for {_lower_first(who['who'].strip())}?"
    what = _EN_SUBJECT.match(plain)
    if not what:
        return None
    subject = _lower_first(what["what"].strip())
    topic = _section_topic(section)
    if subject.lower() in _GENERIC_SUBJECTS and topic and topic.lower() not in subject.lower():
        return f"When is {subject} recommended for {topic}?"
    return f"When is {subject} recommended?"


def _zh_recommendation_question(statement: str) -> str | None:
    who = _ZH_POPULATION.match(statement) or _ZH_PATIENTS.match(statement)
    if who:
        return f"对于{who['who'].strip()}，推荐什么？"
    first = _ZH_FIRST_CHOICE.match(statement)
    if first:
        return f"{first['what'].strip()}首选什么？"
    what = _ZH_SUBJECT.match(statement)
    return f"关于{what['what'].strip()}，有什么推荐？" if what else None


def _section_topic(section: str) -> str:
    """The topic a section title names: "Blood pressure: pharmacotherapy" -> "blood pressure"."""
    title = section.split(" > ")[-1].strip()
    topic = title.split(":")[0].strip() if ":" in title else ""
    return _lower_first(topic) if 3 <= len(topic) <= 40 else ""


def _lower_first(text: str) -> str:
    return text if _ACRONYM.match(text) else text[:1].lower() + text[1:]
