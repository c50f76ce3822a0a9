"""The event tools a timeline plan (timeline_questions.py) calls on one patient's record, and what they found in
words (English or Chinese).

    by concept      events carrying a concept the question names (a drug or a drug class only in medication
                    events: a prescription, a given administration, an infusion)
    by kind         medications, lab results, diagnoses, procedures, orders, admissions, cultures
    by text         a word no lexicon knows, in the events' own text ('phytonadione')
    window          up to the record's latest event ("now": the record holds no clock), a calendar day, or before /
                    after another event found by the same tools (its latest occurrence, the first if asked)
    latest / first  the events at the latest (earliest) time among those found

Events of one content (the same administration charted daily) are grouped; each group cites the event nearest the
question's reference time (now, or the anchor) and counts the others. At most MAX_GROUPS groups are listed, the
nearest first; the answer says how many more there are. When nothing is found the findings say what was looked for
and over which time, and that the record does not say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from functools import cache
from pathlib import Path

from workspace_app.models.events import Event, TimelineFindings, TimelineHit, parse_time
from workspace_app.patients.concepts import record_keys
from workspace_app.patients.timeline_questions import Mention, TimelinePlan

MAX_GROUPS = 10
_MEDICATION_TABLES = ("prescriptions", "inputevents")
_FILE = Path(__file__).with_name("lexicon") / "timeline.tsv"


def is_medication(event: Event) -> bool:
    """A prescription, an infusion or an administration given (not one held or refused), or an event of another
    system's records that names a drug."""
    if event.source_table in _MEDICATION_TABLES:
        return True
    if event.source_table in ("emar", "poe"):
        return event.source_table == "emar" and bool(record_keys(event))
    return event.event_type in ("order", "nursing", "medication") and any(
        c.startswith(("drug:", "class:")) for c in event.concepts
    )


KINDS: dict[str, Callable[[Event], bool]] = {
    "medication": is_medication,
    "lab": lambda e: e.event_type == "lab",
    "diagnosis": lambda e: e.sub_type == "diagnosis",
    "procedure": lambda e: e.event_type == "surgery" or e.sub_type == "procedure",
    "order": lambda e: e.event_type == "order",
    "admission": lambda e: e.event_type == "admission",
    "culture": lambda e: e.sub_type == "microbiology",
}


def mentions_event(event: Event, mention: Mention) -> bool:
    """Whether an event is one the mention names (by kind, or by concept; drugs and classes in medications only)."""
    if mention.kind:
        return KINDS[mention.kind](event)
    shared = mention.keys.intersection(event.concepts)
    if not shared:
        return False
    return any(not k.startswith(("drug:", "class:")) for k in shared) or is_medication(event)


def find_in_record(plan: TimelinePlan, events: Sequence[Event], patient_id: str, language: str) -> TimelineFindings:
    """Carry the plan out on the patient's events (in time order) and say what was found."""
    words = _Words(language, patient_id)
    if not events:
        return TimelineFindings(words.silent_record())
    concepts = [m for m in plan.targets if not m.kind]
    terms = [t for t in plan.terms if any(t in e.content.lower() for e in events)]
    kinds = {m.kind for m in plan.targets if m.kind}
    if plan.medication and not kinds and not concepts and not terms:
        kinds = {"medication"}
    if plan.terms and not (concepts or terms or kinds or plan.anchor):
        return TimelineFindings(words.never(plan.terms))
    what = words.what(plan, concepts, terms, kinds)
    anchor, (start, end), scope = _window(plan, events, words)
    if plan.relation and anchor is None:
        return TimelineFindings(words.no_anchor(plan))
    found = [
        e for e in events
        if _within(e, start, end) and e is not anchor and _wanted(e, concepts, terms, kinds, plan.direction)
    ]
    if not found:
        return TimelineFindings(words.silent(what, scope), anchor=anchor)
    early = plan.relation in ("after", "since") or (plan.occurrence == "first" and not plan.relation)
    if plan.occurrence and not plan.relation:
        moment = found[0].timestamp if early else found[-1].timestamp
        found = [e for e in found if e.timestamp == moment]
    hits, more = _grouped(found, early)
    return TimelineFindings(words.lead(what, scope, plan), tuple(hits), anchor, more)


def _wanted(event: Event, concepts: list[Mention], terms: list[str], kinds: set[str], direction: str) -> bool:
    if kinds and not any(KINDS[k](event) for k in kinds):
        return False
    if direction and not any(c.startswith("abnormal:") and c.endswith(direction) for c in event.concepts):
        return False
    if not concepts and not terms:
        return True
    text = event.content.lower() if terms else ""
    return any(mentions_event(event, m) for m in concepts) or any(t in text for t in terms)


def _within(event: Event, start: str, end: str) -> bool:
    return (not start or event.timestamp > start) and (not end or event.timestamp <= end)


def _shift(timestamp: str, hours: float) -> str:
    return (parse_time(timestamp) + timedelta(hours=hours)).strftime("%Y-%m-%d %H:%M:%S")


def _window(plan: TimelinePlan, events: Sequence[Event], words: _Words) -> tuple[Event | None, tuple[str, str], str]:
    """(anchor event, (after this time, up to this time), the window in words); '' bounds are open."""
    now = events[-1].timestamp
    if plan.relation and plan.anchor is not None:
        anchors = [e for e in events if mentions_event(e, plan.anchor)]
        if not anchors:
            return None, ("", ""), ""
        anchor = anchors[0] if plan.occurrence == "first" else anchors[-1]
        at, hours = anchor.timestamp, plan.relation_h
        if plan.relation == "before":
            return anchor, (_shift(at, -hours), _shift(at, -1e-6)), words.relative(hours, "before", anchor)
        if not hours:
            return anchor, (at, now), words.since(anchor, now)
        return anchor, (at, _shift(at, hours)), words.relative(hours, "after", anchor)
    if plan.day is not None:
        midnight = _shift(now[:10] + " 00:00:00", 24 * plan.day)
        return None, (_shift(midnight, -1e-6), _shift(midnight, 24 - 1e-6)), words.day(midnight[:10], plan.day, now)
    if plan.window_h is not None:
        return None, (_shift(now, -plan.window_h), now), words.window(plan.window_h, now)
    return None, ("", ""), ""


def _grouped(found: list[Event], early: bool) -> tuple[list[TimelineHit], int]:
    """One hit per content, citing the event nearest the reference time; the MAX_GROUPS nearest, in time order."""
    groups: dict[tuple[str, str], list[Event]] = {}
    for event in found:
        groups.setdefault((event.sub_type, event.content), []).append(event)
    hits = [
        TimelineHit(group[0] if early else group[-1], len(group) - 1, group[0].timestamp, group[-1].timestamp)
        for group in groups.values()
    ]
    hits.sort(key=lambda h: (h.event.timestamp, h.event.event_id), reverse=not early)
    listed = sorted(hits[:MAX_GROUPS], key=lambda h: (h.event.timestamp, h.event.event_id))
    return listed, max(0, len(hits) - MAX_GROUPS)


@cache
def _kind_names() -> dict[str, tuple[str, str]]:
    """Each kind of event's first English and first Chinese word in timeline.tsv."""
    names: dict[str, tuple[str, str]] = {}
    for line in _FILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("kind\t"):
            _, kind, field = line.split("\t")
            words = field.split("|")
            chinese = [w for w in words if not w.isascii()]
            names[kind] = (words[0], chinese[0] if chinese else words[0])
    return names


class _Words:
    """The findings' sentences in the question's language."""

    def __init__(self, language: str, patient_id: str) -> None:
        self.zh = language == "zh"
        self.patient = patient_id

    def _hours(self, hours: float) -> str:
        if hours >= 168 and hours % 24 == 0:
            return f"{hours / 24:g}天" if self.zh else f"{hours / 24:g} days"
        return f"{hours:g}小时" if self.zh else f"{hours:g} hours"

    def what(self, plan: TimelinePlan, concepts: list[Mention], terms: list[str], kinds: set[str]) -> str:
        names = [m.text for m in concepts] + terms
        kind_names = [_kind_names()[k][1 if self.zh else 0] for k in sorted(kinds)]
        if plan.direction:
            arrow = {"↓": ("low", "偏低"), "↑": ("high", "偏高"), "!": ("abnormal", "异常")}[plan.direction]
            kind_names = [f"{k} ({arrow[1 if self.zh else 0]})" for k in kind_names or ["labs"]]
        named = names or kind_names or (["事件"] if self.zh else ["events"])
        if names and kind_names:
            named = [f"{n} ({', '.join(kind_names)})" for n in names]
        return "、".join(named) if self.zh else ", ".join(named)

    def window(self, hours: float, now: str) -> str:
        if self.zh:
            return f"截至记录中最后一个事件（{now[:16]}）的{self._hours(hours)}内"
        return f"in the {self._hours(hours)} up to {now[:16]} (the record's latest event)"

    def day(self, date: str, offset: int, now: str) -> str:
        if self.zh:
            return f"{date}（{'记录最后一个事件当天' if offset == 0 else '记录最后一个事件的前一天'}）"
        return f"on {date} (the {'day of' if offset == 0 else 'day before'} the record's latest event, {now[:16]})"

    def relative(self, hours: float, relation: str, anchor: Event) -> str:
        if self.zh:
            return f"{anchor.content}（{anchor.timestamp[:16]}）{'之前' if relation == 'before' else '之后'}{self._hours(hours)}内"
        return f"in the {self._hours(hours)} {relation} {anchor.content} ({anchor.timestamp[:16]})"

    def since(self, anchor: Event, now: str) -> str:
        if self.zh:
            return f"{anchor.content}（{anchor.timestamp[:16]}）以来至记录中最后一个事件（{now[:16]}）"
        return f"since {anchor.content} ({anchor.timestamp[:16]}) up to {now[:16]} (the record's latest event)"

    def lead(self, what: str, scope: str, plan: TimelinePlan) -> str:
        first = plan.occurrence == "first" and not plan.relation
        latest = plan.occurrence == "latest" and not plan.relation
        if self.zh:
            which = "第一次" if first else ("最近一次" if latest else "")
            return f"患者 {self.patient} 的记录中{scope}{'的' if scope else ''}{which}{what}："
        which = "The first " if first else ("The latest " if latest else "")
        subject = f"{which}{what}" if which else what[:1].upper() + what[1:]
        return f"{subject} in the record of patient {self.patient}{', ' + scope if scope else ''}:"

    def silent(self, what: str, scope: str) -> str:
        if self.zh:
            return f"患者 {self.patient} 的记录没有提到：记录中{scope}没有{what}。"
        return f"The record of patient {self.patient} does not say: it shows no {what}{' ' + scope if scope else ''}."

    def no_anchor(self, plan: TimelinePlan) -> str:
        name = plan.anchor.text if plan.anchor else ""
        if self.zh:
            return f"患者 {self.patient} 的记录没有提到：记录中没有{name}，无法查找其{'之前' if plan.relation == 'before' else '之后'}的事件。"
        if plan.relation == "since":
            return f"The record of patient {self.patient} does not say: it shows no {name}, so nothing since it can be found."
        return f"The record of patient {self.patient} does not say: it shows no {name}, so nothing {plan.relation} it can be found."

    def never(self, terms: Sequence[str]) -> str:
        named = "、".join(terms) if self.zh else ", ".join(terms)
        if self.zh:
            return f"患者 {self.patient} 的记录没有提到：记录中没有{named}。"
        return f"The record of patient {self.patient} does not say: it never mentions {named}."

    def silent_record(self) -> str:
        return f"患者 {self.patient} 的记录中没有事件。" if self.zh else f"The record of patient {self.patient} holds no events."
