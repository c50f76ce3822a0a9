"""The small grammar of targets and populations (lexicon/measures.tsv, comparators.tsv, populations.tsv) on
sentences as the corpus guidelines print them, and a patient's values read from the real MIMIC-IV demo."""

from __future__ import annotations

from typing import Any

import pytest

from workspace_app.models.events import Event, Patient
from workspace_app.patients.populations import outside_reasons, population_part, read_population
from workspace_app.patients.targets import bound_text, load_grammar, measure_readings, read_targets

# Sentences of the corpus (mosca-2011 p.11, zh-acute-af-ed-2024 p.10, grundy-2018 pp.8, 17, 27, ommen-2024 p.5).
WOMEN_INR = ("For women with chronic or paroxysmal atrial fibrillation, warfarin should be used to maintain the INR at "
             "2.0 to 3.0 unless they are considered to be at low risk for stroke")
ZH_INR = ("服用华法林时，起始量从1.5~3 mg 开始， INR 目标范围一般在2.0~3.0 之间（>65 岁NVAF 患者也可考虑在1.5~2. 0 之间 "
          "[117]），INR 处于治疗目标范围内的时间 （TTR）应>70% [118-120]。")
LDL_BELOW = ("For adults with an LDL-C level less than 70 mg/dL (<1.8 mmol/L), measurement of direct LDL-C or modified "
             "LDL-C estimate is reasonable to improve accuracy over the Friedewald formula")
LDL_AGES = ("In adults 40 to 75 years of age without diabetes mellitus and with LDL-C levels 70 to 189 mg/dL, at a "
            "10-year ASCVD risk of 7.5% to 19.9%, if a decision about statin therapy is uncertain, consider measuring CAC.")
OLDER = ("In adults older than 75 years of age with an LDL-C level of 70 to 189 mg/dL (1.7 to 4.8 mmol/L), initiating a "
         "moderate-intensity statin may be reasonable.")
HCM_AF = ("Patients with HCM and persistent or paroxysmal atrial fibrillation have a sufficiently increased risk of "
          "stroke such that oral anticoagulation should be considered the default treatment option")


def _one(sentence: str) -> Any:
    [target] = read_targets(sentence)
    return target


def test_ranges_in_english_and_chinese() -> None:
    english, chinese = _one(WOMEN_INR), _one(ZH_INR)
    assert (english.measure, english.comparator, english.low, english.high, english.is_target) == ("inr", "range", 2.0, 3.0, True)
    assert (chinese.measure, chinese.low, chinese.high, chinese.is_target) == ("inr", 2.0, 3.0, True)
    assert english.place(1.4) == "below" and english.place(2.0) == "within" and english.place(3.4) == "above"


def test_a_number_in_another_unit_is_not_the_measures() -> None:
    # 'TTR … >70%' after the second INR, and '>65 岁' an age: neither is an INR target
    assert [t.measure for t in read_targets(ZH_INR)] == ["inr"]
    assert read_targets("Warfarin dose adjusted by the INR 2 days later.") == []


def test_one_sided_bounds_and_unit_conversion() -> None:
    below = _one(LDL_BELOW)
    assert (below.comparator, below.low, below.high, below.is_target) == ("below", None, 70.0, False)
    assert below.place(56) == "within" and below.place(142) == "above"
    chinese = _one("LDL-C 目标值低于1.8 mmol/L")
    assert chinese.high == pytest.approx(69.6, abs=0.1) and chinese.is_target
    ldl = load_grammar().measures["ldl-c"]
    assert bound_text(chinese, ldl, "en") == "below 1.8 mmol/L" and bound_text(below, ldl, "zh") == "<70 mg/dL"
    potassium = _one("Keep serum potassium above 4.0 mEq/L")
    assert (potassium.measure, potassium.comparator, potassium.low) == ("potassium", "above", 4.0)


def test_populations_read_from_the_recommendation() -> None:
    women = read_population(WOMEN_INR)
    assert women is not None and women.sex == "F" and [c.name for c in women.conditions] == ["atrial fibrillation"]
    hcm = read_population(HCM_AF)
    assert hcm is not None and {c.name for c in hcm.conditions} == {"hypertrophic cardiomyopathy", "atrial fibrillation"}
    ages = read_population(LDL_AGES)
    assert ages is not None and ages.ages == (("range", 40.0, 75.0, "40 to 75 years"),)
    assert [(c.name, c.excluded) for c in ages.conditions] == [("diabetes", True)]
    older = read_population(OLDER)
    assert older is not None and older.ages[0][:2] == ("above", 75.0)
    assert population_part("Warfarin is recommended to reduce stroke risk.") == ""
    chinese = read_population("对于房颤合并HF 的患者，NOAC 较华法林有更低的主要心血管病事件发生率；")
    assert chinese is not None and {c.name for c in chinese.conditions} == {"atrial fibrillation", "heart failure"}


def _diagnosis(text: str) -> Event:
    return Event("d", "p", "2150-01-01 00:00:00", "history", "diagnosis", f"Diagnosis: {text}",
                 source_table="diagnoses_icd")


def test_who_is_outside_and_why() -> None:
    af = [_diagnosis("Atrial fibrillation (ICD-9 42731)")]
    man, woman = Patient("m", "M", 66), Patient("w", "F", 80)
    women, hcm, ages = read_population(WOMEN_INR), read_population(HCM_AF), read_population(LDL_AGES)
    assert women and hcm and ages
    assert outside_reasons(women, man, af, "en") == ["the patient is male"]
    assert outside_reasons(women, woman, af, "en") == []
    assert outside_reasons(hcm, woman, af, "en") == ["the record has no diagnosis of hypertrophic cardiomyopathy"]
    assert outside_reasons(hcm, woman, [*af, _diagnosis("Other hypertrophic cardiomyopathy (ICD-9 42518)")], "en") == []
    diabetic = [_diagnosis("Diabetes mellitus without mention of complication (ICD-9 25000)")]
    assert outside_reasons(ages, woman, diabetic, "zh") == ["记录中有糖尿病的诊断", "患者80岁（推荐针对40 to 75 years）"]
    assert outside_reasons(ages, man, [], "en") == []


def test_readings_of_a_measure_from_the_demo(imported: tuple[Any, Any, Any]) -> None:
    app = imported[0]
    events = app.patients.events("10019917")
    potassium = measure_readings(load_grammar().measures["potassium"], events)
    labs = [e for e in events if e.content.startswith("Potassium ") and e.event_type == "lab"]
    assert potassium and len(potassium) == len([e for e in labs if e.content.split()[1][0].isdigit()])
    assert all(r.event.content.startswith(f"Potassium {r.value:g}") for r in potassium)


def test_one_of_two_alternatives_is_enough() -> None:
    either = read_population("In patients with heart failure or in whom chest pain does not respond to medical "
                             "therapy, angiography is useful.")
    assert either is not None and [c.alternative for c in either.conditions] == [0, 1]
    failing = [_diagnosis("Congestive heart failure, unspecified (ICD-9 4280)")]
    assert outside_reasons(either, Patient("p", "M", 70), failing, "en") == []
    assert len(outside_reasons(either, Patient("p", "M", 70), [], "en")) == 2
    # 'or' between two words of one condition does not make alternatives
    hcm = read_population(HCM_AF)
    assert hcm is not None and {c.alternative for c in hcm.conditions} == {0}


def test_a_score_or_a_duration_after_the_name_is_not_its_target() -> None:
    assert read_targets("TTR ：INR 处于治疗目标范围内的时间HAS-BLED 评分最高分为9 分，评分≥3 分提示出血风险高") == []
    assert read_targets("In adults with a 10-year ASCVD risk of 20% or higher, a statin is reasonable.") == []
    assert read_population("In adults with a 10-year ASCVD risk of 20% or higher, a statin is reasonable.") is None


def test_an_alternative_naming_no_known_condition_is_not_held_against_the_patient() -> None:
    unknown_first = read_population("In those patients with atherosclerotic coronary risk factors or in whom chest "
                                    "pain does not respond to medical therapy, angiography is useful.")
    assert unknown_first is not None and outside_reasons(unknown_first, Patient("p", "M", 91), [], "en") == []
