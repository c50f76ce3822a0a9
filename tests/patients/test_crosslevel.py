"""Questions across levels (seed 002 QUERY-003): a question about a real MIMIC-IV demo patient answered from the
patient's events, a real guideline excerpt on anticoagulation in AF and the demo's ICD dictionary, each citation
labelled with its level."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from demo_patients import AF_PATIENT, HCM_AF_PAGES, OTHER_PATIENT

from workspace_app.models.answers import Answer, Citation

QUESTION = "Is this patient's anticoagulation in line with the AF guideline?"


def _levels(answer: Answer) -> dict[str, list[Citation]]:
    found: dict[str, list[Citation]] = {}
    for citation in answer.citations:
        found.setdefault(citation.level, []).append(citation)
    return found


def test_af_patient_answer_cites_patient_guideline_and_vocabulary(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", AF_PATIENT, QUESTION)
    levels = _levels(answer)
    assert set(levels) == {"patient", "guideline", "vocabulary"}
    events = {c.event_id: crossed.patients.event(AF_PATIENT, c.event_id) for c in levels["patient"]}
    assert all(c.patient_id == AF_PATIENT and c.quote == events[c.event_id].content for c in levels["patient"])
    assert any("Atrial fibrillation (ICD-9 42731)" in e.content for e in events.values())
    assert any(e.content.startswith("Prescription: Warfarin") for e in events.values())
    for citation in levels["guideline"]:
        assert citation.document == "ommen-2024-hcm-af.pdf" and citation.rects and citation.event_id is None
        assert "anticoagula" in citation.quote.lower()
    definition = next(c for c in levels["vocabulary"] if c.section == "ICD-9 42731")
    assert definition.quote == "Atrial fibrillation" and definition.document == "MIMIC-IV d_icd_diagnoses"
    assert events.get(definition.event_id) is not None


def test_answer_text_groups_sentences_by_level_each_cited(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", AF_PATIENT, QUESTION)
    lines = answer.text.split("\n\n")
    # the patient's INR against the HCM guideline's 'target international normalized ratio 2 to 3', citing both;
    # a passage for a population the patient is outside of would be set apart under 'Not for this patient:'
    sections = {"Patient record:": {"patient"}, "Guideline:": {"guideline"},
                "Compared with the guideline:": {"patient", "guideline"}, "Not for this patient:": {"guideline"},
                "Definition:": {"vocabulary"}}
    assert [line for line in lines if line in sections] == [h for h in sections if h in lines]
    assert {"Patient record:", "Guideline:", "Compared with the guideline:", "Definition:"} <= set(lines)
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer.text)]
    assert sorted(set(numbers)) == [c.n for c in answer.citations]
    by_n = {c.n: c.level for c in answer.citations}
    section = ""
    for line in lines:
        if line in sections:
            section = line
            continue
        assert re.search(r"\[\d+\]", line)
        cited = {by_n[int(n)] for n in re.findall(r"\[(\d+)\]", line)}
        assert cited == sections[section] if section == "Compared with the guideline:" else cited <= sections[section]


def test_answer_lists_the_graph_entities_crossed(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", AF_PATIENT, QUESTION)
    entities = {e.id: e for e in answer.entities}
    assert {e.workspace_id for e in entities.values()} == {crossed.workspaces.get("af").id}
    assert {"drug class:anticoagulant", "disease:atrial fibrillation"} <= set(entities)
    for entity in entities.values():
        graph_entity = crossed.graph.get_entity(entity.workspace_id, entity.id)
        assert graph_entity is not None and (entity.name, entity.type) == (graph_entity.name, graph_entity.type)
    levels = {c.n: c.level for c in answer.citations}
    for entity in entities.values():
        assert {levels[n] for n in entity.citations} == {"patient", "guideline"}


def test_patient_without_matching_records_says_so(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", OTHER_PATIENT, QUESTION)
    assert f"No record of patient {OTHER_PATIENT} matches the question (anticoagulation, atrial fibrillation)." in answer.text
    assert "patient" not in _levels(answer) and _levels(answer)["guideline"]
    assert "None of the cited records carries a code" in answer.text
    assert not answer.refused and answer.entities == []


def test_guidelines_silent_on_the_question_say_so(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", AF_PATIENT, "Is this patient's potassium chloride dose right for the hypokalemia?")
    assert "The workspace's guidelines say nothing that answers this question." in answer.text
    assert "guideline" not in _levels(answer)


def test_chinese_question_reaches_the_patient_level(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", AF_PATIENT, "该患者的抗凝治疗是否符合房颤指南？")
    assert answer.language == "zh" and answer.text.startswith("患者记录：")
    assert any(c.level == "patient" for c in answer.citations)
    assert "定义：" in answer.text


def test_vocabulary_is_kept_at_import(crossed: Any) -> None:
    [icd] = crossed.patients.definitions("icd9", ["42731"])
    assert icd.title == "Atrial fibrillation"
    labs = {e.title: e for e in crossed.patients.definitions("labitem")}
    assert labs["INR(PT)"].detail == "Blood, Hematology"


def test_citation_level_round_trips_and_old_records_load() -> None:
    citation = Citation(1, "e1", "Patient 1", "", 0, 0, "order", "Warfarin", (), (), 1.0, level="patient",
                        patient_id="1", event_id="e1")
    assert Citation.from_record(citation.to_record()) == citation
    old = {k: v for k, v in citation.to_record().items() if k not in {"level", "patient_id", "event_id"}}
    loaded = Citation.from_record(old)
    assert loaded.level == "guideline" and loaded.event_id is None


EVENTS = """event_id,patient_id,timestamp,event_type,sub_type,content
d1,p1,2150-01-01 08:00:00,history,diagnosis,Diagnosis: Atrial fibrillation
o1,p1,2150-01-01 12:00:00,order,prescription,Prescription: Warfarin 5 mg PO
"""


@pytest.mark.slow
def test_cli_ask_about_a_patient(cli: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path,
                                 excerpt: Callable[[str, int, int], Path]) -> None:
    data = tmp_path / "data"
    source = tmp_path / "events.csv"
    source.write_text(EVENTS, encoding="utf-8")
    assert cli(data, "patients", "import", source).returncode == 0
    assert cli(data, "workspace", "create", "af").returncode == 0
    assert cli(data, "ingest", "--workspace", "af", excerpt(*HCM_AF_PAGES)).returncode == 0
    done = cli(data, "ask", "--workspace", "af", "--patient", "p1", QUESTION, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    patient = [c for c in answer["citations"] if c["level"] == "patient"]
    assert {c["event_id"] for c in patient} == {"d1", "o1"} and all(c["patient_id"] == "p1" for c in patient)
    assert any(c["level"] == "guideline" and c["page_start"] in (1, 2) for c in answer["citations"])
    assert {"disease:atrial fibrillation", "drug class:anticoagulant"} <= {e["id"] for e in answer["entities"]}
    shown = cli(data, "ask", "--workspace", "af", "--patient", "p1", QUESTION)
    assert "(patient) Patient p1" in shown.stdout and "Patient record:" in shown.stdout
    assert "Graph entities crossed" in shown.stdout and "(disease:atrial fibrillation)" in shown.stdout


def test_lab_results_cite_their_lab_item_definition(crossed: Any) -> None:
    answer = crossed.patient_answers.ask("af", AF_PATIENT, "Was this patient's INR in range on warfarin?")
    levels = _levels(answer)
    assert any(c.quote.startswith("INR(PT) ") for c in levels["patient"])
    inr = next(c for c in levels["vocabulary"] if c.quote == "INR(PT)")
    assert inr.section.startswith("MIMIC-IV lab item ") and inr.document == "MIMIC-IV d_labitems"
    assert "INR(PT) (Blood, Hematology)." in answer.text


def test_unknown_patient_is_a_clear_error(crossed: Any) -> None:
    from workspace_app.errors import PatientNotFoundError

    with pytest.raises(PatientNotFoundError, match="No patient 'nobody'"):
        crossed.patient_answers.ask("af", "nobody", QUESTION)
