"""Patient records through the API: two real MIMIC-IV demo patients imported by the CLI beside the running API
processes, then listed, read, searched for related events and asked about, with the error shape for unknown ids,
bad parameters, a broken rules file and a missing key; and an events file imported through the API by the worker."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_stack import Api, Stack, environ, run_cli, wait_settled
from test_api_basics import assert_error

pytestmark = pytest.mark.slow

DEMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "clinical" / "mimic-iv-demo"
SMALL = "10019917"  # the demo's smallest patient (197 events, no AF)
AF_PATIENT = "10025463"  # coded with atrial fibrillation (ICD-9 42731) and prescribed warfarin
SEED = "labevents:"  # the small patient's first lab result is the query event of the related-event tests
WORKSPACE = "AF patients"
QUESTION = "Is this patient's anticoagulation in line with the AF guideline?"
HCM_AF_PAGES = ("ommen-2024-hcm.pdf", 47, 48)  # 2024 AHA/ACC HCM guideline, 8.4 "Management of ... HCM and AF"


@pytest.fixture(scope="module")
def imported(stack: Stack) -> dict[str, Any]:
    """The two demo patients imported with `workspace-app patients import` while the API processes run."""
    if not (DEMO / "hosp" / "admissions.csv.gz").is_file():
        pytest.skip(f"the MIMIC-IV demo is not at {DEMO.resolve()}")
    done = run_cli(stack, "patients", "import", str(DEMO), "--patients", f"{SMALL},{AF_PATIENT}")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["patients"] == 2 and report["events"] > 197 and not report["errors"]
    return report


@pytest.fixture(scope="module")
def seed_event(client: httpx.Client, imported: dict[str, Any]) -> str:
    """The id of the small patient's first lab result."""
    labs = client.get(f"/patients/{SMALL}/events", params={"type": "lab"}).json()
    return str(next(e["event_id"] for e in labs if e["event_id"].startswith(SEED)))


@pytest.fixture(scope="module")
def af_workspace(client: httpx.Client, excerpt: Callable[[str, int, int], Path],
                 imported: dict[str, Any]) -> Iterator[str]:
    """A workspace with the AF guideline excerpt uploaded through the API and ingested by the worker (removed after,
    so the other API tests keep their one workspace)."""
    assert client.post("/workspaces", json={"name": WORKSPACE}).status_code == 201
    try:
        pdf = excerpt(*HCM_AF_PAGES)
        with pdf.open("rb") as stream:
            sent = client.post(f"/workspaces/{WORKSPACE}/documents",
                               files={"file": ("ommen-2024-hcm-af.pdf", stream, "application/pdf")})
        assert sent.status_code == 202, sent.text
        assert [d["status"] for d in wait_settled(client, WORKSPACE, 300)] == ["ready"]
        yield WORKSPACE
    finally:
        client.delete(f"/workspaces/{WORKSPACE}")


def test_patients_are_listed_with_counts(client: httpx.Client, imported: dict[str, Any]) -> None:
    patients = {p["patient_id"]: p for p in client.get("/patients").json()}
    assert set(patients) == {SMALL, AF_PATIENT}
    assert patients[SMALL]["events"] == 197 and patients[SMALL]["admissions"] >= 1
    assert sum(p["events"] for p in patients.values()) == imported["events"]
    assert {"gender", "age", "first_time", "last_time"} <= set(patients[SMALL])


def test_events_in_time_order_with_and_without_a_type(client: httpx.Client, imported: dict[str, Any]) -> None:
    events = client.get(f"/patients/{SMALL}/events").json()
    assert len(events) == 197 and [e["timestamp"] for e in events] == sorted(e["timestamp"] for e in events)
    first = events[0]
    assert set(first) >= {"event_id", "patient_id", "timestamp", "event_type", "sub_type", "content", "source_table",
                          "source_row", "links", "concepts", "admission_id"}
    labs = client.get(f"/patients/{SMALL}/events", params={"type": "lab"}).json()
    assert labs and {e["event_type"] for e in labs} == {"lab"}
    assert [e["event_id"] for e in labs] == [e["event_id"] for e in events if e["event_type"] == "lab"]
    assert client.get(f"/patients/{SMALL}/events", params={"type": "nothing"}).json() == []


def test_admissions_of_a_patient(client: httpx.Client, imported: dict[str, Any]) -> None:
    admissions = client.get(f"/patients/{SMALL}/admissions").json()
    assert admissions and all(a["patient_id"] == SMALL and a["admit_time"] <= a["discharge_time"] for a in admissions)
    events = client.get(f"/patients/{SMALL}/events", params={"type": "admission"}).json()
    assert {a["admission_id"] for a in admissions} == {e["admission_id"] for e in events}


def test_related_events_are_what_related_returns(stack: Stack, client: httpx.Client, seed_event: str) -> None:
    params = {"top_k": 7, "window_h": 12, "tau_h": 8}
    response = client.get(f"/patients/{SMALL}/events/{seed_event}/related", params=params)
    assert response.status_code == 200, response.text
    hits = response.json()
    assert len(hits) == 7 and all(set(h) == {"event_id", "score", "reasons"} for h in hits)
    assert {"sim_vec", "time_score", "concept_overlap", "rule_hits"} <= set(hits[0]["reasons"])
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    done = run_cli(stack, "related", "--patient", SMALL, "--event", seed_event, "--top-k", "7", "--window-h", "12",
                   "--tau-h", "8", "--json")
    assert done.returncode == 0, done.stderr
    assert hits == json.loads(done.stdout)  # PatientService.related() through the CLI: same events, order, reasons
    default = client.get(f"/patients/{SMALL}/events/{seed_event}/related").json()
    assert len(default) == 20


def test_unknown_patients_and_events_are_404_with_a_message(client: httpx.Client, imported: dict[str, Any]) -> None:
    for path in ("/patients/nobody/events", "/patients/nobody/admissions"):
        assert "'nobody'" in assert_error(client.get(path), 404, "patient_not_found")
    message = assert_error(client.get(f"/patients/{SMALL}/events/nope/related"), 404, "event_not_found")
    assert message == f"Patient '{SMALL}' has no event 'nope'."


@pytest.mark.parametrize(("params", "named"), [
    ({"top_k": 0}, "query.top_k"), ({"top_k": 1000}, "query.top_k"), ({"top_k": "many"}, "query.top_k"),
    ({"window_h": -1}, "query.window_h"), ({"tau_h": 0}, "query.tau_h"), ({"tau_h": "soon"}, "query.tau_h"),
])
def test_bad_related_parameters_are_422_naming_them(
    client: httpx.Client, seed_event: str, params: dict[str, Any], named: str
) -> None:
    response = client.get(f"/patients/{SMALL}/events/{seed_event}/related", params=params)
    assert named in assert_error(response, 422, "invalid_request")


def test_patient_routes_need_a_key(stack: Stack, guarded: httpx.Client, seed_event: str) -> None:
    paths = ["/patients", f"/patients/{SMALL}/events", f"/patients/{SMALL}/admissions",
             f"/patients/{SMALL}/events/{seed_event}/related"]
    with httpx.Client(base_url=stack.guarded_url, timeout=30, trust_env=False) as anonymous:
        for path in paths:
            assert_error(anonymous.get(path), 401, "api_key")
        asked = anonymous.post(f"/workspaces/x/patients/{SMALL}/ask", json={"question": "x"})
        assert_error(asked, 401, "api_key")
    assert all(guarded.get(path).status_code == 200 for path in paths)


def test_a_broken_rules_file_is_the_rules_error(stack: Stack, seed_event: str, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - name: a\n    weight: -1\n", encoding="utf-8")
    api = Api(stack.data_dir, environ(**stack.common, WORKSPACE_PATIENTS__RULES_FILE=str(rules)), "api-rules")
    try:
        api.wait_ready()
        with httpx.Client(base_url=api.url, timeout=60, trust_env=False) as broken:
            assert broken.get(f"/patients/{SMALL}/events").status_code == 200  # only related events read the rules
            message = assert_error(broken.get(f"/patients/{SMALL}/events/{seed_event}/related"), 422, "rules_file")
    finally:
        api.stop()
    assert message.startswith(f"{rules}: rule 1 (a): a rule needs at least one if_* key")


def test_ask_about_a_patient_cites_each_level(client: httpx.Client, af_workspace: str) -> None:
    response = client.post(f"/workspaces/{af_workspace}/patients/{AF_PATIENT}/ask",
                           json={"question": QUESTION, "mode": "naive"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["workspace"] == af_workspace and answer["question"] == QUESTION
    levels: dict[str, list[dict[str, Any]]] = {}
    for citation in answer["citations"]:
        levels.setdefault(citation["level"], []).append(citation)
    assert set(levels) == {"patient", "guideline", "vocabulary"}
    events = {e["event_id"]: e for e in client.get(f"/patients/{AF_PATIENT}/events").json()}
    for citation in levels["patient"]:
        assert citation["patient_id"] == AF_PATIENT and citation["quote"] == events[citation["event_id"]]["content"]
    assert all(c["event_id"] is None and c["rects"] for c in levels["guideline"])
    assert all(c["event_id"] in events for c in levels["vocabulary"])
    assert any(c["section"] == "ICD-9 42731" and c["quote"] == "Atrial fibrillation" for c in levels["vocabulary"])
    assert [e["n"] for e in answer["evidences"]] == [c["n"] for c in levels["guideline"]]
    assert "Patient record:" in answer["answer"] and "Guideline:" in answer["answer"]
    links = client.get(f"/workspaces/{af_workspace}/patients/{AF_PATIENT}/links")
    assert links.status_code == 200, links.text
    linked = {link["entity_id"]: link for link in links.json()}
    assert linked["disease:atrial fibrillation"]["type"] == "LINKS_TO"
    assert "ICD-9 42731" in linked["disease:atrial fibrillation"]["codes"]
    crossed = {e["id"]: e["name"] for e in answer["entities"]}
    assert "disease:atrial fibrillation" in crossed and set(crossed) <= set(linked)
    assert all(linked[i]["name"] == name for i, name in crossed.items())


def test_ask_about_a_patient_s_timeline_cites_the_record_or_refuses(client: httpx.Client, af_workspace: str) -> None:
    labs = client.get(f"/patients/{AF_PATIENT}/events", params={"type": "lab"}).json()
    high = [e for e in labs if "abnormal:inr(pt)↑" in e["concepts"]]
    latest = {e["event_id"] for e in high if e["timestamp"] == high[-1]["timestamp"]}
    response = client.post(f"/workspaces/{af_workspace}/patients/{AF_PATIENT}/ask",
                           json={"question": "患者的INR最近一次偏高是什么时候？"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["language"] == "zh" and not answer["refused"]
    assert {c["event_id"] for c in answer["citations"]} == latest
    assert all(c["level"] == "patient" and c["patient_id"] == AF_PATIENT for c in answer["citations"])
    silent = client.post(f"/workspaces/{af_workspace}/patients/{AF_PATIENT}/ask",
                         json={"question": "When did the patient last get apixaban?"}).json()
    assert silent["refused"] and silent["citations"] == [] and "does not say" in silent["answer"]


def test_ask_about_unknown_patients_workspaces_and_bad_bodies(client: httpx.Client, af_workspace: str) -> None:
    unknown = client.post(f"/workspaces/{af_workspace}/patients/nobody/ask", json={"question": QUESTION})
    assert "'nobody'" in assert_error(unknown, 404, "patient_not_found")
    elsewhere = client.post(f"/workspaces/Nowhere/patients/{AF_PATIENT}/ask", json={"question": QUESTION})
    assert_error(elsewhere, 404, "workspace_not_found")
    bad_mode = client.post(f"/workspaces/{af_workspace}/patients/{AF_PATIENT}/ask", json={"question": "x", "mode": "fast"})
    assert "mode" in assert_error(bad_mode, 422, "invalid_request")
    empty = client.post(f"/workspaces/{af_workspace}/patients/{AF_PATIENT}/ask", json={"question": ""})
    assert "question" in assert_error(empty, 422, "invalid_request")


def test_an_import_queued_through_the_api_is_run_by_the_worker(client: httpx.Client, stack: Stack) -> None:
    source = stack.data_dir / "imports" / "api-events.csv"  # the default import root
    source.parent.mkdir(exist_ok=True)
    source.write_text(
        "event_id,patient_id,timestamp,event_type,sub_type,content\n"
        "api1,P-api,2150-04-01 08:00:00,lab,Chemistry,Potassium 3.0 mmol/L (low; ref 3.5–5.1)\n"
        "api2,P-api,later,order,Medication,Potassium chloride 20 mEq PO\n",
        encoding="utf-8",
    )
    queued = client.post("/patients/imports", json={"path": str(source)})
    assert queued.status_code == 202, queued.text
    job = queued.json()
    assert (job["status"], job["path"]) == ("queued", str(source.resolve()))
    deadline = time.monotonic() + 120
    while (status := client.get(f"/patients/imports/{job['id']}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert (status["status"], status["events"], status["error_count"]) == ("done", 1, 1), status
    assert status["first_errors"][0].startswith("api-events.csv:3: timestamp 'later'")
    assert [e["event_id"] for e in client.get("/patients/P-api/events").json()] == ["api1"]
    message = assert_error(client.post("/patients/imports", json={"path": str(source.parent / "nowhere")}), 422,
                           "import_source")
    assert message.startswith("Nothing can be imported from that path.")
    assert_error(client.get("/patients/imports/nope"), 404, "import_not_found")


@pytest.mark.parametrize("path", [
    "0" * 4000,  # a name over NAME_MAX (found by the fuzz: OSError ENAMETOOLONG from stat, a 500)
    "a\x00b.csv",  # a NUL byte (ValueError from resolve, a 500)
], ids=["long-name", "nul-byte"])
def test_a_path_the_os_cannot_look_up_is_refused_like_any_other(client: httpx.Client, stack: Stack, path: str) -> None:
    (stack.data_dir / "imports").mkdir(exist_ok=True)  # the import root exists: the lookup reaches the name
    message = assert_error(client.post("/patients/imports", json={"path": path}), 422, "import_source")
    assert message.startswith("Nothing can be imported from that path.")


def test_similar_patients_with_reasons(client: httpx.Client, imported: dict[str, Any]) -> None:
    found = {p["patient_id"]: p for p in client.get(f"/patients/{AF_PATIENT}/similar").json()}
    assert SMALL in found and AF_PATIENT not in found  # the other demo patient shares labs and drugs; never itself
    assert found[SMALL]["reasons"] and found[SMALL]["shared"] and 0 < found[SMALL]["score"] <= 1
    assert_error(client.get("/patients/nobody/similar"), 404, "patient_not_found")
    assert client.get(f"/patients/{AF_PATIENT}/similar", params={"top_k": 0}).status_code == 422
