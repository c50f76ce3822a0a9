"""Whether a patient's care follows the guideline passages of a cross-level answer (issue 28 item 3).

Two checks, each stated in one sentence that cites both levels:

- a target or threshold a passage states (targets.py: 'INR 2.0–3.0', 'LDL-C <70 mg/dL') against the patient's values
  of that measure: the latest, with its date, within / above / below, and how many values of the latest stay were
  within it ('Latest INR 3.4 on 2150-03-02 [2] is above the target range 2.0–3.0 [1]; …');
- a passage whose population (populations.py: a condition, a sex, an age) the patient's record does not meet is not
  applied: it is set apart with whom it is for and why the patient is not among them.

Which measures: those the question names or brings up (measures.tsv's last column: anticoagulation -> INR), of
which the record has values. Their targets are read from the guideline answer's passages first, else from the
passages the guidelines give to a question about that target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workspace_app.models.answers import Citation
from workspace_app.models.events import ConceptName, Event, Patient
from workspace_app.patients.populations import Population, is_diagnosis, outside_reasons, read_population
from workspace_app.patients.targets import (
    Measure,
    Reading,
    Target,
    bound_text,
    load_grammar,
    measure_readings,
    read_targets,
)

MAX_MEASURES = 2


@dataclass(frozen=True)
class Exclusion:
    """A guideline passage not applied to the patient: whom it is for and why the patient is not."""

    citation: Citation
    population: Population
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """A patient's values of a measure against a target a passage states."""

    measure: Measure
    target: Target
    passage: Citation
    readings: tuple[Reading, ...]  # of the latest reading's stay, in time order

    @property
    def latest(self) -> Reading:
        """The most recent value."""
        return self.readings[-1]


def exclusions(
    citations: Sequence[Citation], patient: Patient, events: Sequence[Event], language: str
) -> dict[str, Exclusion]:
    """Chunk id + quote -> why the passage is not for the patient, for each passage whose population the
    record does not meet."""
    diagnoses = [e for e in events if is_diagnosis(e)]
    found: dict[str, Exclusion] = {}
    for citation in citations:
        population = read_population(citation.quote)
        if population is None:
            continue
        reasons = outside_reasons(population, patient, diagnoses, language)
        if reasons:
            found[passage_key(citation)] = Exclusion(citation, population, tuple(reasons))
    return found


def passage_key(citation: Citation) -> str:
    """One guideline passage (a chunk's sentence), whatever number it is cited under."""
    return f"{citation.chunk_id}\n{citation.quote}"


def measures_asked(
    question: str, concepts: Sequence[ConceptName], events: Sequence[Event]
) -> list[tuple[Measure, list[Reading]]]:
    """The measures the question names (by measures.tsv's names or a lab concept) or brings up (anticoagulation ->
    INR, for a patient whose record names anticoagulants), with the record's values of each (those without values left out), named ones first, in the question's
    order; at most MAX_MEASURES."""
    grammar = load_grammar()
    keys = [c.key for c in concepts]
    in_record = {c for e in events for c in e.concepts}
    mentioned: dict[str, int] = {}
    for match in grammar.mention.finditer(question.lower()):
        mentioned.setdefault(grammar.names[match.group(0)], match.start())
    found = []
    for measure in grammar.measures.values():
        named = [i for i, k in enumerate(keys) if k.removeprefix("lab:") in measure.labs]
        if measure.key in mentioned:
            named.append(mentioned[measure.key])
        # brought up only for a patient whose record has it too: no INR target for a patient never anticoagulated
        brought = [i for i, k in enumerate(keys) if k in measure.brought_up_by and k in in_record]
        if not named and not brought:
            continue
        readings = measure_readings(measure, events)
        if readings:
            found.append((min(named) - 1000 if named else min(brought), measure, readings))
    found.sort(key=lambda f: f[0])
    return [(measure, readings) for _, measure, readings in found[:MAX_MEASURES]]


def stated_target(measure: Measure, citations: Sequence[Citation], excluded: dict[str, Exclusion]) -> tuple[Target, Citation] | None:
    """The first target (a goal before a threshold) of the measure a passage states, among passages the
    patient is not excluded from."""
    found = [(t, c) for c in citations if passage_key(c) not in excluded
             for t in read_targets(c.quote) if t.measure == measure.key]
    found.sort(key=lambda pair: not pair[0].is_target)
    return found[0] if found else None


def states_target(measure: Measure, sentence: str) -> bool:
    """Whether a sentence states a target or threshold of the measure."""
    return any(t.measure == measure.key for t in read_targets(sentence))


def compare(measure: Measure, target: Target, passage: Citation, readings: Sequence[Reading]) -> Comparison:
    """The comparison over the latest value's stay (its admission; the whole record without admissions)."""
    latest = readings[-1]
    stay = [r for r in readings if r.event.admission_id == latest.event.admission_id] if latest.event.admission_id else list(readings)
    return Comparison(measure, target, passage, tuple(stay))


def target_question(measure: Measure, concepts: Sequence[ConceptName], language: str) -> str:
    """What the guidelines are asked for a measure's target: 'What is the target INR for patients with atrial
    fibrillation?' / '心房颤动患者的INR目标是多少？'."""
    disease = next((c for c in concepts if c.kind == "disease"), None)
    name = measure.name(language)
    if language == "zh":
        return f"{(disease.name_zh or disease.name) + '患者的' if disease else ''}{name}目标范围是多少？"
    return f"What is the target {name}{f' for patients with {disease.name}' if disease else ''}?"


def comparison_sentence(comparison: Comparison, patient_n: int, guideline_n: int, language: str) -> str:
    """'Latest INR 3.4 on 2150-03-02 [2] is above the target range 2.0–3.0 [1]; of the 12 INR values from
    2150-02-20 to 2150-03-02, 5 were within it, 7 above.'"""
    measure, target, latest = comparison.measure, comparison.target, comparison.latest
    unit = "" if not measure.unit else (measure.unit if measure.unit == "%" else f" {measure.unit}")
    bound, place = bound_text(target, measure, language), target.place(latest.value)
    counts = {p: sum(1 for r in comparison.readings if target.place(r.value) == p) for p in ("within", "below", "above")}
    first, last = comparison.readings[0].event.timestamp[:10], latest.event.timestamp[:10]
    name, value = measure.name(language), f"{latest.value:g}{unit}"
    if language == "zh":
        kind = "目标" if target.is_target else "阈值"
        where = {"within": f"在{kind}{bound}范围内" if target.comparator == "range" else f"达到{kind}{bound}",
                 "below": f"低于{kind}{bound}", "above": f"高于{kind}{bound}"}[place]
        met = "在范围内" if target.comparator == "range" else "达到"
        spread = "，".join(f"{n}次{ {'within': met, 'below': '偏低', 'above': '偏高'}[p] }".replace(" ", "")
                          for p, n in counts.items() if n)
        return (f"最近一次{name} {value}（{last}）[{patient_n}]{where} [{guideline_n}]；"
                f"{first}至{last}共{len(comparison.readings)}次{name}：{spread}。")
    kind = "target" if target.is_target else "threshold"
    if target.comparator == "range":
        where = f"is {place} the {kind} range {bound}"
    else:
        where = f"meets the {kind} ({bound})" if place == "within" else f"is {place} the {kind} ({bound})"
    met = "within" if target.comparator == "range" else "meeting it"
    spread = ", ".join(f"{n} {met if p == 'within' else p}" for p, n in counts.items() if n)
    return (f"Latest {name} {value} on {last} [{patient_n}] {where} [{guideline_n}]; of the "
            f"{len(comparison.readings)} {name} values from {first} to {last}: {spread}.")


def exclusion_sentence(exclusion: Exclusion, guideline_n: int, patient_id: str, language: str) -> str:
    """'[4] is for patients with HCM and persistent or paroxysmal atrial fibrillation; the record of patient
    10025463 has no diagnosis of hypertrophic cardiomyopathy, so it is not applied to this patient.'"""
    reasons = ("；" if language == "zh" else "; ").join(exclusion.reasons)
    if language == "zh":
        return f"[{guideline_n}] 针对“{exclusion.population.phrase}”；患者 {patient_id}：{reasons}，因此不适用于该患者。"
    return (f"[{guideline_n}] is for {exclusion.population.phrase}; for patient {patient_id}, {reasons}, so it is not "
            "applied to this patient.")
