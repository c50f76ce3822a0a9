"""Treatment links in related events (issue 28, deliverables 1 and 6): for an abnormal lab result, is the treatment
the record shows given within 24 h after it among the top 10 related events? Before (the hand rules alone) and
after (the hand rules with the links `workspace-app patients mine-links` learned from the training patients), on
the TEST patients only.

    python -m bench.treatment_links [--rebuild-gold]

The gold set, bench/treatment_links_gold.jsonl, is built from the demo's own structure (`--rebuild-gold`): for each
family below, every lab result of the family's item in the family's direction that is followed within 24 h by an
event naming the family's treatment (a prescription, a given administration, an infusion or a provider order,
named as the record names it), at most PER_PATIENT per patient and family (evenly spaced in time). A row holds
identifiers only: family, split, patient, the lab event's id and the treatment events' ids. The families define
the evaluation, not the ranking: the ranking's links come from the miner, which never sees a test patient.

Split by patient id, as the miner's (`link_mining.split_patients`, test_percent 40): test if
int(sha256(subject_id)[:8], 16) % 100 < 40. Rows of training patients are marked `dev` (the miner learned from
them: figures on them are optimistic, and are not reported here).

Evidence recall@10 of a query: 1 when any of its treatment events is among the top 10 related events of the lab
event (`related_events`, default weights, window ±24 h), else 0; averaged per family and over all queries.

Vectors (`--vectors`): `none` (default) builds each test patient's memory from the record as the importer prepares
its events (times, concepts) but without embeddings, so the similarity feature (weight 0.1 of 1.15) is 0 for every
candidate and vector recall adds nothing the window does not; `model` imports the patients into a fresh data dir
with the configured embedder (embeddings cached in bench/.cache; the first run embeds ~110,000 events: 28 min
on a busy 2-core machine) and ranks exactly as the product does.
Latency: related() with the links over 100 events of the busiest demo patient (50 at random, 50 abnormal results of
the families), memory warm: through the service with `model`; with `none`, `related_events` on a memory whose
vectors are random unit vectors of the default model's size (384), so the matrix product costs what it would.
Writes bench/results/treatment_links.json (bench/results/patient_links.json is the LINKS_TO coverage bench's).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import (
    CACHE_DIR,
    DEMO_DIR,
    REPO,
    RESULTS_DIR,
    bench_settings,
    compact_json,
    git_info,
    log,
    machine_info,
    now_iso,
    open_app,
    percentile,
)

GOLD = REPO / "bench" / "treatment_links_gold.jsonl"
WINDOW_H = 24.0
TOP_K = 10
PER_PATIENT = 5
TEST_PERCENT = 40
# family -> (lab label, direction, what the treatment's record name contains)
FAMILIES = {
    "inr_high->vitamin_k": (r"INR\(PT\)", "high", r"phytonadione|vitamin k"),
    "potassium_low->potassium_chloride": (r"Potassium(, Whole Blood)?", "low", r"potassium chl|\bkcl\b"),
    "magnesium_low->magnesium_sulfate": (r"Magnesium", "low", r"magnesium sulfate"),
    "glucose_high->insulin": (r"Glucose", "high", r"insulin"),
    "hemoglobin_low->red_cells": (r"Hemoglobin", "low", r"red blood cells|red cell"),
}


def _family_of(content: str) -> str | None:
    for family, (label, direction, _) in FAMILIES.items():
        if re.match(rf"{label} -?[\d.]+ .*\({direction}[;)]", content):
            return family
    return None


def build_gold(demo: Path) -> list[dict[str, Any]]:
    """The gold rows of every demo patient (both splits), from the record alone."""
    from workspace_app.models.events import epoch_seconds
    from workspace_app.patients.concepts import record_keys
    from workspace_app.patients.link_mining import split_patients
    from workspace_app.patients.mimic import MimicReader, read_rows

    ids = [row["subject_id"] for _, row in read_rows(demo / "hosp" / "patients.csv.gz")]
    _, test = split_patients(ids, TEST_PERCENT)
    reader = MimicReader(demo)
    labs: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for event in reader.labs():
        family = _family_of(event.content)
        if family and event.timestamp:
            labs[(event.patient_id, family)].append((epoch_seconds(event.timestamp) / 3600, event.event_id))
    given: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for read in (reader.prescriptions, reader.administrations, reader.infusions, reader.orders):
        for event in read():
            names = " ".join(k.split(":", 1)[1] for k in record_keys(event))
            for family, (_, _, treatment) in FAMILIES.items():
                if names and event.timestamp and re.search(treatment, names):
                    given[(event.patient_id, family)].append((epoch_seconds(event.timestamp) / 3600, event.event_id))
    rows = []
    for (patient, family), results in sorted(labs.items()):
        found = []
        for hour, lab_id in sorted(results):
            treated = sorted(eid for t, eid in given.get((patient, family), []) if 0 <= t - hour <= WINDOW_H)
            if treated:
                found.append({"family": family, "split": "test" if patient in test else "dev", "patient": patient,
                              "lab_event": lab_id, "treatments": treated})
        step = max(1, len(found) / PER_PATIENT)
        rows += [found[int(i * step)] for i in range(min(PER_PATIENT, len(found)))]
    return rows


def evaluate(memories: Any, rows: Iterable[dict[str, Any]], rule_sets: dict[str, Any]) -> dict[str, Any]:
    """Evidence recall@10 per family and overall, for each rule set."""
    from workspace_app.patients.related import related_events

    hits: dict[str, Counter[str]] = {name: Counter() for name in rule_sets}
    totals: Counter[str] = Counter()
    misses: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        memory = memories.memory(row["patient"])
        totals[row["family"]] += 1
        for name, rules in rule_sets.items():
            ranked = [h["event_id"] for h in related_events(memory, rules, row["lab_event"], top_k=TOP_K)]
            hit = bool(set(ranked) & set(row["treatments"]))
            hits[name][row["family"]] += hit
            if name == "after" and not hit:
                misses[row["family"]].append(row["lab_event"])
    result: dict[str, Any] = {"queries": dict(totals), "misses_after": {f: m[:10] for f, m in misses.items()}}
    for name in rule_sets:
        per = {f: round(hits[name][f] / totals[f], 3) for f in FAMILIES if totals[f]}
        result[name] = {"overall": round(sum(hits[name].values()) / max(sum(totals.values()), 1), 3),
                        "per_family": per, "hits": dict(hits[name])}
    return result


def latency_events(events: list[Any]) -> list[Any]:
    """The events latency is measured on: 50 at random (seed 1) and the first 50 abnormal results of the families."""
    return random.Random(1).sample(events, min(50, len(events))) + [e for e in events if _family_of(e.content)][:50]


def busiest_latency(related: Any, events: list[Any], build_ms: float) -> dict[str, Any]:
    """related(event id) timed over the latency events (memory already built in `build_ms`)."""
    samples = []
    for event in latency_events(events):
        began = time.perf_counter()
        related(event.event_id)
        samples.append((time.perf_counter() - began) * 1000)
    return {"events": len(events), "memory_build_ms": round(build_ms, 1), "calls": len(samples),
            "p50_ms": round(percentile(samples, 50), 1), "p95_ms": round(percentile(samples, 95), 1)}


class RecordMemories:
    """Patients' memories built from the record as the importer prepares its events, without embeddings."""

    def __init__(self, demo: Path, patients: set[str], dimension: int = 0) -> None:
        import numpy as np

        from workspace_app.models.events import TIME_FORMAT, parse_time
        from workspace_app.patients.concepts import extract_concepts
        from workspace_app.patients.lexicon import load_lexicon
        from workspace_app.patients.mimic import MimicReader

        self.events: dict[str, list[Any]] = defaultdict(list)
        self.memories: dict[str, Any] = {}
        self._dimension = dimension
        self._np = np
        lexicon = load_lexicon()
        reader = MimicReader(demo, patients)
        reader.read_patients()
        _, admissions = reader.read_admissions()
        tables = [admissions, *(read() for _, read in reader.event_tables())]
        for event in (e for table in tables for e in table):
            if event.timestamp:
                timestamp = parse_time(event.timestamp).strftime(TIME_FORMAT)
                prepared = replace(event, timestamp=timestamp, concepts=extract_concepts(event, lexicon))
                self.events[event.patient_id].append(prepared)
        for events in self.events.values():
            events.sort(key=lambda e: (e.timestamp, e.event_id))

    def memory(self, patient: str) -> Any:
        """The patient's memory (zero vectors, or random unit ones when a dimension was given), built once."""
        from workspace_app.patients.related import PatientMemory

        if patient not in self.memories:
            events = self.events[patient]
            matrix = self._np.zeros((0, max(self._dimension, 1)), dtype=self._np.float32)
            ids: list[str] = []
            if self._dimension:
                matrix = self._np.random.default_rng(0).standard_normal((len(events), self._dimension)).astype("float32")
                matrix /= self._np.linalg.norm(matrix, axis=1, keepdims=True)
                ids = [e.event_id for e in events]
            self.memories[patient] = PatientMemory.build(events, ids, matrix)
        return self.memories[patient]


def busiest_patient(demo: Path) -> str:
    """The demo patient with the most events in the tables the importer reads most of (labs, eMAR, POE)."""
    from workspace_app.patients.mimic import read_rows

    counts: Counter[str] = Counter()
    for table in ("hosp/labevents", "hosp/emar", "hosp/poe", "hosp/prescriptions", "icu/inputevents"):
        counts.update(row["subject_id"] for _, row in read_rows(demo / f"{table}.csv.gz"))
    return counts.most_common(1)[0][0]


def _with_model(patients: list[str], test: list[dict[str, Any]], rule_sets: dict[str, Any],
                busiest: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(latency, recall) with the patients imported into a fresh data dir with the configured embedder."""
    from bench.common.fingerprint import embedding_fingerprint

    data_dir = Path(tempfile.mkdtemp(prefix="bench-treatment-links-"))
    try:
        app = open_app(bench_settings(data_dir / "data"),
                       embedding_cache=CACHE_DIR / f"embeddings-{embedding_fingerprint()}.sqlite")
        report = app.patients.import_path(DEMO_DIR, patients, lambda step: log(f"  {step.table}: {step.events} events"))
        log(f"imported {report.events} events of {len(patients)} patients in {report.seconds:.0f} s")
        recall = evaluate(app.patients, test, rule_sets)
        started = time.perf_counter()
        app.patients.memory(busiest)
        _ = app.patients.rules
        build_ms = (time.perf_counter() - started) * 1000
        events = app.patients.events(busiest)
        latency = busiest_latency(lambda e: app.patients.related(busiest, e), events, build_ms)
        app.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return latency, recall


def main(argv: list[str] | None = None) -> int:
    from workspace_app.patients.related import related_events
    from workspace_app.patients.rules import DEFAULT_LINKS, RuleSet, load_rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild-gold", action="store_true", help=f"rebuild {GOLD.name} from the demo first")
    parser.add_argument("--vectors", choices=("none", "model"), default="none",
                        help="rank without embeddings (default) or import with the configured embedder")
    parser.add_argument("--split", choices=("test", "dev"), default="test",
                        help="the rows to measure: test (reported) or dev (the miner's training patients, for tuning)")
    parser.add_argument("--links", type=Path, default=None, help="a mined rules file instead of the shipped one")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "treatment_links.json")
    args = parser.parse_args(argv)
    if args.rebuild_gold or not GOLD.is_file():
        rows = build_gold(DEMO_DIR)
        GOLD.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        log(f"gold: {len(rows)} rows written to {GOLD}")
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    test = [r for r in rows if r["split"] == args.split]
    busiest = busiest_patient(DEMO_DIR)
    patients = sorted({r["patient"] for r in test} | {busiest})
    log(f"{len(test)} {args.split} queries over {len({r['patient'] for r in test})} patients; busiest demo patient {busiest}")
    hand = load_rules()
    mined = load_rules(args.links or DEFAULT_LINKS)
    after = hand.with_links(mined)
    rule_sets = {"before": hand, "after": after, "mined_only": RuleSet(type_prior=hand.type_prior).with_links(mined)}
    if args.vectors == "none":
        memories = RecordMemories(DEMO_DIR, {r["patient"] for r in test})
        recall = evaluate(memories, test, rule_sets)
        busy = RecordMemories(DEMO_DIR, {busiest}, dimension=384)
        started = time.perf_counter()
        memory = busy.memory(busiest)
        build_ms = (time.perf_counter() - started) * 1000
        latency = busiest_latency(lambda e: related_events(memory, after, e), busy.events[busiest], build_ms)
    else:
        latency, recall = _with_model(patients, test, rule_sets, busiest)
    result = {
        "bench": "treatment_links", "when": now_iso(), "git": git_info(), "machine": machine_info(),
        "split": f"by patient id: test if int(sha256(subject_id)[:8], 16) % 100 < {TEST_PERCENT}",
        "gold": {"file": GOLD.name, "rows": len(rows), "test_rows": len(test),
                 "test_patients": len({r["patient"] for r in test})},
        "rows": args.split, "links_file": {"path": (args.links or DEFAULT_LINKS).name, "links": len(mined.links), "provenance": dict(mined.provenance)},
        "vectors": args.vectors, "top_k": TOP_K, "recall_at_10": recall,
        "busiest_patient_latency": {"patient": busiest, **latency},
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("gold", "recall_at_10", "busiest_patient_latency")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
