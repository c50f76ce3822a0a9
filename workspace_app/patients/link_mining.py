"""Treatment and response links learned from the record (issue 28): on a training split of patients, which
abnormal-lab findings are followed within a window by which medications, drug classes, orders and re-checks more
often than chance, written as rules with their provenance (`mined_rules.yaml`, beside the hand rules).

Anchors are the distinct times at which a patient had lab results drawn; an anchor carries the abnormal findings
('abnormal:potassium↓') of its results. For a finding F and a treatment key T (a medication or order as the record
names it, 'med:phytonadione', 'order:blood bank / red cell product order'; a lexicon drug class; a lab re-checked):
  support     anchors with F followed by T within `window_h` hours (0 <= delay <= window);
  confidence  support / anchors with F;
  base rate   the share of all anchors (every lab draw time of the training patients: the comparable windows)
              followed by T within the window;
  lift        confidence / base rate, and `lift_lower`, the same with the Wilson lower bound of the confidence (so
              3 of 3 does not outrank 40 of 60);
  delay       the median hours from F to the first T after it.
A link becomes a rule when its support, its number of distinct patients and its lower lift pass the thresholds; at
most `max_per_finding` per finding, strongest first. The split is by patient id (`split_patients`): deterministic,
so the test patients of a benchmark never taught the miner.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from workspace_app.models.events import Event, epoch_seconds
from workspace_app.patients.concepts import graded_findings, lab_concepts, lab_value, record_keys, text_concepts
from workspace_app.patients.lexicon import Lexicon, load_lexicon
from workspace_app.patients.mimic import MimicReader, read_rows

MINED_RULES = Path(__file__).with_name("mined_rules.yaml")
SPLIT_RULE = "test if int(sha256(patient id)[:8], 16) % 100 < {percent}, training otherwise"
_Z = 1.645  # one-sided 95 % for the Wilson lower bound
# Treatment key kind -> the rules-file key that names it (rules.py reads them back).
THEN_KEYS = {"med": "then_any_medication", "order": "then_any_order", "class": "then_any_drug_class",
             "lab": "then_any_lab"}


@dataclass(frozen=True)
class MiningOptions:
    """Thresholds of the miner (the CLI's options)."""

    window_h: float = 24.0
    min_support: int = 5
    min_patients: int = 5
    min_lift: float = 1.2
    min_patient_lift: float = 1.1
    max_per_finding: int = 6
    test_percent: int = 40


def split_patients(ids: Iterable[str], test_percent: int = 40) -> tuple[list[str], list[str]]:
    """(training, test) patient ids, by a hash of each id: the same split on every machine and run."""
    train: list[str] = []
    test: list[str] = []
    for patient in sorted(set(ids)):
        bucket = int(hashlib.sha256(patient.encode()).hexdigest()[:8], 16) % 100
        (test if bucket < test_percent else train).append(patient)
    return train, test


@dataclass
class Timeline:
    """One patient's lab draw times (hours, sorted), the abnormal findings at each, and when each key occurred."""

    patient_id: str
    anchors: NDArray[np.float64]
    findings: list[frozenset[str]]
    keys: dict[str, NDArray[np.float64]]


def treatment_keys(event: Event, lexicon: Lexicon) -> set[str]:
    """The keys an event can be a treatment or re-check by: record names, drug classes, a lab item."""
    if event.event_type == "lab":
        return {c for c in lab_concepts(event.content, lexicon) if c.startswith("lab:")}
    keys = record_keys(event)
    if keys and event.source_table != "poe":
        keys |= {c for c in text_concepts(event.content, lexicon) if c.startswith("class:")}
    return keys


def learn_grades(events: Iterable[Event], lexicon: Lexicon, min_values: int = 20) -> dict[str, list[float]]:
    """Per abnormal finding ('hemoglobin↓'), the cut-points of its worse half and worst quarter among the results
    with that finding (values at or beyond them get '↓↓', '↓↓↓'); findings with fewer results are not graded."""
    values: dict[str, list[float]] = defaultdict(list)
    for event in events:
        value = lab_value(event.content)
        if value is None:
            continue
        for concept in lab_concepts(event.content, lexicon):
            if concept.startswith("abnormal:") and concept[-1] in "↑↓":
                values[concept.removeprefix("abnormal:")].append(value)
    grades = {}
    for finding, found in sorted(values.items()):
        if len(found) >= min_values:
            quantiles = (0.5, 0.25) if finding.endswith("↓") else (0.5, 0.75)
            grades[finding] = [round(float(np.quantile(found, q)), 4) for q in quantiles]
    return grades


def build_timeline(patient_id: str, events: Iterable[Event], grades: Mapping[str, Sequence[float]],
                   lexicon: Lexicon | None = None) -> Timeline:
    """The timeline of one patient's events (any order), lab findings graded by `grades`."""
    lexicon = lexicon or load_lexicon()
    draws: dict[float, set[str]] = defaultdict(set)
    keys: dict[str, list[float]] = defaultdict(list)
    for event in events:
        if not event.timestamp:
            continue
        hour = epoch_seconds(event.timestamp) / 3600
        if event.source_table == "labevents":
            found = lab_concepts(event.content, lexicon)
            abnormal = {c for c in found if c.startswith("abnormal:") and c[-1] in "↑↓"}
            draws[hour] |= abnormal | graded_findings(abnormal, lab_value(event.content), grades)
        for key in treatment_keys(event, lexicon):
            keys[key].append(hour)
    times = sorted(draws)
    return Timeline(patient_id, np.array(times, dtype=np.float64), [frozenset(draws[t]) for t in times],
                    {k: np.array(sorted(v), dtype=np.float64) for k, v in keys.items()})


def read_timelines(folder: Path, patients: Sequence[str]) -> tuple[list[Timeline], dict[str, list[float]]]:
    """The timelines of some patients of a MIMIC-IV folder (labs, prescriptions, administrations, infusions,
    orders), and the grades of lab findings learned from these patients' results."""
    reader = MimicReader(folder, set(patients))
    by_patient: dict[str, list[Event]] = defaultdict(list)
    for read in (reader.labs, reader.prescriptions, reader.administrations, reader.infusions, reader.orders):
        for event in read():
            by_patient[event.patient_id].append(event)
    lexicon = load_lexicon()
    grades = learn_grades((e for events in by_patient.values() for e in events if e.event_type == "lab"), lexicon)
    return [build_timeline(p, by_patient[p], grades, lexicon) for p in sorted(by_patient)], grades


@dataclass(frozen=True)
class Link:
    """A finding followed by a treatment key more often than chance, with the figures that say so."""

    finding: str
    treatment: str
    support: int
    occurrences: int
    patients: int
    base_rate: float
    lift: float
    lift_lower: float
    patient_lift: float
    median_delay_h: float


@dataclass
class _Counts:
    anchors: int = 0
    followed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    occurrences: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    support: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    patients: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    expected: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))


def lab_of(finding: str) -> str:
    """'abnormal:potassium↓↓' -> 'lab:potassium'."""
    return "lab:" + finding.split(":", 1)[1].rstrip("↑↓")


def _follows(timeline: Timeline, key: str, window_h: float) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Per anchor: whether the key occurs within the window after it, and the delay to its first occurrence (a
    lab re-check strictly after: the anchor's own draw is not its re-check)."""
    times = timeline.keys[key]
    after = np.searchsorted(times, timeline.anchors, side="right" if key.startswith("lab:") else "left")
    delay = times[np.minimum(after, len(times) - 1)] - timeline.anchors
    return (after < len(times)) & (delay <= window_h), delay


def _findings(timeline: Timeline) -> tuple[list[str], NDArray[np.int32]]:
    """The patient's findings, and whether each (row) is at each anchor (column)."""
    names = sorted({f for found in timeline.findings for f in found})
    rows = {name: row for row, name in enumerate(names)}
    has = np.zeros((len(names), len(timeline.anchors)), dtype=np.int32)
    for column, found in enumerate(timeline.findings):
        has[[rows[name] for name in found], column] = 1
    return names, has


def _count(timelines: Sequence[Timeline], window_h: float) -> _Counts:
    """Support, distinct patients and the within-patient expected support of every (finding, key) pair; a lab key
    counts only as the re-check of its own finding's lab."""
    counts = _Counts()
    for timeline in timelines:
        if not len(timeline.anchors):
            continue
        counts.anchors += len(timeline.anchors)
        names, has = _findings(timeline)
        totals = has.sum(axis=1)
        for name, total in zip(names, totals, strict=True):
            counts.occurrences[name] += int(total)
        for key in timeline.keys:
            followed = _follows(timeline, key, window_h)[0].astype(np.int32)
            counts.followed[key] += int(followed.sum())
            rate = float(followed.mean())
            for name, together, total in zip(names, has @ followed, totals, strict=True):
                if key.startswith("lab:") and lab_of(name) != key:
                    continue
                if together:
                    counts.support[(name, key)] += int(together)
                    counts.patients[(name, key)] += 1
                if rate:
                    counts.expected[(name, key)] += rate * int(total)
    return counts


def _wilson_lower(successes: int, trials: int) -> float:
    if trials == 0:
        return 0.0
    p = successes / trials
    centre = p + _Z * _Z / (2 * trials)
    spread = _Z * math.sqrt(p * (1 - p) / trials + _Z * _Z / (4 * trials * trials))
    return max(0.0, (centre - spread) / (1 + _Z * _Z / trials))


def _median_delay(timelines: Sequence[Timeline], finding: str, key: str, window_h: float) -> float:
    delays: list[float] = []
    for timeline in timelines:
        if key not in timeline.keys or not len(timeline.anchors):
            continue
        followed, delay = _follows(timeline, key, window_h)
        has = np.array([finding in found for found in timeline.findings], dtype=bool)
        delays.extend(delay[followed & has].tolist())
    return round(float(np.median(delays)), 1) if delays else 0.0


def mine_links(timelines: Sequence[Timeline], options: MiningOptions = MiningOptions()) -> list[Link]:
    """The links passing the thresholds, per finding strongest (lower lift) first, findings in name order."""
    counts = _count(timelines, options.window_h)
    by_finding: dict[str, list[Link]] = defaultdict(list)
    for (finding, key), support in counts.support.items():
        patients = counts.patients[(finding, key)]
        if support < options.min_support or patients < options.min_patients:
            continue
        occurrences = counts.occurrences[finding]
        base = counts.followed[key] / counts.anchors
        lift_lower = _wilson_lower(support, occurrences) / base
        patient_lift = support / counts.expected[(finding, key)]
        if lift_lower < options.min_lift or patient_lift < options.min_patient_lift:
            continue
        by_finding[finding].append(Link(
            finding, key, support, occurrences, patients, round(base, 4), round(support / occurrences / base, 2),
            round(lift_lower, 2), round(patient_lift, 2), 0.0,
        ))
    links = []
    for finding in sorted(by_finding):
        ranked = sorted(by_finding[finding], key=lambda link: (-link.lift_lower, link.treatment))
        for link in ranked[: options.max_per_finding]:
            delay = _median_delay(timelines, finding, link.treatment, options.window_h)
            links.append(Link(**{**asdict(link), "median_delay_h": delay}))
    return links


def link_rule(link: Link, window_h: float) -> dict[str, Any]:
    """A link as a rule of the rules file, its figures under `evidence`."""
    kind, name = link.treatment.split(":", 1)
    finding = link.finding.split(":", 1)[1]
    return {
        "name": f"mined: {finding} -> {link.treatment}",
        "if_any_abnormal": [finding],
        THEN_KEYS[kind]: [name],
        "window_hours": window_h,
        "weight": round(max(0.0, 1 - 1 / link.lift_lower), 3),
        "evidence": {"support": link.support, "occurrences": link.occurrences, "patients": link.patients,
                     "base_rate": link.base_rate, "lift": link.lift, "lift_lower": link.lift_lower,
                     "patient_lift": link.patient_lift, "median_delay_h": link.median_delay_h},
    }


def write_rules(path: Path, links: Sequence[Link], grades: Mapping[str, Sequence[float]], options: MiningOptions,
                provenance: Mapping[str, Any]) -> None:
    """Write the mined rules file: a header, the provenance (command, date, split, thresholds), the grades of
    findings, one rule a line."""
    header = (
        "# GENERATED by the link miner (workspace_app/patients/link_mining.py): do not edit by hand, re-run the\n"
        "# command under provenance. A rule of the rules file (the shipped rules.yaml or the user's) with the same\n"
        "# name or the same if/then replaces a mined one. Format: rules.yaml, plus each rule's evidence (support: times\n"
        "# the treatment followed the finding within the window, of occurrences; lift: confidence / the base rate\n"
        "# after any lab draw; lift_lower: with the Wilson lower bound of the confidence; patient_lift: support / the\n"
        "# support expected from each patient's own base rate) and grades (cut-points of ↓↓ / ↓↓↓, ↑↑ / ↑↑↑).\n"
    )
    head = {"provenance": {**provenance, "thresholds": asdict(options)}}
    lines = [header + yaml.safe_dump(head, allow_unicode=True, sort_keys=False, width=10_000).rstrip(), "grades:"]
    for finding, cuts in grades.items():
        lines.append(f"  {_flow(finding)}: {_flow(list(cuts))}")
    lines.append("rules:")
    for link in links:
        lines.append(f"  - {_flow(link_rule(link, options.window_h))}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _flow(value: Any) -> str:
    """A value as one line of YAML (flow style)."""
    text: str = yaml.safe_dump([value], allow_unicode=True, sort_keys=False, default_flow_style=True, width=10_000)
    return text.strip()[1:-1]


def mine_folder(folder: Path, options: MiningOptions = MiningOptions()) -> tuple[list[Link], dict[str, list[float]], dict[str, Any]]:
    """Mine the training split of a MIMIC-IV folder: (links, grades, provenance without the command)."""
    ids = [row["subject_id"] for _, row in read_rows(folder / "hosp" / "patients.csv.gz")]
    train, test = split_patients(ids, options.test_percent)
    timelines, grades = read_timelines(folder, train)
    links = mine_links(timelines, options)
    provenance = {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": folder.name,
        "split": {"rule": SPLIT_RULE.format(percent=options.test_percent), "training_patients": len(train),
                  "test_patients": len(test)},
        "anchors": int(sum(len(t.anchors) for t in timelines)),
        "links": len(links),
    }
    return links, grades, provenance
