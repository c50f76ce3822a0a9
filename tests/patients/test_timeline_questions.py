"""Questions in words about one patient's timeline (issue 28 item 2): the plan a question makes, and the answers
about real MIMIC-IV demo patients through the service the CLI, the API and the chat share, each event used cited;
a record that does not say is a refusal. The CLI is run as a user runs it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from demo_patients import AF_PATIENT

from workspace_app.models.events import parse_time
from workspace_app.patients.timeline_questions import event_kinds, plan_question
from workspace_app.patients.timeline_tools import KINDS


def _keys(plan: Any) -> list[set[str]]:
    return [set(m.keys) or {m.kind} for m in plan.targets]


def test_a_window_up_to_now_and_a_drug_class() -> None:
    plan = plan_question("What anticoagulants did she get in the last 48 hours?")
    assert plan.is_timeline and plan.window_h == 48 and plan.medication and not plan.relation
    assert _keys(plan) == [{"class:anticoagulant"}]
    zh = plan_question("过去24小时内患者用过哪些抗凝药？")
    assert zh.is_timeline and zh.window_h == 24 and _keys(zh) == [{"class:anticoagulant"}]


def test_before_and_after_take_their_anchor_from_each_language_order() -> None:
    english = plan_question("What happened before the hypotension?")
    assert english.relation == "before" and english.anchor is not None
    assert set(english.anchor.keys) == {"disease:hypotension"} and english.targets == () and english.relation_h == 24
    chinese = plan_question("低钾之后12小时内用了什么药？")
    assert chinese.relation == "after" and chinese.relation_h == 12
    assert chinese.anchor is not None and "abnormal:potassium↓" in chinese.anchor.keys
    assert _keys(chinese) == [{"medication"}]


def test_since_runs_up_to_now_and_classes_are_asked_in_the_plural() -> None:
    plan = plan_question("What antibiotics has she been on since admission?")
    assert plan.relation == "since" and plan.relation_h == 0 and plan.anchor is not None
    assert plan.anchor.kind == "admission" and _keys(plan) == [{"class:antibiotic"}]
    zh = plan_question("入院以来用过哪些镇痛药？")
    assert zh.relation == "since" and zh.anchor is not None and zh.anchor.kind == "admission"


def test_latest_direction_and_recent() -> None:
    plan = plan_question("When was her potassium last low?")
    assert plan.occurrence == "latest" and _keys(plan) == [{"abnormal:potassium↓"}] and plan.window_h is None
    zh = plan_question("患者的血钾最近一次偏低是什么时候？")
    assert zh.occurrence == "latest" and _keys(zh) == [{"abnormal:potassium↓"}]
    recent = plan_question("患者最近服过什么药？")
    assert recent.window_h == 24 and recent.occurrence == "" and _keys(recent) == [{"medication"}]


def test_longest_names_win_over_their_parts() -> None:
    assert _keys(plan_question("When did she last get potassium chloride?")) == [{"drug:potassium chloride"}]
    # 高血压 is hypertension, not 高 (high) applied to a lab
    plan = plan_question("患者高血压之后用了什么药？")
    assert plan.anchor is not None and set(plan.anchor.keys) == {"disease:hypertension"} and plan.direction == ""


def test_guideline_questions_keep_the_cross_level_answer() -> None:
    assert not plan_question("Is this patient's anticoagulation in line with the AF guideline?").is_timeline
    assert not plan_question("该患者的抗凝治疗是否符合房颤指南？").is_timeline
    assert not plan_question("Was this patient's INR in range on warfarin?").is_timeline


def test_a_word_no_lexicon_knows_is_looked_up_in_the_record() -> None:
    plan = plan_question("When did she last get phytonadione?")
    assert plan.terms == ("phytonadione",) and plan.occurrence == "latest"


def test_every_kind_of_event_the_lexicon_names_has_a_tool() -> None:
    assert event_kinds() == set(KINDS)


def _patient_cited(answer: Any) -> list[str]:
    return [c.event_id for c in answer.citations if c.level == "patient"]


def test_latest_high_inr_is_cited_in_english_and_chinese(crossed: Any) -> None:
    events = crossed.patients.events(AF_PATIENT)
    high = [e for e in events if "abnormal:inr(pt)↑" in e.concepts]
    latest = {e.event_id for e in high if e.timestamp == high[-1].timestamp}
    for question in ("When was the patient's INR last high?", "患者的INR最近一次偏高是什么时候？"):
        answer = crossed.patient_answers.ask("af", AF_PATIENT, question)
        assert not answer.refused and set(_patient_cited(answer)) == latest, answer.text
        assert all(c.patient_id == AF_PATIENT and c.level == "patient" for c in answer.citations)
    assert answer.language == "zh" and "患者 10025463 的记录中" in answer.text


def test_medications_after_an_event_cite_the_anchor_and_what_followed(crossed: Any) -> None:
    events = crossed.patients.events(AF_PATIENT)
    first_high = next(e for e in events if "abnormal:inr(pt)↑" in e.concepts)
    until = (parse_time(first_high.timestamp) + timedelta(hours=24)).strftime("%Y-%m-%d %H:%M:%S")
    expected = {
        e.event_id for e in events
        if first_high.timestamp < e.timestamp <= until and "class:anticoagulant" in e.concepts
        and e.source_table in ("prescriptions", "emar", "inputevents")
    }
    assert expected  # the record's warfarin after the first high INR
    answer = crossed.patient_answers.ask(
        "af", AF_PATIENT, "What anticoagulants did the patient get in the 24 hours after the first high INR?"
    )
    cited = _patient_cited(answer)
    assert cited[0] == first_high.event_id and set(cited[1:]) == expected, answer.text
    assert answer.text.startswith("Anticoagulants in the record of patient 10025463, in the 24 hours after INR(PT)")


def test_recent_medications_in_chinese_are_the_last_day_s(crossed: Any) -> None:
    events = crossed.patients.events(AF_PATIENT)
    since = (parse_time(events[-1].timestamp) - timedelta(hours=24)).strftime("%Y-%m-%d %H:%M:%S")
    answer = crossed.patient_answers.ask("af", AF_PATIENT, "患者最近服过什么药？")
    by_id = {e.event_id: e for e in events}
    cited = [by_id[i] for i in _patient_cited(answer)]
    assert cited and not answer.refused
    assert all(e.timestamp > since and e.source_table in ("prescriptions", "emar", "inputevents") for e in cited)
    assert answer.text.startswith(f"患者 {AF_PATIENT} 的记录中截至记录中最后一个事件")


def test_a_record_that_does_not_say_is_a_refusal(crossed: Any) -> None:
    never = crossed.patient_answers.ask("af", AF_PATIENT, "When did the patient last get apixaban?")
    assert never.refused and never.citations == []
    assert never.text == f"The record of patient {AF_PATIENT} does not say: it shows no apixaban."
    # warfarin is in the record, but not in the last two days of it
    window = crossed.patient_answers.ask("af", AF_PATIENT, "过去48小时内患者用过哪些抗凝药？")
    assert window.refused and window.citations == [] and window.text.startswith(f"患者 {AF_PATIENT} 的记录没有提到")


EVENTS = """event_id,patient_id,timestamp,event_type,sub_type,content
k1,p1,2024-05-01 08:00:00,lab,chemistry,Potassium 3.1 mmol/L (low; ref 3.5–5.1)
k2,p1,2024-05-01 09:00:00,order,prescription,Prescription: Potassium Chloride 40 mEq PO
k3,p1,2024-05-02 08:00:00,lab,chemistry,Potassium 3.3 mmol/L (low; ref 3.5–5.1)
k4,p1,2024-05-03 10:00:00,lab,chemistry,Potassium 4.2 mmol/L (ref 3.5–5.1)
"""


@pytest.mark.slow
def test_cli_ask_about_a_patient_s_timeline(cli: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = tmp_path / "events.csv"
    source.write_text(EVENTS, encoding="utf-8")
    assert cli(data, "patients", "import", source).returncode == 0
    assert cli(data, "workspace", "create", "ward").returncode == 0
    done = cli(data, "ask", "--workspace", "ward", "--patient", "p1", "When was the potassium last low?", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert [(c["level"], c["patient_id"], c["event_id"]) for c in answer["citations"]] == [("patient", "p1", "k3")]
    assert not answer["refused"] and "2024-05-02 08:00: Potassium 3.3 mmol/L" in answer["answer"]
    silent = cli(data, "ask", "--workspace", "ward", "--patient", "p1",
                 "What potassium chloride did the patient get in the last 24 hours?", "--json")
    refused = json.loads(silent.stdout)
    assert refused["refused"] and refused["citations"] == []
    assert refused["answer"] == ("The record of patient p1 does not say: it shows no potassium chloride in the 24 hours "
                                 "up to 2024-05-03 10:00 (the record's latest event).")


def test_the_default_windows_are_settings() -> None:
    from workspace_app.config import Settings

    settings = Settings(patients={"timeline_recent_h": 48, "timeline_relation_h": 6})
    assert plan_question("患者最近服过什么药？", settings.patients.timeline_recent_h).window_h == 48
    before = plan_question("What happened before the hypotension?", relation_h=settings.patients.timeline_relation_h)
    assert before.relation == "before" and before.relation_h == 6
    assert plan_question("患者最近服过什么药？").window_h == Settings().patients.timeline_recent_h == 24
