"""Questions across levels (issue 13 item 5, seed 002 QUERY-003): share of questions about a MIMIC-IV demo patient
whose answer cites a patient event AND a guideline passage, each citation labelled with its level (target ≥ 80%).

Cross-level answers that answer (issue 28 item 3), on bench/crosslevel_targets.jsonl: questions pairing a demo
patient's lab values (INR, LDL-C; the latest value, its date and, for INR, its place against the corpus's 2.0–3.0
target, which the line must name, read from the demo's labevents) with a guideline target, and the populations each patient is outside of
(a sex, HCM, pregnancy, an age band; from the demo's patients and diagnoses). Two figures: the share of those
questions whose answer states the comparison (latest value, date, direction) citing the lab event and a guideline
passage (target ≥ 0.80), and the number of passages applied outside their population (in the Guideline or
Compared sections while naming a population the patient is outside of; target 0).

The questions (bench/crosslevel_questions.jsonl) name demo patients with cardiology diagnoses (atrial fibrillation,
heart failure, hypertension, coronary disease) and the levels expected. The workspace holds the guideline PDFs
that cover those diagnoses (ingested once, cached under bench/.cache); only the patients the questions name are
imported. The answerer is the offline extractive one. Writes bench/results/crosslevel.json.

    python -m bench.crosslevel [--fresh]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from bench.common import (
    CORPUS_DIR,
    DEMO_DIR,
    RESULTS_DIR,
    CachedWorkspace,
    compact_json,
    git_info,
    ingest_sources,
    load_jsonl,
    log,
    machine_info,
    now_iso,
)

QUESTIONS = Path(__file__).with_name("crosslevel_questions.jsonl")
TARGET_QUESTIONS = Path(__file__).with_name("crosslevel_targets.jsonl")
# The corpus PDFs on the diagnoses asked about: AF (HCM guideline §8.4, Chinese acute AF guideline), heart failure
# (Chinese HFpEF consensus), hypertension and statins/aspirin (2019 primary prevention), coronary disease (DAPT);
# the targets: warfarin's INR 2.0-3.0 for women with AF (2011 women's CVD prevention) and in Chinese (acute AF),
# LDL-C thresholds with age bands (2018 cholesterol).
PDFS = (
    "ommen-2024-hcm.pdf",
    "zh-acute-af-ed-2024.pdf",
    "zh-hfpef-consensus-2023.pdf",
    "arnett-2019-primary-prevention.pdf",
    "zh-dapt-chd-consensus-2021.pdf",
    "mosca-2011-women-cvd.pdf",
    "grundy-2018-cholesterol.pdf",
)
LEVELS = ("patient", "guideline", "vocabulary")
TARGET = 0.8


def score(row: dict[str, Any], answer: Any) -> dict[str, Any]:
    """One question's detail: the levels cited, whether it meets the bar, what each level quoted."""
    cited: dict[str, list[Any]] = {}
    for citation in answer.citations:
        cited.setdefault(citation.level, []).append(citation)
    labelled = all(c.level in LEVELS for c in answer.citations)
    both = bool(cited.get("patient")) and bool(cited.get("guideline")) and labelled
    return {
        "id": row["id"], "patient_id": row["patient_id"], "question": row["question"],
        "expected_levels": row["expected_levels"], "cited_levels": [lvl for lvl in LEVELS if cited.get(lvl)],
        "patient_and_guideline": both,
        "all_expected_levels": all(cited.get(lvl) for lvl in row["expected_levels"]),
        "patient_guideline_question": answer.standalone_question,
        "citations": {lvl: len(cited.get(lvl, [])) for lvl in LEVELS},
        "patient_events": [f"{c.event_id}: {c.quote}" for c in cited.get("patient", [])],
        "guideline_passages": [f"{c.document} p.{c.page_start}: {c.quote[:160]}" for c in cited.get("guideline", [])],
        "definitions": [f"{c.section}: {c.quote}" for c in cited.get("vocabulary", [])],
        "entities_crossed": [e.name for e in answer.entities],
        "answer": answer.text,
    }


# How the Compared lines say where the latest value is, and the lab labels of each measure in the demo.
DIRECTION_WORDS = {"below": (" is below ", "低于"), "above": (" is above ", "高于"), "within": (" is within ", " meets ", "范围内", "达到")}
LAB_LABELS = {"inr": ("INR(PT) ",), "ldl-c": ("Cholesterol, LDL",)}
SECTIONS = {"Patient record:": "patient", "Guideline:": "guideline", "Compared with the guideline:": "compared",
            "Not for this patient:": "excluded", "Definition:": "vocabulary", "患者记录：": "patient", "指南：": "guideline",
            "与指南对照：": "compared", "不适用于该患者：": "excluded", "定义：": "vocabulary"}


def sections(text: str) -> dict[str, list[str]]:
    """The answer's lines by section."""
    found: dict[str, list[str]] = {}
    section = ""
    for line in text.split("\n\n"):
        if line in SECTIONS:
            section = SECTIONS[line]
        else:
            found.setdefault(section, []).append(line)
    return found


def score_target(row: dict[str, Any], answer: Any) -> dict[str, Any]:
    """Whether the answer states the comparison with both citations, and the passages applied outside their
    population."""
    by_n = {c.n: c for c in answer.citations}
    parts = sections(answer.text)
    gold = row["compare"]
    labels = LAB_LABELS[gold["measure"]]
    values = [f"{v:g}" for v in gold["latest"]]  # results of two lab items at the same time: either is the latest
    stated = None
    for line in parts.get("compared", []):
        cited = [by_n[int(n)] for n in re.findall(r"\[(\d+)\]", line) if int(n) in by_n]
        lab = any(c.level == "patient" and c.quote.startswith(labels) for c in cited)
        passage = any(c.level == "guideline" for c in cited)
        value = any(re.search(rf"(?<![\d.]){re.escape(v)}(?![\d])", line) for v in values)
        if lab and passage and value and gold["date"] in line:
            words = DIRECTION_WORDS.get(gold["direction"] or "", ())
            right = (gold["direction"] is None or any(w in line for w in words)) and (gold["bound"] or "") in line
            stated = {"line": line, "direction_ok": right}
            break
    applied = {int(n) for part in ("guideline", "compared") for line in parts.get(part, [])
               for n in re.findall(r"\[(\d+)\]", line)}
    violations = [
        {"population": o["population"], "citation": n, "quote": by_n[n].quote[:200]}
        for o in row["outside"] for n in sorted(applied)
        if n in by_n and by_n[n].level == "guideline" and re.search(o["marker"], by_n[n].quote, re.IGNORECASE)
    ]
    return {
        "id": row["id"], "patient_id": row["patient_id"], "question": row["question"], "gold": gold,
        "comparison_stated": bool(stated and stated["direction_ok"]), "comparison_line": stated["line"] if stated else None,
        "outside_population_applied": violations, "not_applied": parts.get("excluded", []), "answer": answer.text,
    }


def run_targets(app: Any, workspace: str) -> dict[str, Any]:
    """The two figures of issue 28 item 3 over bench/crosslevel_targets.jsonl."""
    rows = load_jsonl(TARGET_QUESTIONS)
    details = []
    for row in rows:
        answer = app.patient_answers.ask(workspace, row["patient_id"], row["question"])
        details.append(score_target(row, answer))
        log(f"  {row['id']}: compared={details[-1]['comparison_stated']} "
            f"outside={len(details[-1]['outside_population_applied'])}")
    return {
        "questions": len(details),
        "comparison_share": round(sum(d["comparison_stated"] for d in details) / len(details), 3),
        "comparison_target": TARGET,
        "outside_population_applied": sum(len(d["outside_population_applied"]) for d in details),
        "passages_set_apart": sum(len(d["not_applied"]) for d in details),
        "details": details,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="ingest the guideline workspace again")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "crosslevel.json")
    args = parser.parse_args(argv)
    if not (DEMO_DIR / "hosp" / "admissions.csv.gz").is_file():
        log(f"the MIMIC-IV demo is not at {DEMO_DIR}")
        return 2
    rows = load_jsonl(QUESTIONS)
    inputs = [CORPUS_DIR / name for name in PDFS]
    cached = CachedWorkspace("crosslevel", inputs)
    app = cached.open(lambda a: ingest_sources(a, cached.WORKSPACE, [(p, p.name) for p in inputs], "crosslevel"),
                      args.fresh)
    patients = sorted({row["patient_id"] for row in (*rows, *load_jsonl(TARGET_QUESTIONS))})
    report = app.patients.import_path(DEMO_DIR, patients)
    log(f"{len(patients)} patients: {report.events} events ({report.embedded} embedded) in {report.seconds:.0f} s")
    details, seconds = [], []
    for row in rows:
        started = time.perf_counter()
        answer = app.patient_answers.ask(cached.WORKSPACE, row["patient_id"], row["question"])
        seconds.append(time.perf_counter() - started)
        details.append(score(row, answer))
        log(f"  {row['id']}: {details[-1]['cited_levels']}")
    targets = run_targets(app, cached.WORKSPACE)
    app.close()
    share = sum(d["patient_and_guideline"] for d in details) / len(details)
    result = {
        "bench": "crosslevel", "when": now_iso(), "git": git_info(), "machine": machine_info(),
        "workspace": {"pdfs": list(PDFS), **cached.summary()}, "patients": patients,
        "answerer": "extractive (offline; an LLM answerer is out of scope here)",
        "questions": len(details), "target": TARGET,
        "patient_and_guideline_share": round(share, 3),
        "all_expected_levels_share": round(sum(d["all_expected_levels"] for d in details) / len(details), 3),
        "answer_seconds": {"mean": round(sum(seconds) / len(seconds), 2), "max": round(max(seconds), 2)},
        "details": details,
        "targets": targets,
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("questions", "patient_and_guideline_share", "all_expected_levels_share",
                                             "answer_seconds")}, indent=1))
    print(json.dumps({k: v for k, v in targets.items() if k != "details"}, indent=1))
    met = share >= TARGET and targets["comparison_share"] >= TARGET and targets["outside_population_applied"] == 0
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
