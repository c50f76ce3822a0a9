"""Treatment links learned from the record (issue 28): the miner on the MIMIC-IV demo's training patients, the
mined rules file (provenance, a user's rules overriding it), and related events reranked with the links for a
test patient the miner never saw."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from workspace_app.adapters.cli import main as cli_main
from workspace_app.patients.link_mining import (
    Link,
    MiningOptions,
    Timeline,
    mine_links,
    read_timelines,
    split_patients,
    write_rules,
)
from workspace_app.patients.mimic import read_rows
from workspace_app.patients.rules import DEFAULT_LINKS, RuleSet, load_rules

# The demo's smallest TEST patient (split_patients, 40 %) with a high INR followed by vitamin K within 24 h.
TEST_PATIENT = "10020640"


@pytest.fixture(scope="session")
def split(demo: Path) -> tuple[list[str], list[str]]:
    """(training, test) ids of the demo's patients."""
    return split_patients([row["subject_id"] for _, row in read_rows(demo / "hosp" / "patients.csv.gz")])


@pytest.fixture(scope="session")
def mined(demo: Path, split: tuple[list[str], list[str]]) -> tuple[list[Timeline], list[Link], dict[str, list[float]]]:
    """(timelines, links, grades) of the training patients, mined with the default thresholds."""
    timelines, grades = read_timelines(demo, split[0])
    return timelines, mine_links(timelines), grades


def _link(links: list[Link], finding: str, treatment: str) -> Link | None:
    return next((link for link in links if link.finding == finding and link.treatment == treatment), None)


def test_split_is_by_patient_and_stable(split: tuple[list[str], list[str]]) -> None:
    train, test = split
    assert not set(train) & set(test)
    assert 30 <= len(test) <= 50 and len(train) + len(test) == 100
    assert split_patients(train + test) == (train, test)
    assert TEST_PATIENT in test


def test_miner_finds_known_treatments_above_chance(mined: Any) -> None:
    _, links, grades = mined
    for finding, treatment in (("abnormal:potassium↓", "med:potassium chloride"),
                               ("abnormal:magnesium↓", "med:magnesium sulfate"),
                               ("abnormal:inr(pt)↑↑↑", "med:phytonadione"),
                               ("abnormal:hemoglobin↓↓↓", "med:packed red blood cells")):
        link = _link(links, finding, treatment)
        assert link is not None, (finding, treatment)
        assert link.lift > 1 and link.lift_lower >= MiningOptions().min_lift and link.patient_lift > 1
        assert link.support >= 5 and 0 <= link.median_delay_h <= 24
    # The grades are cut-points learned from the results: a worse half and a worst quarter of low haemoglobins.
    assert grades["hemoglobin↓"][0] > grades["hemoglobin↓"][1]


def test_miner_emits_no_link_for_a_pair_that_never_co_occurs(mined: Any) -> None:
    timelines, links, _ = mined
    finding = "abnormal:magnesium↓"
    together: set[str] = set()
    every_key: set[str] = set()
    for timeline in timelines:
        every_key |= set(timeline.keys)
        for hour, found in zip(timeline.anchors, timeline.findings, strict=True):
            if finding in found:
                together |= {k for k, times in timeline.keys.items() if np.any((times >= hour) & (times <= hour + 24))}
    never = every_key - together
    assert "med:phytonadione" in never or never  # the record has keys never seen after a low magnesium
    emitted = {link.treatment for link in links if link.finding == finding}
    assert emitted and emitted <= together and not emitted & never


def test_mined_rules_file_has_provenance_and_evidence(mined: Any, tmp_path: Path) -> None:
    _, links, grades = mined
    path = tmp_path / "mined.yaml"
    write_rules(path, links, grades, MiningOptions(), {"command": "workspace-app patients mine-links demo",
                                                        "split": {"rule": "by patient id"}})
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["provenance"]["command"].startswith("workspace-app patients mine-links")
    assert data["provenance"]["thresholds"]["min_lift"] == MiningOptions().min_lift
    loaded = load_rules(path)
    assert len(loaded.links) == len(links) and not loaded.rules
    assert all(link.evidence and link.evidence["lift"] > 1 for link in loaded.links)
    potassium = next(link for link in loaded.links if link.name == "mined: potassium↓ -> med:potassium chloride")
    assert "potassium chloride often follows low potassium in this record" in potassium.reason
    # The shipped file says how it was made, on which split.
    shipped = load_rules(DEFAULT_LINKS)
    assert shipped.provenance["command"].startswith("workspace-app patients mine-links")
    assert "sha256(patient id)" in shipped.provenance["split"]["rule"]
    assert shipped.provenance["split"]["training_patients"] == 60


def test_a_user_rules_file_overrides_a_mined_link(tmp_path: Path) -> None:
    mined = load_rules(DEFAULT_LINKS)
    target = next(link for link in mined.links if link.name == "mined: potassium↓ -> med:potassium chloride")
    user = tmp_path / "rules.yaml"
    user.write_text(yaml.safe_dump({"rules": [
        {"name": target.name, "if_any_abnormal": ["K+↓"], "then_any_medication": ["potassium chloride"],
         "window_hours": 6, "weight": 0.05},
        {"name": "my_mg", "if_any_abnormal": ["magnesium↓"], "then_any_medication": ["magnesium sulfate"],
         "window_hours": 12, "weight": 0.1},
    ]}, allow_unicode=True), encoding="utf-8")
    rules = load_rules(user, DEFAULT_LINKS)
    names = {link.name for link in rules.links}
    assert target.name not in names  # same name
    assert "mined: magnesium↓ -> med:magnesium sulfate" not in names  # same if/then
    assert len(rules.links) == len(mined.links) - 2
    assert {r.name: r.window_h for r in rules.rules} == {target.name: 6.0, "my_mg": 12.0}


def test_cli_refuses_a_folder_that_is_not_mimic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["--data-dir", str(tmp_path / "data"), "patients", "mine-links", str(tmp_path),
                     "--out", str(tmp_path / "out.yaml")])
    assert code == 2 and "not a MIMIC-IV folder" in capsys.readouterr().err
    assert not (tmp_path / "out.yaml").exists()


@pytest.fixture(scope="module")
def test_patient(demo: Path, build: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An app (links on, the default) with one test patient imported."""
    app = build(tmp_path_factory.mktemp("links") / "data")
    app.patients.import_path(demo, [TEST_PATIENT])
    return app


def _high_inr_then_vitamin_k(app: Any) -> list[tuple[str, set[str]]]:
    """(lab event, vitamin K orders and administrations within 24 h after it) of the patient, read from the record."""
    from workspace_app.models.events import epoch_seconds

    events = app.patients.events(TEST_PATIENT)
    hours = {e.event_id: epoch_seconds(e.timestamp) / 3600 for e in events}
    given = [e for e in events if e.source_table in ("inputevents", "poe", "prescriptions", "emar")]
    vitamin_k = [e.event_id for e in given if "phytonadione" in e.content.lower() or "vitamin k" in e.content.lower()]
    pairs = []
    for event in events:
        if event.content.startswith("INR(PT) ") and "(high" in event.content:
            after = {c for c in vitamin_k if 0 <= hours[c] - hours[event.event_id] <= 24}
            if after:
                pairs.append((event.event_id, after))
    return pairs


def test_related_events_rank_a_mined_treatment_in_the_top_10(test_patient: Any) -> None:
    from workspace_app.patients.related import related_events

    app = test_patient
    pairs = _high_inr_then_vitamin_k(app)
    assert pairs
    memory = app.patients.memory(TEST_PATIENT)
    hand: RuleSet = load_rules()
    for lab, vitamin_k in pairs:
        hits = [h for h in app.patients.related(TEST_PATIENT, lab, top_k=10) if h["event_id"] in vitamin_k]
        assert hits and hits[0]["reasons"]["mined_link"] > 0
        reason = hits[0]["reasons"]["links"][0]
        assert "often follows" in reason and "high inr(pt)" in reason and "× chance" in reason
        assert "phytonadione" in reason or "vitamin k" in reason
        # No hand rule links them: with the hand rules alone vitamin K is not in the top 10.
        assert not {h["event_id"] for h in related_events(memory, hand, lab, top_k=10)} & vitamin_k


def test_links_are_on_by_default_and_can_be_switched_off(test_patient: Any, embedder: Any, tmp_path: Path) -> None:
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings

    assert test_patient.patients.rules.links  # the shipped mined_rules.yaml, beside the shipped rules.yaml
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path / "data"
    settings.patients.mined_links = False
    app = build_app(settings, embedder=embedder)
    try:
        assert app.patients.rules.links == () and app.patients.rules.rules
    finally:
        app.catalog.close()
