"""The patient level of a cross-level answer: which of a patient's events a question is about.

An event is a candidate when it shares a concept with the question (a drug class, a drug, a disease, a lab; seed
004's concepts found at import); candidates are scored by the weights of the shared concepts plus their embedding
similarity to the question. Repeats of one content (the same order given daily) are grouped, the first kept with
a count and the last time. Each question concept gets its best event first, then the best of the rest fill up.

A question about the patient's timeline is answered from what the record's event tools found (`TimelineFindings`):
the lead, then each event found with its time and repeats, cited; nothing found is a refusal that says what the
record does not show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workspace_app.answer.phrases import disclaimer_text
from workspace_app.models.answers import Answer, Citation
from workspace_app.models.events import Event, TimelineFindings, TimelineHit

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


def event_citation(n: int, event: Event, patient_id: str, score: float) -> Citation:
    """A patient-level citation of one event: its content quoted, its type, time and source row as the section."""
    return Citation(
        n=n, chunk_id=event.event_id, document=f"Patient {patient_id}", document_id="", page_start=0, page_end=0,
        section=f"{event.event_type}/{event.sub_type}, {event.timestamp} ({event.source_table} row {event.source_row})",
        quote=event.content, rects=(), chunk_rects=(), score=round(score, 4), level="patient",
        patient_id=patient_id, event_id=event.event_id,
    )


def hit_sentence(hit: TimelineHit, language: str) -> str:
    """'2150-03-02 14:00: Medication administration: Heparin: Administered (and 3 more times from ... to ...)'."""
    text = f"{hit.event.timestamp[:16]}: {hit.event.content}"
    if hit.repeats:
        span = (hit.first_time[:16], hit.last_time[:16])
        text += (f"（另有 {hit.repeats} 次，{span[0]} 至 {span[1]}）" if language == "zh"
                 else f" (and {hit.repeats} more time{'s' if hit.repeats > 1 else ''} from {span[0]} to {span[1]})")
    return text


def timeline_answer(question: str, language: str, patient_id: str, findings: TimelineFindings) -> Answer:
    """The answer to a question about the patient's timeline: the lead, the anchor and each event found, cited;
    a refusal saying what the record does not show when nothing was found."""
    lines, citations = [findings.lead], []
    if findings.hits and findings.anchor is not None:
        citations.append(event_citation(1, findings.anchor, patient_id, 1.0))
        anchor = f"{findings.anchor.timestamp[:16]}: {findings.anchor.content}"
        lines.append(f"{'参照事件' if language == 'zh' else 'Relative to'} {anchor} [1]")
    for hit in findings.hits:
        citations.append(event_citation(len(citations) + 1, hit.event, patient_id, 1.0))
        lines.append(f"{hit_sentence(hit, language)} [{len(citations)}]")
    if findings.more:
        lines.append(f"（另有 {findings.more} 项未列出）" if language == "zh" else f"({findings.more} more not listed.)")
    found = bool(findings.hits)
    return Answer(
        question=question, text="\n\n".join(lines), citations=citations, grounded=True, refused=not found,
        confidence=1.0 if found else 0.0, language=language, disclaimer=disclaimer_text(language),
        answerer="extractive", support="confident" if found else "none",
    )
