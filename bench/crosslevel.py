"""Questions across levels (issue 13 item 5, seed 002 QUERY-003): share of questions about a MIMIC-IV demo patient
whose answer cites a patient event AND a guideline passage, each citation labelled with its level (target ≥ 80%).

The questions (bench/crosslevel_questions.jsonl) name demo patients with cardiology diagnoses (atrial fibrillation,
heart failure, hypertension, coronary disease) and the levels expected. The workspace holds the guideline PDFs
that cover those diagnoses (ingested once, cached under bench/.cache); only the patients the questions name are
imported. The answerer is the offline extractive one. Writes bench/results/crosslevel.json.

    python -m bench.crosslevel [--fresh]
"""

from __future__ import annotations

import argparse
import json
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
# The corpus PDFs on the diagnoses asked about: AF (HCM guideline §8.4, Chinese acute AF guideline), heart failure
# (Chinese HFpEF consensus), hypertension and statins/aspirin (2019 primary prevention), coronary disease (DAPT).
PDFS = (
    "ommen-2024-hcm.pdf",
    "zh-acute-af-ed-2024.pdf",
    "zh-hfpef-consensus-2023.pdf",
    "arnett-2019-primary-prevention.pdf",
    "zh-dapt-chd-consensus-2021.pdf",
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
    patients = sorted({row["patient_id"] for row in rows})
    report = app.patients.import_path(DEMO_DIR, patients)
    log(f"{len(patients)} patients: {report.events} events ({report.embedded} embedded) in {report.seconds:.0f} s")
    details, seconds = [], []
    for row in rows:
        started = time.perf_counter()
        answer = app.patient_answers.ask(cached.WORKSPACE, row["patient_id"], row["question"])
        seconds.append(time.perf_counter() - started)
        details.append(score(row, answer))
        log(f"  {row['id']}: {details[-1]['cited_levels']}")
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
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("questions", "patient_and_guideline_share", "all_expected_levels_share",
                                             "answer_seconds")}, indent=1))
    return 0 if share >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
