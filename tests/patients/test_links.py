"""LINKS_TO (issue 13, deliverable 5): a real demo patient's coded diagnoses and drugs linked to the entities of a
workspace's graph built from a real guideline excerpt, by the two lexicons' shared names."""

from __future__ import annotations

from typing import Any

from demo_patients import AF_PATIENT, OTHER_PATIENT

from workspace_app.graph.links import name_concept, names_entity_id
from workspace_app.models.events import Event
from workspace_app.patients.links import concept_entity_id, event_entity_ids, lexicon_coverage


def test_patient_concepts_map_to_graph_lexicon_entities_by_shared_names() -> None:
    assert concept_entity_id("disease:atrial fibrillation") == "disease:atrial fibrillation"
    assert concept_entity_id("class:anticoagulant") == "drug class:anticoagulant"
    assert concept_entity_id("drug:warfarin") == "drug:warfarin"
    # A lab item is a test, never the drug of the same name; its Chinese alias (血钾) finds it.
    assert concept_entity_id("lab:potassium") == "test:serum potassium"
    assert concept_entity_id("abnormal:potassium↓") == "test:serum potassium"
    assert name_concept("房颤") is not None and name_concept("af") is not None
    assert names_entity_id(["no such thing", "neither"], ("disease",)) is None


def test_icd_titles_map_to_the_concepts_they_name() -> None:
    event = Event("diagnoses_icd:1:1", "p", "2150-01-01", "history", "diagnosis",
                  "Diagnosis: Atrial fibrillation (ICD-9 42731)", "diagnoses_icd", 1, concepts=("icd:42731",))
    assert event_entity_ids(event) == {"disease:atrial fibrillation": ["icd:42731"]}


def test_lexicon_coverage_is_counted_over_every_patient_concept() -> None:
    mapped, total, unmapped = lexicon_coverage()
    assert 0 < mapped < total and len(unmapped) == total - mapped
    assert "class:antibiotic" in unmapped  # the graph lexicon is cardiology: no antibiotics


def test_af_patient_links_to_atrial_fibrillation_and_its_anticoagulant(crossed: Any) -> None:
    links = {link.entity.id: link for link in crossed.patient_links.links("af", AF_PATIENT)}
    af = links["disease:atrial fibrillation"]
    assert "ICD-9 42731" in af.codes and af.events >= 1
    for event_id in af.event_ids:
        assert crossed.patients.event(AF_PATIENT, event_id).patient_id == AF_PATIENT
    drugs = [e for e in crossed.patients.events(AF_PATIENT) if "class:anticoagulant" in e.concepts]
    assert drugs, "the AF patient's drugs include an anticoagulant"
    anticoagulant = links["drug class:anticoagulant"]
    assert set(anticoagulant.event_ids) <= {e.event_id for e in drugs}
    present = {e.id for e in crossed.graph.entities(crossed.workspaces.get("af").id)}
    assert set(links) <= present


def test_a_concept_without_a_graph_entity_makes_no_edge(crossed: Any) -> None:
    links = crossed.patient_links.links("af", AF_PATIENT)
    concepts = {c for link in links for c in link.concepts}
    events = crossed.patients.events(AF_PATIENT)
    unlinked = {c for e in events for c in e.concepts} - concepts
    present = {e.id for e in crossed.graph.entities(crossed.workspaces.get("af").id)}
    # e.g. antibiotics (no graph lexicon entity) and concepts whose entity this excerpt never mentions
    assert unlinked and all(concept_entity_id(c) not in present for c in unlinked if not c.startswith("icd:"))
    assert concept_entity_id("class:antibiotic") is None


def test_links_are_per_workspace(crossed: Any) -> None:
    crossed.workspaces.create("empty")
    assert crossed.patient_links.links("empty", AF_PATIENT) == []
    assert all(link.patient_id == OTHER_PATIENT for link in crossed.patient_links.links("af", OTHER_PATIENT))
