"""The patient level of a cross-level answer: which of a patient's events a question is about.

An event is a candidate when it shares a concept with the question (a drug class, a drug, a disease, a lab; seed
004's concepts found at import); candidates are scored by the weights of the shared concepts plus their embedding
similarity to the question. Repeats of one content (the same order given daily) are grouped, the first kept with
a count and the last time. Each question concept gets its best event first, then the best of the rest fill up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workspace_app.models.events import Event

# Shared concepts count by kind: a drug class or a disease says more about a question than a lab name.
KIND_WEIGHTS = {"class": 2.0, "disease": 2.0, "drug": 1.5, "abnormal": 1.5, "lab": 1.0}
MAX_EVENTS = 6
PER_KIND = 2  # events of one sub-type (prescription, administration...) for one concept


@dataclass(frozen=True)
class PatientEvidence:
    """An event chosen for the answer, with the concepts it shares with the question and its repeats."""

    event: Event
    shared: tuple[str, ...]
    score: float
    repeats: int = 0
    last_time: str = ""


def score_events(
    events: Sequence[Event], concepts: Sequence[str], similarity: Mapping[str, float]
) -> list[PatientEvidence]:
    """The events sharing a concept with the question, repeats grouped, best first."""
    wanted = set(concepts)
    groups: dict[tuple[str, str], list[Event]] = {}
    for event in events:
        if wanted & set(event.concepts):
            groups.setdefault((event.sub_type, event.content), []).append(event)
    scored = []
    for group in groups.values():
        first = group[0]
        shared = tuple(c for c in concepts if c in first.concepts)
        weight = sum(KIND_WEIGHTS.get(c.split(":", 1)[0], 1.0) for c in shared)
        best_sim = max(similarity.get(e.event_id, 0.0) for e in group)
        last = group[-1].timestamp if len(group) > 1 else ""
        scored.append(PatientEvidence(first, shared, weight + best_sim, len(group) - 1, last))
    return sorted(scored, key=lambda p: (-p.score, p.event.timestamp))


def choose_events(scored: Sequence[PatientEvidence], concepts: Sequence[str], limit: int = MAX_EVENTS) -> list[PatientEvidence]:
    """Each concept's best event first (in the question's order), then the best of the rest; in time order."""
    chosen: list[PatientEvidence] = []
    for concept in concepts:
        best = next((p for p in scored if concept in p.shared and p not in chosen), None)
        if best is not None and len(chosen) < limit:
            chosen.append(best)
    for candidate in scored:
        if len(chosen) >= limit:
            break
        same = sum(1 for p in chosen if p.shared == candidate.shared and p.event.sub_type == candidate.event.sub_type)
        if candidate not in chosen and same < PER_KIND:
            chosen.append(candidate)
    return sorted(chosen, key=lambda p: (p.event.timestamp, p.event.event_id))


def event_sentence(evidence: PatientEvidence, language: str) -> str:
    """'2150-03-02 14:00: Prescription: Warfarin 5 mg PO (main) (and 6 more times until 2150-03-08 09:00)'."""
    text = f"{evidence.event.timestamp[:16]}: {evidence.event.content}"
    if evidence.repeats:
        until = evidence.last_time[:16]
        text += (f"（另有 {evidence.repeats} 次，至 {until}）" if language == "zh"
                 else f" (and {evidence.repeats} more time{'s' if evidence.repeats > 1 else ''} until {until})")
    return text
