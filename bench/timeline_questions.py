"""Questions about one patient's timeline (issue 28, deliverables 2 and 6): does `ask --patient` cite the events the
record gives for a question in words (English and Chinese), and does it refuse when the record is silent?

    python -m bench.timeline_questions [--rebuild] [--split test|dev]

The questions, bench/timeline_questions.jsonl, are generated from the demo's own record by templates (`--rebuild`),
not written by hand: for each patient, "now" is the record's latest event, and each template picks its subject from
what the record holds (a drug class given in the window, a lab's latest low or high result, a drug's latest
administration, the medications in the hours after or the events in the 6 hours before the latest abnormal result
of a lab, the low labs of the day before "now"), or, for the unanswerable rows, from what it does not hold (a drug class or a drug of the
lexicon never given; a class given but not in the window; a lab never low or high; nothing in the hours after or
before an anchor; no low lab the day before). Each template has several English and Chinese wordings (WORDINGS),
one of each drawn per patient by a generator seeded with the patient id. A row holds the question, the template, the split and the gold as event ids only.

Gold: the events a correct answer must cite, as groups: the events of one content (the same administration charted
five times in the window is one group). Medication events are prescriptions, infusions and administrations given
(eMAR rows whose status is administered, started or applied). Rows with more than 10 groups are not generated (the
answer lists 10). Measure ("cites the gold"): every gold group has at least one of its events among the answer's
patient-level citations; `exact` additionally requires no cited event outside the gold groups (the anchor of a
before/after question aside). Refusal: an unanswerable row's answer is a refusal (`refused`) with no patient event
cited. Targets: cites the gold >= 0.80 of the answerable test rows; refusals >= 0.80 of the unanswerable ones.

Split by patient id, as bench.treatment_links and the link miner: test if int(sha256(subject_id)[:8], 16) % 100 <
40 (40 test patients, 60 dev). Dev rows are for developing; the figures reported are the test rows'.

The patients of the split are stored as the importer prepares them (times, concepts) in a fresh data dir, without
embeddings (the timeline path reads events, not vectors: 97,000 test events would take ~45 min to embed here), and
every question goes through `app.patient_answers.ask`, the service the CLI, the API and the chat share. Latency is
per question, through that service, in file order (a patient's rows follow each other): a patient's first question
reads the record into the patient's memory (kept for the next ones while the record is unchanged); `first_ms` is
the latency of those first questions alone. Writes bench/results/timeline_questions.json.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import (
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

QUESTIONS = REPO / "bench" / "timeline_questions.jsonl"
TEST_PERCENT = 40
MAX_GROUPS = 10
TARGET = 0.8
WORKSPACE = "timeline"
# drug classes asked about (name in English, in Chinese) and labs (name, Chinese name, directions)
CLASSES = {
    "anticoagulant": ("anticoagulant", "抗凝药"), "antibiotic": ("antibiotic", "抗生素"), "insulin": ("insulin", "胰岛素"),
    "diuretic": ("diuretic", "利尿剂"), "analgesic": ("analgesic", "镇痛药"), "sedative": ("sedative", "镇静药"),
    "vasopressor": ("vasopressor", "升压药"), "beta blocker": ("beta blocker", "β受体阻滞剂"),
    "potassium supplement": ("potassium supplement", "补钾"), "laxative": ("laxative", "泻药"),
    "proton pump inhibitor": ("proton pump inhibitor", "质子泵抑制剂"), "statin": ("statin", "他汀"),
}
LABS = {
    "potassium": ("potassium", "血钾"), "sodium": ("sodium", "血钠"), "magnesium": ("magnesium", "血镁"),
    "glucose": ("glucose", "血糖"), "hemoglobin": ("hemoglobin", "血红蛋白"), "creatinine": ("creatinine", "肌酐"),
    "inr(pt)": ("INR", "INR"), "platelet count": ("platelet count", "血小板计数"),
}
DRUGS = ("heparin", "warfarin", "furosemide", "insulin", "vancomycin", "metoprolol", "pantoprazole", "acetaminophen",
         "ondansetron", "amiodarone", "enoxaparin", "apixaban", "lorazepam", "propofol", "norepinephrine")
DIRECTIONS = {"↓": ("low", "偏低"), "↑": ("high", "偏高")}
ANCHORS = (("potassium", "↓"), ("magnesium", "↓"), ("glucose", "↑"), ("inr(pt)", "↑"), ("hemoglobin", "↓"))
WINDOWS = (24, 48, 72)
# Each template's wordings (one English and one Chinese drawn per patient): {c} a drug class, {w} hours, {d} days,
# {lab} a lab, {dir} its direction, {drug} a drug (named in English in both languages, as clinicians write it), {h}
# hours around an anchor.
WORDINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "class": (("What {c} medications did the patient get in the last {w} hours?",
               "Which {c} drugs were given in the past {w} hours?",
               "Has the patient received any {c} over the last {d} days?",
               "List the {c} medications given within the last {w} hours.",
               "Did she get any {c} in the previous {w}h?"),
              ("过去{w}小时内患者用过哪些{c}？", "近{w}小时给过什么{c}？", "最近{d}天患者用了哪些{c}？",
               "患者在过去{w}小时里有没有用{c}？")),
    "lab": (("When was the patient's {lab} last {dir}?", "When was her most recent {dir} {lab}?",
             "What was the latest {dir} {lab} result?", "When did the patient last have a {dir} {lab}?"),
            ("患者的{lab}最近一次{dir}是什么时候？", "{lab}上一次{dir}是在什么时候？", "患者最后一次{lab}{dir}是哪天？")),
    "drug": (("When did the patient last get {drug}?", "When was {drug} last given?",
              "When was the most recent dose of {drug}?", "Has she had any {drug}? When was the last dose?"),
             ("患者最后一次用{drug}是什么时候？", "{drug}上次是什么时候给的？", "患者最近一次使用{drug}是哪天？")),
    "after": (("What medications did the patient get in the {h} hours after the last {dir} {lab}?",
               "What was given within {h} hours after her most recent {dir} {lab}?",
               "Which drugs followed the last {dir} {lab} within {h} hours?"),
              ("患者最近一次{lab}{dir}之后{h}小时内用了什么药？", "{lab}{dir}（最近一次）后{h}小时内给了哪些药？",
               "最近一次{lab}{dir}以后的{h}小时里用过什么药物？")),
    "before": (("What happened in the 6 hours before the last {dir} {lab}?",
                "What was recorded in the 6 hours leading up to the latest {dir} {lab}?"),
               ("最近一次{lab}{dir}之前6小时内发生了什么？", "{lab}{dir}（最近一次）前6小时有哪些记录？")),
    "yesterday": (("Which lab results were low yesterday?", "What labs were below normal yesterday?",
                   "Any low lab values yesterday?"),
                  ("昨天哪些检验结果偏低？", "昨天有哪些化验偏低？")),
}


def split_of(patient: str) -> str:
    from workspace_app.patients.link_mining import split_patients

    return "test" if split_patients([patient], TEST_PERCENT)[1] else "dev"


def read_record(patients: set[str] | None) -> dict[str, list[Any]]:
    """Each patient's events as the importer prepares them (time format, concepts), in time order."""
    from workspace_app.models.events import TIME_FORMAT, parse_time
    from workspace_app.patients.concepts import extract_concepts
    from workspace_app.patients.lexicon import load_lexicon
    from workspace_app.patients.mimic import MimicReader

    lexicon = load_lexicon()
    reader = MimicReader(DEMO_DIR, patients)
    reader.read_patients()
    _, admissions = reader.read_admissions()
    events: dict[str, list[Any]] = defaultdict(list)
    for event in (e for table in [admissions, *(read() for _, read in reader.event_tables())] for e in table):
        if event.timestamp:
            timestamp = parse_time(event.timestamp).strftime(TIME_FORMAT)
            events[event.patient_id].append(replace(event, timestamp=timestamp, concepts=extract_concepts(event, lexicon)))
    for found in events.values():
        found.sort(key=lambda e: (e.timestamp, e.event_id))
    return events


# Generation: the record's own structure, written here without the planner's code.

def _given(event: Any) -> bool:
    from workspace_app.patients.concepts import record_keys

    if event.source_table in ("prescriptions", "inputevents"):
        return True
    return event.source_table == "emar" and bool(record_keys(event))


def _shift(timestamp: str, hours: float) -> str:
    from datetime import timedelta

    from workspace_app.models.events import parse_time

    return (parse_time(timestamp) + timedelta(hours=hours)).strftime("%Y-%m-%d %H:%M:%S")


def _groups(events: Iterable[Any]) -> list[list[str]]:
    groups: dict[tuple[str, str], list[str]] = {}
    for event in events:
        groups.setdefault((event.sub_type, event.content), []).append(event.event_id)
    return list(groups.values())


def _latest(events: list[Any]) -> list[list[str]]:
    return [[e.event_id for e in events if e.timestamp == events[-1].timestamp]] if events else []


def _worded(pick: Any, kind: str, en: dict[str, Any], zh: dict[str, Any]) -> tuple[str, str]:
    english, chinese = WORDINGS[kind]
    return pick(english).format(**en), pick(chinese).format(**zh)


def _row(patient: str, template: str, texts: tuple[str, str], gold: list[list[str]], **extra: Any) -> list[dict[str, Any]]:
    if len(gold) > MAX_GROUPS:
        return []
    en, zh = texts
    base = {"patient_id": patient, "split": split_of(patient), "template": template, "answerable": bool(gold),
            "gold_groups": gold, **extra}
    return [{**base, "id": f"{patient}-{template}-{lang}", "language": lang, "question": text}
            for lang, text in (("en", en), ("zh", zh))]


def questions_for(patient: str, events: list[Any]) -> list[dict[str, Any]]:
    """The template questions of one patient (a seeded choice among the subjects the record offers)."""
    pick = random.Random(patient).choice
    now = events[-1].timestamp
    given = [e for e in events if _given(e)]
    rows: list[dict[str, Any]] = []
    window = pick(WINDOWS)
    recent = [e for e in given if e.timestamp > _shift(now, -window)]
    in_window = sorted(c for c in CLASSES if any(f"class:{c}" in e.concepts for e in recent))
    ever = {c for c in CLASSES if any(f"class:{c}" in e.concepts for e in given)}
    choices = (("class_in_window", in_window), ("class_not_in_window", sorted(ever - set(in_window))),
               ("class_never", sorted(set(CLASSES) - ever)))
    for template, classes in choices:
        if classes:
            klass = pick(classes)
            en, zh = CLASSES[klass]
            gold = _groups(e for e in recent if f"class:{klass}" in e.concepts)
            texts = _worded(pick, "class", {"c": en, "w": window, "d": window // 24}, {"c": zh, "w": window, "d": window // 24})
            rows += _row(patient, template, texts, gold)
    rows += _lab_rows(patient, events, pick)
    rows += _drug_rows(patient, given, pick)
    rows += _anchor_rows(patient, events, given, pick)
    rows += _yesterday_rows(patient, events, now)
    return rows


def _lab_rows(patient: str, events: list[Any], pick: Any) -> list[dict[str, Any]]:
    measured = sorted(lab for lab in LABS if any(f"lab:{lab}" in e.concepts for e in events))
    if not measured:
        return []
    rows: list[dict[str, Any]] = []
    options = [(lab, d) for lab in measured for d in DIRECTIONS]
    found = [(lab, d) for lab, d in options if any(f"abnormal:{lab}{d}" in e.concepts for e in events)]
    absent = [(lab, d) for lab, d in options if (lab, d) not in found]
    for template, choices in (("lab_last_abnormal", found), ("lab_never_abnormal", absent)):
        if choices:
            lab, arrow = pick(choices)
            (en, zh), (word, word_zh) = LABS[lab], DIRECTIONS[arrow]
            gold = _latest([e for e in events if f"abnormal:{lab}{arrow}" in e.concepts])
            rows += _row(patient, template, _worded(pick, "lab", {"lab": en, "dir": word}, {"lab": zh, "dir": word_zh}), gold)
    return rows


def _drug_rows(patient: str, given: list[Any], pick: Any) -> list[dict[str, Any]]:
    got = sorted(d for d in DRUGS if any(f"drug:{d}" in e.concepts for e in given))
    rows: list[dict[str, Any]] = []
    if got:
        drug = pick(got)
        rows += _row(patient, "drug_last", _worded(pick, "drug", {"drug": drug}, {"drug": drug}),
                     _latest([e for e in given if f"drug:{drug}" in e.concepts]))
    never = sorted(set(DRUGS) - set(got))
    if never:
        drug = pick(never)
        rows += _row(patient, "drug_never", _worded(pick, "drug", {"drug": drug}, {"drug": drug}), [])
    return rows


def _anchor_rows(patient: str, events: list[Any], given: list[Any], pick: Any) -> list[dict[str, Any]]:
    present = [(lab, d) for lab, d in ANCHORS if any(f"abnormal:{lab}{d}" in e.concepts for e in events)]
    if not present:
        return []
    lab, arrow = pick(present)
    (en, zh), (word, word_zh) = LABS[lab], DIRECTIONS[arrow]
    anchor = [e for e in events if f"abnormal:{lab}{arrow}" in e.concepts][-1]
    hours = pick((6, 12, 24))
    after = [e for e in given if anchor.timestamp < e.timestamp <= _shift(anchor.timestamp, hours)]
    en_words, zh_words = {"lab": en, "dir": word, "h": hours}, {"lab": zh, "dir": word_zh, "h": hours}
    rows = _row(patient, "medications_after", _worded(pick, "after", en_words, zh_words), _groups(after),
                anchor=anchor.event_id)
    before = [e for e in events if _shift(anchor.timestamp, -6) < e.timestamp < anchor.timestamp]
    rows += _row(patient, "before_abnormal", _worded(pick, "before", en_words, zh_words), _groups(before),
                 anchor=anchor.event_id)
    return rows


def _yesterday_rows(patient: str, events: list[Any], now: str) -> list[dict[str, Any]]:
    day = _shift(now[:10] + " 00:00:00", -24)[:10]
    low = [e for e in events if e.timestamp[:10] == day and e.event_type == "lab"
           and any(c.startswith("abnormal:") and c.endswith("↓") for c in e.concepts)]
    pick = random.Random(patient + "yesterday").choice
    return _row(patient, "low_labs_yesterday", _worded(pick, "yesterday", {}, {}), _groups(low))


def rebuild() -> list[dict[str, Any]]:
    records = read_record(None)
    return [row for patient in sorted(records) for row in questions_for(patient, records[patient])]


# Evaluation

def score(row: dict[str, Any], answer: Any, seconds: float) -> dict[str, Any]:
    """One row's detail: the cited events against the gold groups, the refusal."""
    cited = {c.event_id for c in answer.citations if c.level == "patient"}
    gold = [set(g) for g in row["gold_groups"]]
    union = set().union(*gold) if gold else set()
    covered = all(g & cited for g in gold) if gold else False
    extra = cited - union - {row.get("anchor")}
    return {
        "id": row["id"], "template": row["template"], "language": row["language"], "answerable": row["answerable"],
        "question": row["question"], "cites_gold": covered and bool(gold), "exact": covered and not extra,
        "refused": answer.refused, "refusal_ok": (not row["answerable"]) and answer.refused and not cited,
        "cited": sorted(cited), "extra": sorted(extra), "ms": round(seconds * 1000, 1), "answer": answer.text[:600],
    }


def store_record(app: Any, patients: set[str]) -> int:
    """The patients' events stored as the importer prepares them, without vectors."""
    from workspace_app.patients.mimic import MimicReader

    reader = MimicReader(DEMO_DIR, patients)
    app.catalog.patients.upsert_patients(reader.read_patients())
    admissions, _ = reader.read_admissions()
    app.catalog.patients.upsert_admissions(admissions)
    events = [e for found in read_record(patients).values() for e in found]
    for start in range(0, len(events), 5000):
        app.catalog.patients.upsert_events(events[start:start + 5000])
    return len(events)


def summarise(details: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [d for d in details if d["answerable"]]
    silent = [d for d in details if not d["answerable"]]
    share = lambda rows, key: round(sum(r[key] for r in rows) / len(rows), 3) if rows else None
    per: dict[str, Any] = {}
    for template in sorted({d["template"] for d in details}):
        rows = [d for d in details if d["template"] == template]
        per[template] = {}
        for key, wanted in (("cites_gold", True), ("refusal_ok", False)):
            kept = [r for r in rows if r["answerable"] == wanted]
            if kept:
                per[template][key] = {"rows": len(kept), "all": share(kept, key),
                                      "en": share([r for r in kept if r["language"] == "en"], key),
                                      "zh": share([r for r in kept if r["language"] == "zh"], key)}
    return {"answerable": len(answerable), "unanswerable": len(silent), "cites_gold": share(answerable, "cites_gold"),
            "exact": share(answerable, "exact"), "refusal_rate": share(silent, "refusal_ok"),
            "false_refusals": share(answerable, "refused"), "per_template": per}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help=f"generate {QUESTIONS.name} from the demo first")
    parser.add_argument("--split", choices=("test", "dev"), default="test")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "timeline_questions.json")
    args = parser.parse_args(argv)
    if not (DEMO_DIR / "hosp" / "admissions.csv.gz").is_file():
        log(f"the MIMIC-IV demo is not at {DEMO_DIR}")
        return 2
    if args.rebuild or not QUESTIONS.is_file():
        rows = rebuild()
        QUESTIONS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        log(f"{len(rows)} questions written to {QUESTIONS}")
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = [r for r in rows if r["split"] == args.split]
    patients = {r["patient_id"] for r in chosen}
    data_dir = Path(tempfile.mkdtemp(prefix="bench-timeline-"))
    try:
        app = open_app(bench_settings(data_dir / "data"))
        app.workspaces.create(WORKSPACE)
        started = time.perf_counter()
        stored = store_record(app, patients)
        log(f"{stored} events of {len(patients)} {args.split} patients stored in {time.perf_counter() - started:.0f} s")
        details = []
        for row in chosen:
            began = time.perf_counter()
            answer = app.patient_answers.ask(WORKSPACE, row["patient_id"], row["question"])
            details.append(score(row, answer, time.perf_counter() - began))
        app.close()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    summary = summarise(details)
    seconds = [d["ms"] for d in details]
    first = [d["ms"] for i, d in enumerate(details) if i == 0 or chosen[i - 1]["patient_id"] != chosen[i]["patient_id"]]
    result = {
        "bench": "timeline_questions", "when": now_iso(), "git": git_info(), "machine": machine_info(),
        "split": f"by patient id: test if int(sha256(subject_id)[:8], 16) % 100 < {TEST_PERCENT}", "rows": args.split,
        "questions": {"file": QUESTIONS.name, "all": len(rows), "measured": len(chosen), "patients": len(patients)},
        "measure": "cites_gold: every gold group (the events of one content) has a cited event; exact: and nothing "
                   "cited outside the gold (the anchor aside); refusal_rate: unanswerable rows refused with no event cited",
        "targets": {"cites_gold": TARGET, "refusal_rate": TARGET}, **summary,
        "latency_ms": {"p50": round(percentile(seconds, 50), 1), "p95": round(percentile(seconds, 95), 1),
                       "max": round(max(seconds), 1)},
        "first_ms": {"p50": round(percentile(first, 50), 1), "p95": round(percentile(first, 95), 1),
                     "max": round(max(first), 1)},
        "details": details,
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("questions", "answerable", "unanswerable", "cites_gold", "exact",
                                             "refusal_rate", "false_refusals", "latency_ms", "first_ms")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
