"""The plan of a question about one patient's timeline (issue 28 item 2): what it asks about, over which time, and
whether it is a question about the record at all or one for the guidelines.

A question is read once, left to right, against two lexicons: the concepts (drug classes, drugs, diseases, labs,
abnormal findings: lexicon/questions.tsv, drugs.tsv, diseases.tsv, labs.tsv) and the timeline words
(lexicon/timeline.tsv: durations, windows, before/after, latest/first, when, medication verbs, kinds of event,
directions of a lab result, guideline words, words that say nothing). Longest names win, so 'potassium chloride'
is a drug and not the potassium lab, and '高血压' is hypertension and not '高' (high).

    "what anticoagulants did she get in the last 48 hours?"
        targets [anticoagulants], medication, window 48 h up to the record's latest event
    "when was her potassium last low?"          targets [potassium ↓], latest
    "what happened before the hypotension?"      every event, 24 h before the latest hypotension
    "患者最近服过什么药？"                          medications, the recent window (24 h)
    "低钾之后24小时内用了什么药？"                   medications, 24 h after the latest low potassium

English puts the anchor of before/after after the word ('before the hypotension'), Chinese before it
('低血压之前'). A word of the question that neither lexicon knows (a drug the lexicons lack, 'phytonadione') is
kept as a term to look up in the record's own text. The event tools (timeline_tools.py) carry the plan out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from workspace_app.patients.lexicon import load_lexicon, phrase_pattern
from workspace_app.patients.questions import load_question_lexicon

_FILE = Path(__file__).with_name("lexicon") / "timeline.tsv"
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_DIGIT_LETTER = re.compile(r"(\d)([a-zA-Z])")  # '48h' -> '48 h'
_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
_CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_TERM = 4  # shorter unknown words are not looked up in the record


@dataclass(frozen=True)
class Mention:
    """A concept or a kind of event the question names: where, the words as written, the concept keys an event
    may carry to match it (or the kind of event)."""

    start: int
    end: int
    text: str
    keys: frozenset[str] = frozenset()
    kind: str = ""


@dataclass(frozen=True)
class TimelinePlan:
    """What the event tools are to find, and whether the question is about the record's timeline at all."""

    question: str
    targets: tuple[Mention, ...] = ()
    terms: tuple[str, ...] = ()
    medication: bool = False
    window_h: float | None = None
    day: int | None = None
    relation: str = ""  # "before", "after", or "since" (after, up to now)
    anchor: Mention | None = None
    relation_h: float = 24.0  # 0: up to the record's latest event
    occurrence: str = ""
    direction: str = ""
    asks_when: bool = False
    guideline: bool = False
    cues: tuple[str, ...] = field(default=())

    @property
    def is_timeline(self) -> bool:
        """A question about the record's own events (and not about what the guidelines say)."""
        return bool(self.cues) and not self.guideline


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str
    cues: dict[str, str]
    keys: frozenset[str] = frozenset()
    number: float | None = None


@dataclass(frozen=True)
class _Tables:
    cues: dict[str, dict[str, str]]
    concepts: dict[str, frozenset[str]]
    pattern: re.Pattern[str]


@cache
def _tables() -> _Tables:
    """The timeline words and the concept words in one longest-first pattern (read once)."""
    cues: dict[str, dict[str, str]] = {}
    concepts: dict[str, set[str]] = {}
    for line in _FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cue, value, words = line.split("\t")
        for word in (w.strip().lower() for w in words.split("|") if w.strip()):
            if cue == "concept":
                concepts.setdefault(word, set()).add(value)
            else:
                cues.setdefault(word, {})[cue] = value
    lexicon, questions = load_lexicon(), load_question_lexicon()
    named = [(w, f"drug:{w}") for w in lexicon.drug_class] + [(w, f"lab:{lab}") for w, lab in lexicon.lab_names.items()]
    named += [(w, f"disease:{d}") for w, d in lexicon.disease_words.items()]
    named += [(w, f"class:{c}") for w, c in lexicon.class_names.items()] + list(questions.words.items())
    # a drug class is asked about in the plural too ('antibiotics', 'analgesics')
    named += [(f"{w}s", f"class:{c}") for w, c in lexicon.class_names.items() if w.isascii() and not w.endswith("s")]
    for word, key in named:
        if len(word) >= 3 or _CJK.search(word):
            concepts.setdefault(word, set()).add(key)
    frozen = {w: frozenset(k) for w, k in concepts.items()}
    return _Tables(cues, frozen, phrase_pattern([*cues, *frozen]))


def event_kinds() -> set[str]:
    """The kinds of event the timeline words name ('medication', 'lab'...): each needs its event tool."""
    return {cues["kind"] for cues in _tables().cues.values() if "kind" in cues}


def _tokens(text: str) -> list[_Token]:
    """The lexicon words and the numbers of a (lower-cased, normalised) question, in order."""
    tables = _tables()
    found = [
        _Token(m.start(), m.end(), m.group(0), tables.cues.get(m.group(0), {}), tables.concepts.get(m.group(0), frozenset()))
        for m in tables.pattern.finditer(text)
    ]
    taken = [(t.start, t.end) for t in found]
    for match in _DIGITS.finditer(text):
        if not any(a <= match.start() < b for a, b in taken):
            found.append(_Token(match.start(), match.end(), match.group(0), {"number": match.group(0)}))
    for token in found:
        if "number" in token.cues:
            object.__setattr__(token, "number", float(token.cues["number"]))
    return sorted(found, key=lambda t: t.start)


def plan_question(question: str, recent_h: float = 24.0, relation_h: float = 24.0) -> TimelinePlan:
    """The plan of a question: its targets, window, relation, occurrence, and whether it asks about the timeline.
    `recent_h`: the hours 'recently' covers, `relation_h` those of 'before X' / 'after X', when the question gives
    no duration (Settings.patients.timeline_recent_h, timeline_relation_h)."""
    written = _DIGIT_LETTER.sub(r"\1 \2", question)
    text = written.lower()
    tokens = _tokens(text)
    mentions = _mentions(tokens, written if len(written) == len(text) else text)
    durations, prefixes = _durations(tokens)
    cues: list[str] = []
    relation, anchor, occurrence = "", None, ""
    window_h, day, recent, first = None, None, False, False
    for i, token in enumerate(tokens):
        if i in prefixes:
            continue
        if {"before", "after", "since"} & set(token.cues):
            found = _anchor(token, mentions)
            if found is not None and not relation:
                relation, anchor = next(c for c in ("before", "after", "since") if c in token.cues), found
                cues.append(relation)
                continue
        if "latest" in token.cues:
            occurrence = occurrence or "latest"
        elif "first" in token.cues:
            first = True
        if "recent" in token.cues:
            recent = True
        if "day" in token.cues:
            day = int(token.cues["day"])
        cues += [c for c in token.cues if c in ("latest", "first", "recent", "day", "when", "given", "kind")]
    if first:
        occurrence = "first"
    if durations and not relation:
        window_h = durations[0]
        cues.append("window")
    elif recent and not relation and day is None:
        window_h = recent_h
    directed, direction = _directed(tokens, mentions)
    targets = tuple(m for m in directed if m != anchor and not (anchor and m.start == anchor.start))
    anchor = next((m for m in directed if anchor and m.start == anchor.start), anchor)
    return TimelinePlan(
        question=question, targets=targets, terms=_terms(text, tokens),
        medication=any("given" in t.cues or t.cues.get("kind") == "medication" for t in tokens),
        window_h=window_h, day=day, relation=relation, anchor=anchor,
        relation_h=durations[0] if durations and relation else (0.0 if relation == "since" else relation_h),
        occurrence=occurrence, direction=direction,
        asks_when=any("when" in t.cues for t in tokens), guideline=any("guideline" in t.cues for t in tokens),
        cues=tuple(dict.fromkeys(cues)),
    )


def _mentions(tokens: list[_Token], written: str) -> list[Mention]:
    """The concepts and kinds of event the question names, in order, as written ('INR')."""
    found = []
    for token in tokens:
        if token.keys:
            found.append(Mention(token.start, token.end, written[token.start:token.end], token.keys))
        elif "kind" in token.cues:
            found.append(Mention(token.start, token.end, written[token.start:token.end], kind=token.cues["kind"]))
    return found


def _adjacent(left: _Token, right: _Token) -> bool:
    return 0 <= right.start - left.end <= 1


def _durations(tokens: list[_Token]) -> tuple[list[float], set[int]]:
    """Hours of each duration ('48 hours', 'two days', 'a week' as 'week') and the indexes of the tokens that are
    part of one or lead into one ('last', '过去', '前' before a number)."""
    hours: list[float] = []
    used: set[int] = set()
    for i, token in enumerate(tokens):
        if "unit" not in token.cues or i in used:
            continue
        before = tokens[i - 1] if i else None
        number = 1.0
        if before is not None and before.number is not None and _adjacent(before, token):
            number, start = before.number, i - 1
        else:
            start = i
        hours.append(number * float(token.cues["unit"]))
        used.update(range(start, i + 1))
        lead = tokens[start - 1] if start else None
        if lead is not None and "window" in lead.cues and _adjacent(lead, tokens[start]) and not _is_postposition(lead, tokens, start - 1):
            used.add(start - 1)
    return hours, used


def _is_postposition(token: _Token, tokens: list[_Token], index: int) -> bool:
    """A Chinese before/after word after a concept or a kind of event ('入院前24小时': before the admission), not
    one leading a window ('前24小时': the last 24 hours)."""
    named = any(t.keys or "kind" in t.cues for t in tokens[:index])
    return bool(_CJK.search(token.text) and named and {"before", "after", "since"} & set(token.cues))


def _anchor(token: _Token, mentions: list[Mention]) -> Mention | None:
    """The event a before/after word is relative to: the next mention in English, the previous one in Chinese."""
    if _CJK.search(token.text):
        return next((m for m in reversed(mentions) if m.end <= token.start), None)
    return next((m for m in mentions if m.start >= token.end), None)


def _directed(tokens: list[_Token], mentions: list[Mention]) -> tuple[list[Mention], str]:
    """Mentions with a lab whose direction the question gives ('potassium ... low', '血钾偏低') made abnormal
    findings ('abnormal:potassium↓'; '!' any direction), and the direction no lab took ('which labs were low')."""
    labs = [m for m in mentions if any(k.startswith("lab:") for k in m.keys)]
    changed: dict[int, Mention] = {}
    loose = ""
    for direction in (t for t in tokens if "direction" in t.cues):
        arrow = direction.cues["direction"]
        if not labs:
            loose = loose or arrow
            continue
        lab = min(labs, key=lambda m: min(abs(m.start - direction.end), abs(direction.start - m.end)))
        items = [k.split(":", 1)[1] for k in lab.keys if k.startswith("lab:")]
        keys = {f"abnormal:{item}{a}" for item in items for a in ("↓↑" if arrow == "!" else arrow)}
        keys |= {k for k in lab.keys if k.startswith("abnormal:")}
        changed[lab.start] = Mention(lab.start, lab.end, f"{lab.text} ({direction.text})", frozenset(keys))
    return [changed.get(m.start, m) for m in mentions], loose


def _terms(text: str, tokens: list[_Token]) -> tuple[str, ...]:
    """Words no lexicon knows ('phytonadione'), to look up in the record's own text."""
    masked = list(text)
    for token in tokens:
        masked[token.start:token.end] = " " * (token.end - token.start)
    stop = _tables().cues
    words = _WORD.findall("".join(masked))
    return tuple(dict.fromkeys(w.strip("'-") for w in words if len(w) >= MIN_TERM and w not in stop))
