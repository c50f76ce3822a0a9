"""Cross-level answers that answer (issue 28 item 3): a guideline target compared with the patient's values, and a
recommendation for another population set apart; on real guideline pages and real MIMIC-IV demo patients."""

from __future__ import annotations

import re
from typing import Any

from demo_patients import AF_MAN, AF_WOMAN

from workspace_app.models.answers import Answer
from workspace_app.patients.guideline_fit import exclusion_sentence, exclusions

INR_QUESTION = "Is this patient's INR within the target range for atrial fibrillation?"


def _section(answer: Answer, heading: str) -> list[str]:
    lines, inside = [], False
    for line in answer.text.split("\n\n"):
        if line.endswith((":", "：")) and not re.search(r"\[\d+\]", line):
            inside = line == heading
        elif inside:
            lines.append(line)
    return lines


def _cited(answer: Answer, line: str) -> list[Any]:
    by_n = {c.n: c for c in answer.citations}
    return [by_n[int(n)] for n in re.findall(r"\[(\d+)\]", line)]


def test_latest_inr_is_compared_with_the_target_citing_both(targeted: Any) -> None:
    answer = targeted.patient_answers.ask("targets", AF_MAN, INR_QUESTION)
    [line] = _section(answer, "Compared with the guideline:")
    assert line.startswith("Latest INR 1.4 on 2149-10-24 [") and "is below the target range 2.0–3.0 [" in line
    patient, passage = _cited(answer, line)
    event = targeted.patients.event(AF_MAN, patient.event_id)
    assert patient.level == "patient" and event.content.startswith("INR(PT) 1.4") and event.timestamp.startswith("2149-10-24")
    assert passage.level == "guideline" and re.search(r"2(?:\.0)?\s*(?:~|to)\s*3(?:\.0)?", passage.quote) and passage.rects
    counts = re.search(r"of the (\d+) INR values from \S+ to 2149-10-24: (.*)\.$", line)
    inr = [e for e in targeted.patients.events(AF_MAN) if e.content.startswith("INR(PT) ")
           and e.admission_id == event.admission_id]
    assert counts and int(counts[1]) == len(inr)


def test_a_value_inside_the_range_is_within(targeted: Any) -> None:
    answer = targeted.patient_answers.ask("targets", AF_WOMAN, INR_QUESTION)
    [line] = _section(answer, "Compared with the guideline:")
    assert line.startswith("Latest INR 2 on 2118-11-21 [") and "is within the target range 2.0–3.0" in line


def test_a_recommendation_for_women_is_not_applied_to_a_man(targeted: Any) -> None:
    answer = targeted.patient_answers.ask("targets", AF_MAN, INR_QUESTION)
    applied = _section(answer, "Guideline:") + _section(answer, "Compared with the guideline:")
    applied_quotes = [c.quote for line in applied for c in _cited(answer, line) if c.level == "guideline"]
    assert not any(re.search(r"\bwomen\b", q, re.IGNORECASE) for q in applied_quotes)
    apart = _section(answer, "Not for this patient:")
    women = [line for line in apart if "is for women with chronic or paroxysmal atrial fibrillation" in line]
    assert women and f"for patient {AF_MAN}, the patient is male, so it is not applied" in women[0]
    [cited] = _cited(answer, women[0])
    assert cited.level == "guideline" and "maintain the INR at 2.0 to 3.0" in cited.quote


def test_the_same_recommendation_applies_to_a_woman(targeted: Any) -> None:
    answer = targeted.patient_answers.ask("targets", AF_WOMAN, INR_QUESTION)
    assert not any("women" in line for line in _section(answer, "Not for this patient:"))


def test_an_hcm_recommendation_is_not_for_a_patient_without_hcm(targeted: Any) -> None:
    # the HCM guideline's AF recommendations as the PDF prints them, against the demo man's record (AF, no HCM)
    passages = targeted.answers.find_sentences(
        "targets", "anticoagulation in patients with HCM and AF", lambda s: s.lstrip("0123456789. ").startswith(
            "In patients with HCM and"))
    assert passages and all(p.rects for p in passages)
    patient = targeted.patient_answers.records.patient(AF_MAN)
    excluded = exclusions(passages, patient, targeted.patients.events(AF_MAN), "en")
    assert len(excluded) == len(passages)
    for exclusion in excluded.values():
        assert exclusion.population.phrase.startswith("patients with HCM and")
        assert exclusion.reasons == ("the record has no diagnosis of hypertrophic cardiomyopathy",)
    line = exclusion_sentence(next(iter(excluded.values())), 3, AF_MAN, "en")
    assert line.startswith("[3] is for patients with HCM and ") and line.endswith(
        f"for patient {AF_MAN}, the record has no diagnosis of hypertrophic cardiomyopathy, so it is not applied to this "
        "patient.")


def test_chinese_question_compares_in_chinese(targeted: Any) -> None:
    answer = targeted.patient_answers.ask("targets", AF_MAN, "患者的INR是否达到房颤抗凝的目标范围？")
    [line] = _section(answer, "与指南对照：")
    assert line.startswith("最近一次INR 1.4（2149-10-24）[") and "低于目标2.0–3.0 [" in line
