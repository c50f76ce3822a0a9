"""Similar patients (seed 004's case memory): the patients whose records are most like one patient's, by what
their records name (the concept profile) and in which order it came (the event sequence), each with the reasons in
words.

Profile: every concept the patient's events carry (diagnoses, drugs and their classes, abnormal findings, coded
items), weighed by how many events name it (1 + log) and by how rare it is among the imported patients (inverse
document frequency, log((N + 1) / n): a concept every patient has tells little); two profiles compare by cosine. Sequence: of the
most telling concepts both records name, the share of pairs whose first appearances come in the same order
("atrial fibrillation before warfarin" in both). The score mixes the two (`sequence_weight`, 0.1 by default:
`python -m bench.similar_patients` finds patients with the same diagnoses, hidden from the comparison, as well at
0 and 0.1 and less well from 0.2 on; the order is otherwise a reason shown).
SEE: Aamodt & Plaza, "Case-based reasoning: foundational issues" (1994), retrieve step; Salton & Buckley (1988).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from workspace_app.models.events import Event, Patient, SimilarPatient, epoch_seconds

SEQUENCE_CONCEPTS = 12  # shared concepts whose order is compared (the most telling ones)
MIN_PAIRS = 3  # fewer ordered pairs than this say nothing about the sequence
NAMED_IN_REASONS = 5
# Of concepts as rare, the reasons name the specific ones first (a diagnosis, a finding, a drug before its class).
_KIND_ORDER = {kind: i for i, kind in enumerate(("disease", "abnormal", "drug", "procedure", "icd", "class", "lab"))}


@dataclass(frozen=True)
class Profile:
    """What one patient's record names: events per concept, and when each concept first appears."""

    patient: Patient
    counts: Mapping[str, int]
    first_seen: Mapping[str, float]


def profile_of(patient: Patient, events: Iterable[Event]) -> Profile:
    """A patient's concept profile from their events."""
    counts: Counter[str] = Counter()
    first: dict[str, float] = {}
    for event in events:
        when = _seconds(event.timestamp)
        for concept in set(event.concepts):
            counts[concept] += 1
            if when is not None and (concept not in first or when < first[concept]):
                first[concept] = when
    return Profile(patient, dict(counts), first)


class PatientIndex:
    """Every patient's profile as a rarity-weighted unit vector (one sparse matrix), built once for a set of
    profiles and asked for any of them: the cosine against all is one product; the order of concepts is then
    compared for the best by profile (`reranked` of them at least, Settings.patients.similar_reranked)."""

    def __init__(self, profiles: Sequence[Profile], reranked: int = 20) -> None:
        from scipy.sparse import csr_matrix

        self.reranked = reranked
        self.profiles = {p.patient.patient_id: p for p in profiles}
        self.ids = list(self.profiles)
        self.idf = _idf(profiles)
        columns = {c: i for i, c in enumerate(self.idf)}
        rows, cols, values = [], [], []
        for r, profile in enumerate(profiles):
            weights = _weights(profile, self.idf)
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            for concept, w in weights.items():
                rows.append(r)
                cols.append(columns[concept])
                values.append(w / norm)
        self._matrix = csr_matrix((values, (rows, cols)), shape=(len(profiles), len(columns)))

    def similar(
        self, patient_id: str, top_k: int, sequence_weight: float,
        name: Callable[[str], str] = lambda concept: concept.split(":", 1)[-1],
    ) -> list[SimilarPatient]:
        """The `top_k` patients most like `patient_id` (itself left out), best first; those sharing no concept are
        left out. Raises KeyError for a patient not in the index."""
        target = self.profiles[patient_id]
        row = self.ids.index(patient_id)
        cosines = (self._matrix @ self._matrix[row].T).toarray().ravel()
        order = [i for i in cosines.argsort()[::-1] if i != row and cosines[i] > 0]
        found = []
        for i in order[: max(self.reranked, 4 * top_k)]:
            other = self.profiles[self.ids[i]]
            shared = sorted(set(target.counts) & set(other.counts),
                            key=lambda c: (-self.idf[c], _KIND_ORDER.get(c.split(":")[0], 9), c))
            sequence, same, pairs = _order_agreement(target, other, shared[:SEQUENCE_CONCEPTS])
            profile = float(cosines[i])
            score = (1 - sequence_weight) * profile + sequence_weight * (sequence or 0.0)
            names = tuple(dict.fromkeys(name(c) for c in shared))
            found.append(SimilarPatient(
                other.patient, score, profile, sequence, names,
                _reasons(target.patient, other.patient, names, same, pairs),
            ))
        found.sort(key=lambda s: (-s.score, s.patient.patient_id))
        return found[:top_k]


def _idf(profiles: Sequence[Profile]) -> dict[str, float]:
    """Concept -> log((N + 1) / patients naming it): small for a concept every patient's record names."""
    df: Counter[str] = Counter(c for p in profiles for c in p.counts)
    return {c: math.log((len(profiles) + 1) / n) for c, n in df.items()}


def _weights(profile: Profile, idf: Mapping[str, float]) -> dict[str, float]:
    return {c: (1 + math.log(n)) * idf[c] for c, n in profile.counts.items()}


def _order_agreement(a: Profile, b: Profile, concepts: Sequence[str]) -> tuple[float | None, int, int]:
    """(share of pairs in the same order, pairs in the same order, pairs compared) over concepts both records date;
    a pair whose concepts first appear together in either record is not compared."""
    dated = [c for c in concepts if c in a.first_seen and c in b.first_seen]
    same = pairs = 0
    for x, y in combinations(dated, 2):
        da, db = a.first_seen[x] - a.first_seen[y], b.first_seen[x] - b.first_seen[y]
        if da and db:
            pairs += 1
            same += (da > 0) == (db > 0)
    return (same / pairs if pairs >= MIN_PAIRS else None), same, pairs


def _reasons(mine: Patient, theirs: Patient, shared: Sequence[str], same: int, pairs: int) -> tuple[str, ...]:
    named = ", ".join(shared[:NAMED_IN_REASONS]) + (f" and {len(shared) - NAMED_IN_REASONS} more" if len(shared) > NAMED_IN_REASONS else "")
    reasons = [f"both records name {named} (the rarest first)"]
    if pairs >= MIN_PAIRS:
        reasons.append(f"{same} of {pairs} pairs of these came in the same order")
    if mine.gender and mine.gender == theirs.gender:
        reasons.append(f"same sex ({theirs.gender})")
    if mine.age is not None and theirs.age is not None:
        reasons.append(f"aged {theirs.age} (this patient {mine.age})")
    return tuple(reasons)


def _seconds(timestamp: str) -> float | None:
    try:
        return epoch_seconds(timestamp)
    except ValueError:
        return None
