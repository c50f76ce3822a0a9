"""Patient event memory (issue 13, seed 004): related-event search against the hospital's own record links.

    python -m bench.events [--budget 4000] [--patients ID,ID] [--queries 120]

Ground truth nobody here wrote: the links MIMIC-IV's own records make between events of one patient.
  emar→poe            an administration (emar) and the order it carries out (emar.poe_id = poe.poe_id)
  emar→prescription   an administration and the pharmacy prescription it dispenses (emar.pharmacy_id)
  prescription→poe    a prescription and its provider order (prescriptions.poe_id)
  poe→prescription    the other way (every prescription of that order is relevant)
  inputevents→linked  an ICU infusion and the other infusions sharing its linkorderid
For each link type up to `--queries` query events (seeded sample) are asked `related(top_k=20)`; Recall@5/10/20 is
the share of the query's linked events in the top K (mean over queries). Compared with plain vector search (the
baseline: cosine over the patient's events) and with each of the four rerank features switched off (its weight
set to 0, the others unchanged). Also: how often each shipped rule fires and how often its expected event follows
within its window; import throughput (with embedding, a fresh data dir) and re-import (nothing embedded);
parsing throughput of the whole demo without embedding; related() latency p50/p95 (warm patient memory).

By default the related-event part runs on a subset: the smallest patients with administrations until `--budget`
events (default 1500; the patients used are recorded). `--all` imports the whole demo (235,609 events, 6,307
distinct embedded texts: an event's text, its numbers as '#', is embedded once, whatever number of events share it)
and measures it all.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import (
    DEMO_DIR,
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

KS = (5, 10, 20)
ABLATIONS = {"no_sim_vec": "sim_vec", "no_time_score": "time_score", "no_concept_overlap": "concept_overlap",
             "no_rule_boost": "rule_boost"}
# Other weightings measured beside the default (seed 004's 0.5 / 0.2 / 0.15 / 0.15): the features that did not earn
# their weight in the ablation, weighed less or not at all.
VARIANTS = {
    "sim_0.1": {"sim_vec": 0.1},
    "sim_0.1_concept_0.05": {"sim_vec": 0.1, "concept_overlap": 0.05},
    "time_and_rules_only": {"sim_vec": 0.0, "concept_overlap": 0.0},
}


def patient_sizes(demo: Path) -> dict[str, dict[str, int]]:
    """Events per patient per table (read from the demo without importing)."""
    from workspace_app.patients.mimic import read_rows

    sizes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for table in ("hosp/labevents", "hosp/emar", "hosp/poe", "hosp/prescriptions", "icu/inputevents",
                  "hosp/diagnoses_icd", "hosp/procedures_icd", "hosp/microbiologyevents", "hosp/admissions"):
        for _, row in read_rows(demo / f"{table}.csv.gz"):
            sizes[row["subject_id"]][table.split("/")[1]] += 1
    return sizes


def choose_patients(sizes: dict[str, dict[str, int]], budget: int) -> list[str]:
    """The smallest patients having administrations, infusions and prescriptions, until `budget` events."""
    eligible = sorted(
        (sum(t.values()), p) for p, t in sizes.items() if t["emar"] and t["inputevents"] and t["prescriptions"]
    )
    chosen, total = [], 0
    for size, patient in eligible:
        if total + size > budget:
            break
        chosen.append(patient)
        total += size
    return chosen


def ground_truth(events: list[Any]) -> dict[str, list[tuple[str, set[str]]]]:
    """(query event id, linked event ids) per link type, from one patient's events."""
    ids = {e.event_id for e in events}
    by_pharmacy: dict[str, set[str]] = defaultdict(set)
    by_poe: dict[str, set[str]] = defaultdict(set)
    by_link: dict[str, set[str]] = defaultdict(set)
    for e in events:
        if e.source_table == "prescriptions":
            if "pharmacy_id" in e.links:
                by_pharmacy[e.links["pharmacy_id"]].add(e.event_id)
            if "poe_id" in e.links:
                by_poe[e.links["poe_id"]].add(e.event_id)
        elif e.source_table == "inputevents" and "linkorderid" in e.links:
            by_link[e.links["linkorderid"]].add(e.event_id)
    truth: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for e in events:
        poe = f"poe:{e.links.get('poe_id')}"
        if e.source_table == "emar":
            if poe in ids:
                truth["emar→poe"].append((e.event_id, {poe}))
            if by_pharmacy.get(e.links.get("pharmacy_id", "")):
                truth["emar→prescription"].append((e.event_id, by_pharmacy[e.links["pharmacy_id"]]))
        elif e.source_table == "prescriptions" and poe in ids:
            truth["prescription→poe"].append((e.event_id, {poe}))
        elif e.source_table == "poe" and by_poe.get(e.links.get("poe_id", "")):
            truth["poe→prescription"].append((e.event_id, by_poe[e.links["poe_id"]]))
        elif e.source_table == "inputevents":
            others = by_link.get(e.links.get("linkorderid", ""), set()) - {e.event_id}
            if others:
                truth["inputevents→linked"].append((e.event_id, others))
    return truth


def recall_at(ranked: list[str], relevant: set[str]) -> dict[int, float]:
    return {k: len(set(ranked[:k]) & relevant) / len(relevant) for k in KS}


def evaluate(app: Any, queries: dict[str, list[tuple[str, str, set[str]]]]) -> tuple[dict[str, Any], list[float]]:
    """Recall@K per link type per method, and the default related() call's latencies (ms, warm patient memory).

    Queries are taken patient by patient, so that each patient's memory is built once (a process keeps a few), and
    built before any call is timed."""
    methods: dict[str, Callable[[str, str], list[dict[str, Any]]]] = {
        "related": lambda p, e: app.patients.related(p, e, top_k=20),
        "vector_baseline": lambda p, e: app.patients.similar(p, e, top_k=20),
        **{name: (lambda p, e, f=feature: app.patients.related(p, e, top_k=20, weights={f: 0.0}))
           for name, feature in ABLATIONS.items()},
        **{name: (lambda p, e, w=weights: app.patients.related(p, e, top_k=20, weights=w))
           for name, weights in VARIANTS.items()},
    }
    sums = {link: {name: dict.fromkeys(KS, 0.0) for name in methods} for link in queries}
    by_patient: dict[str, list[tuple[str, str, set[str]]]] = defaultdict(list)
    for link, items in queries.items():
        for patient, event_id, relevant in items:
            by_patient[patient].append((link, event_id, relevant))
    latencies: list[float] = []
    for patient, items in sorted(by_patient.items()):
        app.patients.memory(patient)
        for link, event_id, relevant in items:
            for name, method in methods.items():
                started = time.perf_counter()
                ranked = [h["event_id"] for h in method(patient, event_id)]
                if name == "related":
                    latencies.append((time.perf_counter() - started) * 1000)
                for k, value in recall_at(ranked, relevant).items():
                    sums[link][name][k] += value
    results: dict[str, Any] = {}
    for link, items in queries.items():
        results[link] = {"queries": len(items)}
        for name in methods:
            results[link][name] = {f"R@{k}": round(sums[link][name][k] / max(len(items), 1), 3) for k in KS}
    return results, latencies


def rule_statistics(app: Any, patients: list[str]) -> dict[str, Any]:
    """Per shipped rule: events matching its `if`, and the share followed by a `then` event within its window."""
    from workspace_app.models.events import epoch_seconds

    stats: dict[str, dict[str, int]] = {r.name: {"if_events": 0, "followed": 0} for r in app.patients.rules.rules}
    for patient in patients:
        events = app.patients.events(patient)
        hours = [epoch_seconds(e.timestamp) / 3600 for e in events]
        concepts = [frozenset(e.concepts) for e in events]
        for rule in app.patients.rules.rules:
            for i, e in enumerate(events):
                if not rule.when.matches(e.event_type, concepts[i]):
                    continue
                stats[rule.name]["if_events"] += 1
                stats[rule.name]["followed"] += any(
                    0 <= hours[j] - hours[i] <= rule.window_h and rule.then.matches(events[j].event_type, concepts[j])
                    for j in range(i + 1, len(events)) if hours[j] - hours[i] <= rule.window_h
                )
    return {name: {**s, "followed_share": round(s["followed"] / s["if_events"], 3) if s["if_events"] else None}
            for name, s in stats.items()}


def parse_throughput(demo: Path) -> dict[str, Any]:
    """Read every table of the whole demo as events with concepts, no storage, no embedding."""
    from workspace_app.patients.concepts import extract_concepts
    from workspace_app.patients.lexicon import load_lexicon
    from workspace_app.patients.mimic import MimicReader

    lexicon = load_lexicon()
    started = time.perf_counter()
    reader = MimicReader(demo)
    _, admissions = reader.read_admissions()
    count = len(admissions)
    for _, read in reader.event_tables():
        for event in read():
            extract_concepts(event, lexicon)
            count += 1
    seconds = time.perf_counter() - started
    return {"events": count, "seconds": round(seconds, 1), "events_per_s": round(count / seconds)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=1500, help="events to import (smallest patients first)")
    parser.add_argument("--patients", default=None, help="comma-separated patient ids (instead of --budget)")
    parser.add_argument("--all", action="store_true", help="the whole demo (all 100 patients), instead of --budget")
    parser.add_argument("--queries", type=int, default=120, help="query events per link type (sampled, seed 0)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "events.json")
    args = parser.parse_args(argv)
    if not (DEMO_DIR / "hosp" / "admissions.csv.gz").is_file():
        log(f"the MIMIC-IV demo is not at {DEMO_DIR}")
        return 2
    sizes = patient_sizes(DEMO_DIR)
    if args.all:
        patients = sorted(sizes)
    else:
        patients = args.patients.split(",") if args.patients else choose_patients(sizes, args.budget)
    log(f"{len(patients)} patients, {sum(sum(sizes[p].values()) for p in patients)} events")
    data_dir = Path(tempfile.mkdtemp(prefix="bench-events-"))
    try:
        app = open_app(bench_settings(data_dir / "data"))
        first = app.patients.import_path(DEMO_DIR, patients, lambda step: log(f"  {step.table}: {step.events} events"))
        second = app.patients.import_path(DEMO_DIR, patients)
        log(f"import {first.events} events in {first.seconds:.0f} s; re-import {second.seconds:.0f} s")
        rng = random.Random(0)
        pooled: dict[str, list[tuple[str, str, set[str]]]] = defaultdict(list)
        for patient in patients:
            for link, items in ground_truth(app.patients.events(patient)).items():
                pooled[link].extend((patient, event_id, relevant) for event_id, relevant in items)
        queries = {link: rng.sample(items, min(args.queries, len(items))) for link, items in sorted(pooled.items())}
        recall, latencies = evaluate(app, queries)
        busiest = max(patients, key=lambda p: sum(sizes[p].values()))
        busy_ms = busiest_latency(app, busiest)
        result = {
            "bench": "events", "when": now_iso(), "git": git_info(), "machine": machine_info(),
            "patients": patients, "whole_demo": bool(args.all),
            "subset_note": "" if args.all else "a subset of the demo's patients (--all imports every one)",
            "import": {**first.to_json(), "events_per_s": round(first.events / first.seconds, 1), "errors": len(first.errors)},
            "reimport": {**second.to_json(), "errors": len(second.errors)},
            "parse_whole_demo": parse_throughput(DEMO_DIR),
            "recall": recall,
            "rules": rule_statistics(app, patients),
            "latency_ms": {"related_p50": round(percentile(latencies, 50), 1), "related_p95": round(percentile(latencies, 95), 1),
                           "calls": len(latencies)},
            "busiest_imported_patient": busy_ms,
        }
        app.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    args.out.write_text(compact_json(result), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("import", "reimport", "latency_ms", "busiest_imported_patient")}, indent=1))
    print(json.dumps(result["recall"], indent=1, ensure_ascii=False))
    return 0


def busiest_latency(app: Any, patient: str) -> dict[str, Any]:
    """related() latency over 50 events of the patient with the most events (memory built once, then warm)."""
    events = app.patients.events(patient)
    started = time.perf_counter()
    app.patients.memory(patient)
    build_ms = (time.perf_counter() - started) * 1000
    samples = []
    for event in random.Random(1).sample(events, min(50, len(events))):
        began = time.perf_counter()
        app.patients.related(patient, event.event_id)
        samples.append((time.perf_counter() - began) * 1000)
    return {"patient": patient, "events": len(events), "memory_build_ms": round(build_ms, 1),
            "p50_ms": round(percentile(samples, 50), 1), "p95_ms": round(percentile(samples, 95), 1)}


if __name__ == "__main__":
    raise SystemExit(main())
