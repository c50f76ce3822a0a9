"""Similar patients (issue 28, deliverable 4) on the MIMIC-IV demo's 100 patients: does a patient's list of similar
patients find others with the same diagnoses, when diagnoses are hidden from the comparison? And how long it takes.

    python -m bench.similar_patients

Every demo patient's events are read and prepared as the importer does (times, concepts), without a data dir or
embeddings (the comparison reads concepts only). Then, for every patient with a coded diagnosis:
- `diagnosis agreement@5`: with the profiles built from everything but the diagnoses (drugs and their classes,
  abnormal findings, labs, coded procedures, orders: coded diagnoses and disease words left out), the share of the
  5 most similar patients who share at least one ICD category (first 3 characters) with the patient; against
  `chance@5`, the same share over all the other patients (what 5 picked at random would score on average).
  Diagnoses never take part in the comparison here, so the figure says whether the record's care and findings
  find patients with the same conditions (ICD-9 and ICD-10 categories are compared as written: a 9 and a 10
  code of one condition do not match, which lowers both figures alike).
- `jaccard@5`: the mean Jaccard of the ICD categories of the patient and each of the 5 (a stricter measure);
- each at several sequence (order) weights, to show what the order adds.
Latency: `similar_patients` over every patient with all concepts (profiles built once, as the service keeps them).
Writes bench/results/similar_patients.json.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from bench.common import DEMO_DIR, RESULTS_DIR, compact_json, git_info, log, machine_info, now_iso, percentile

TOP_K = 5


def read_demo() -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """(patients by id, their prepared events by patient id)."""
    from workspace_app.patients.lexicon import load_lexicon
    from workspace_app.patients.mimic import MimicReader
    from workspace_app.patients.service import _prepared

    reader = MimicReader(DEMO_DIR, None)
    patients = {p.patient_id: p for p in reader.read_patients()}
    lexicon = load_lexicon()
    events: dict[str, list[Any]] = defaultdict(list)
    _, admission_events = reader.read_admissions()
    tables = [("admissions", lambda: admission_events), *reader.event_tables()]
    for table, read in tables:
        for record in read():
            if getattr(record, "timestamp", ""):
                events[record.patient_id].append(_prepared(record, lexicon))
        log(f"{table}: {sum(len(v) for v in events.values())} events")
    return patients, events


def categories(events: list[Any]) -> set[str]:
    """A patient's ICD categories (the first 3 characters of each coded diagnosis)."""
    return {c.split(":", 1)[1][:3] for e in events if e.sub_type == "diagnosis" for c in e.concepts
            if c.startswith("icd:")}


def without_diagnoses(events: list[Any]) -> list[Any]:
    """The events but the coded diagnoses, and no disease concept on the others (procedure codes stay: care)."""
    from dataclasses import replace

    kept = [e for e in events if e.sub_type != "diagnosis"]
    return [replace(e, concepts=tuple(c for c in e.concepts if not c.startswith("disease:"))) for e in kept]


def agreement(patients: dict[str, Any], events: dict[str, list[Any]], weights: Sequence[float]) -> dict[str, Any]:
    """Per sequence weight: diagnosis agreement@5 (at least one ICD category shared) and the mean Jaccard of the ICD
    categories of a patient and each of their 5, with diagnoses hidden; chance: the same over all other patients."""
    from workspace_app.patients.similar import PatientIndex, profile_of

    coded = {pid: categories(evs) for pid, evs in events.items()}
    index = PatientIndex([profile_of(patients[pid], without_diagnoses(evs)) for pid, evs in events.items() if pid in patients])
    asked = [pid for pid in index.ids if coded.get(pid)]

    def jaccard(a: set[str], b: set[str]) -> float:
        return len(a & b) / len(a | b) if a | b else 0.0

    def mean(values: Iterable[float]) -> float:
        values = list(values)
        return round(sum(values) / len(values), 3) if values else 0.0

    others = {pid: [q for q in index.ids if q != pid] for pid in asked}
    result: dict[str, Any] = {
        "patients": len(asked),
        "chance": {"any_shared@5": mean(mean(bool(coded[q] & coded[p]) for q in others[p]) for p in asked),
                   "jaccard@5": mean(mean(jaccard(coded[q], coded[p]) for q in others[p]) for p in asked)},
    }
    for weight in weights:
        tops = {p: [s.patient.patient_id for s in index.similar(p, TOP_K, weight)] for p in asked}
        result[f"sequence_weight={weight:g}"] = {
            "any_shared@5": mean(mean(bool(coded[q] & coded[p]) for q in tops[p]) for p in asked if tops[p]),
            "jaccard@5": mean(mean(jaccard(coded[q], coded[p]) for q in tops[p]) for p in asked if tops[p]),
        }
    return result


def latency(patients: dict[str, Any], events: dict[str, list[Any]]) -> dict[str, float]:
    """ms to build the index of every patient's profile, and per similar-patients call over every patient."""
    from workspace_app.patients.similar import PatientIndex, profile_of

    started = time.perf_counter()
    index = PatientIndex([profile_of(patients[pid], evs) for pid, evs in events.items() if pid in patients])
    build_ms = (time.perf_counter() - started) * 1000
    times = []
    for pid in index.ids:
        started = time.perf_counter()
        index.similar(pid, TOP_K, 0.1)
        times.append((time.perf_counter() - started) * 1000)
    return {"index_build_ms": round(build_ms, 1), "p50_ms": round(percentile(times, 50), 1),
            "p95_ms": round(percentile(times, 95), 1), "calls": len(times)}


def main() -> None:
    patients, events = read_demo()
    result = {
        "bench": "similar_patients", "at": now_iso(), "git": git_info(), "machine": machine_info(),
        "command": "python -m bench.similar_patients",
        "events": sum(len(v) for v in events.values()),
        "diagnoses_hidden": agreement(patients, events, (0.0, 0.1, 0.2, 0.4)),
        "latency": latency(patients, events),
    }
    out = RESULTS_DIR / "similar_patients.json"
    out.write_text(compact_json(result) + "\n", encoding="utf-8")
    log(f"wrote {out}: {result['diagnoses_hidden']} {result['latency']}")


if __name__ == "__main__":
    main()
