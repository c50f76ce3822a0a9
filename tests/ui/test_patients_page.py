"""The Patients page through Streamlit's AppTest on a real data dir: MIMIC-IV demo patient 10019917 and a patient
from a generic events file whose content is hostile markup. The list with its counts, the type filter and the
admission zoom, an event's related events with their reasons, the URL round trip, the empty state, escaping,
and a broken rules file reported as a message."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
if str(REPO) not in sys.path:  # components/ belongs to the Streamlit app, not to the installed packages
    sys.path.insert(0, str(REPO))

from components.related_events import reason_text, rule_phrase, time_phrase
from components.text import escape_markdown
from workspace_app.adapters.worker import handle_job
from workspace_app.errors import RulesFileError
from workspace_app.jobs.entries import JobEntry
from workspace_app.models.events import Event, ImportStep
from workspace_app.patients.rules import load_rules

DEMO = REPO / ".." / "shared" / "clinical" / "mimic-iv-demo"
PATIENT = "10019917"
HOSTILE_PATIENT = "P-hostile"
LONE_PATIENT = "P-one-event"
HOSTILE = "<b>x</b> **y** :red[z] [link](http://example.com)"
EVENTS_CSV = (
    "event_id,patient_id,timestamp,event_type,sub_type,content\n"
    f'h1,{HOSTILE_PATIENT},2150-01-01 08:00:00,lab,Chemistry,"{HOSTILE}"\n'
    f"h2,{HOSTILE_PATIENT},2150-01-01 10:00:00,order,Medication,Potassium chloride 20 mEq PO\n"
    f"a1,{LONE_PATIENT},2150-02-01 09:00:00,nursing,Vital signs,Blood pressure 120/80 mmHg\n"
)


@pytest.fixture(scope="module")
def demo() -> Path:
    """The MIMIC-IV Clinical Database Demo folder."""
    if not (DEMO / "hosp" / "admissions.csv.gz").is_file():
        pytest.skip(f"the MIMIC-IV demo is not at {DEMO.resolve()}")
    return DEMO


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], demo: Path) -> Path:
    """A data dir with the demo patient and the hostile events-file patient imported."""
    folder = tmp_path_factory.mktemp("patients-page")
    app = build(folder / "data")
    assert app.patients.import_path(demo, [PATIENT]).events > 100
    events_file = folder / "hostile.csv"
    events_file.write_text(EVENTS_CSV, encoding="utf-8")
    report = app.patients.import_path(events_file)
    assert report.events == 3 and not report.errors
    return folder / "data"


@pytest.fixture(scope="module")
def empty_dir(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any]) -> Path:
    """A data dir with no patient."""
    folder = tmp_path_factory.mktemp("patients-empty")
    build(folder / "data")
    return folder / "data"


@pytest.fixture
def service(data_dir: Path, build: Callable[..., Any]) -> Any:
    """An App on the page's data dir, to check what the page shows."""
    return build(data_dir)


@pytest.fixture
def open_patients(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., AppTest]]:
    """open_patients(data_dir, **query_params): the Patients page on that data dir, opened with that URL."""

    def _open(data_dir: Path, **params: str) -> AppTest:
        monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
        monkeypatch.chdir(data_dir.parent)
        st.cache_resource.clear()
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.run()
        at.switch_page("pages/patients.py")
        at.query_params.update(params)
        at.run()
        assert not at.exception, at.exception
        return at

    yield _open
    st.cache_resource.clear()


def tables(at: AppTest) -> list[pd.DataFrame]:
    """The page's dataframes: the patient list, then the events of the timeline."""
    return [frame.value for frame in at.dataframe]


def markdown(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def choose(at: AppTest, key: str, value: Any) -> AppTest:
    at.selectbox(key=key).set_value(value).run()
    assert not at.exception, at.exception
    return at


def linked_event(service: Any) -> tuple[Event, list[dict[str, Any]]]:
    """The demo patient's first event with a related event linked by a clinical rule, and its related events."""
    for event in service.patients.events(PATIENT):
        hits = service.patients.related(PATIENT, event.event_id, top_k=10)
        if any(hit["reasons"]["rule_hits"] for hit in hits):
            return event, hits
    raise AssertionError("some event of the demo patient is linked to another by a rule")


def test_the_list_shows_each_patient_with_its_counts(open_patients: Callable[..., AppTest], data_dir: Path,
                                                     service: Any) -> None:
    at = open_patients(data_dir)
    listed = tables(at)[0].set_index("patient")
    assert set(listed.index) == {PATIENT, HOSTILE_PATIENT, LONE_PATIENT}
    [patient] = [p for p in service.patients.list() if p.patient_id == PATIENT]
    row = listed.loc[PATIENT]
    assert (row["events"], row["admissions"], row["gender"]) == (patient.events, patient.admissions, patient.gender)
    assert (row["first event"], row["last event"]) == (patient.first_time, patient.last_time)
    assert patient.events > 100 and patient.admissions >= 1
    assert at.selectbox(key="patients-patient").value is None, "several patients: none chosen for the user"
    assert len(tables(at)) == 1 and "patient" not in at.query_params


def test_the_type_filter_and_admission_zoom_restrict_the_events(open_patients: Callable[..., AppTest], data_dir: Path,
                                                                service: Any) -> None:
    at = choose(open_patients(data_dir), "patients-patient", PATIENT)
    every = service.patients.events(PATIENT)
    assert len(tables(at)[1]) == len(every) and at.query_params["patient"] == PATIENT
    assert at.get("vega_lite_chart"), "the timeline chart is drawn"
    at.multiselect(key="patients-timeline-types").set_value(["lab"]).run()
    labs = tables(at)[1]
    assert len(labs) == len(service.patients.events(PATIENT, "lab")) < len(every)
    assert set(labs["type"]) == {"lab"}
    admission = service.patients.admissions(PATIENT)[-1]
    at.multiselect(key="patients-timeline-types").set_value([]).run()
    choose(at, "patients-timeline-admission", admission.admission_id)
    zoomed = tables(at)[1]
    inside = [e for e in every if admission.admit_time <= e.timestamp <= admission.discharge_time]
    assert 0 < len(zoomed) == len(inside) and zoomed["time"].between(admission.admit_time, admission.discharge_time).all()
    at.multiselect(key="patients-timeline-types").set_value(["order"]).run()
    orders = [e.timestamp for e in inside if e.event_type == "order"]
    assert orders and list(tables(at)[1]["time"]) == orders
    spec = at.get("vega_lite_chart")[0].proto.spec
    assert '"field": "type"' in spec.replace('":"', '": "') and "content" in spec, "coloured by type, content in tooltips"


def test_an_event_shows_its_related_events_with_their_reasons(open_patients: Callable[..., AppTest], data_dir: Path,
                                                              service: Any) -> None:
    event, hits = linked_event(service)
    at = choose(open_patients(data_dir), "patients-patient", PATIENT)
    choose(at, "patients-event", event.event_id)
    assert at.query_params == {"patient": PATIENT, "event": event.event_id}
    shown = markdown(at)
    assert escape_markdown(event.content) in shown and escape_markdown(f"from {event.source_table}, row {event.source_row}") in shown
    opens = [b for b in at.button if b.key and b.key.startswith("patients-related-open-")]
    assert [b.key for b in opens] == [f"patients-related-open-{h['event_id']}" for h in hits], "best first, as related()"
    first = hits[0]
    candidate = service.patients.event(PATIENT, first["event_id"])
    first_type = escape_markdown(candidate.event_type)
    assert f"**score {first['score']:.2f}** · {first_type}" in shown
    assert escape_markdown(reason_text(event, candidate, first["reasons"])) in shown
    assert escape_markdown(f"similarity {first['reasons']['sim_vec']:.2f}") in shown
    assert escape_markdown(time_phrase(first["reasons"]["dt_h"])) in shown
    rules = {n for h in hits for n in h["reasons"]["rule_hits"]}
    assert rules and all(escape_markdown(f"rule: {rule_phrase(name)}") in shown for name in rules)
    opens[0].click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="patients-event").value == first["event_id"]
    assert at.query_params["event"] == first["event_id"]


def test_the_url_brings_back_the_patient_and_the_event(open_patients: Callable[..., AppTest], data_dir: Path,
                                                       service: Any) -> None:
    event, hits = linked_event(service)
    at = choose(open_patients(data_dir), "patients-patient", PATIENT)
    choose(at, "patients-event", event.event_id)
    bookmark = dict(at.query_params)
    again = open_patients(data_dir, **bookmark)
    assert again.selectbox(key="patients-patient").value == PATIENT
    assert again.selectbox(key="patients-event").value == event.event_id
    assert escape_markdown(event.content) in markdown(again)
    assert again.button(key=f"patients-related-open-{hits[0]['event_id']}")
    assert dict(again.query_params) == bookmark
    stale = open_patients(data_dir, patient=PATIENT, event="no-such-event")
    assert stale.selectbox(key="patients-event").value is None and "event" not in stale.query_params
    assert [w.value for w in stale.warning] == ["The event in this link is not among this patient's events."]
    gone = open_patients(data_dir, patient="nobody")
    assert [w.value for w in gone.warning] == ["The patient in this link is not imported here."]
    assert gone.selectbox(key="patients-patient").value is None and "patient" not in gone.query_params


def test_an_event_with_no_related_events_says_so(open_patients: Callable[..., AppTest], data_dir: Path) -> None:
    at = choose(open_patients(data_dir), "patients-patient", LONE_PATIENT)
    assert not at.info and at.selectbox(key="patients-event").value is None
    choose(at, "patients-event", "a1")
    assert [i.value for i in at.info if i.value.startswith("No related events")], [i.value for i in at.info]
    assert not [b for b in at.button if b.key and b.key.startswith("patients-related-open-")]


def test_no_patients_invites_an_import(open_patients: Callable[..., AppTest], empty_dir: Path) -> None:
    at = open_patients(empty_dir)
    [info] = at.info
    assert "workspace-app patients import" in info.value and "mimic-iv-demo" in info.value and "above" in info.value
    assert not at.selectbox and not at.dataframe
    [panel] = at.expander
    assert panel.label == "Import patient records" and panel.proto.expanded, "the form is open, not a dead end"
    assert at.text_input(key="patients-import-path") and at.button(key="patients-import-start")


def test_the_import_form_is_collapsed_once_there_are_patients(open_patients: Callable[..., AppTest],
                                                              data_dir: Path) -> None:
    [panel] = open_patients(data_dir).expander
    assert not panel.proto.expanded


NAME = escape_markdown("records.csv")  # file names are markdown-escaped on the page


@pytest.fixture
def import_dir(tmp_path: Path, build: Callable[..., Any]) -> Path:
    """A fresh data dir with no patient, for imports started on the page."""
    build(tmp_path / "data")
    return tmp_path / "data"


def start_import(at: AppTest, path: Path | str) -> AppTest:
    at.text_input(key="patients-import-path").input(str(path))
    at.button(key="patients-import-start").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("kind", ["missing", "folder", "text file"])
def test_a_bad_path_is_refused_with_a_message(open_patients: Callable[..., AppTest], import_dir: Path,
                                              build: Callable[..., Any], tmp_path: Path, kind: str) -> None:
    target = {"missing": tmp_path / "nowhere", "folder": tmp_path, "text file": tmp_path / "notes.txt"}[kind]
    if kind == "text file":
        target.write_text("not events", encoding="utf-8")
    at = start_import(open_patients(import_dir), target)
    expected = {"missing": "Nothing is at", "folder": "not a MIMIC-IV one", "text file": "is not an events file"}
    assert [e.value for e in at.error if expected[kind] in e.value], [e.value for e in at.error]
    assert build(import_dir).patient_imports.latest() == [], "nothing was queued"


def test_a_queued_import_shows_its_progress_then_its_counts_and_bad_rows(
    open_patients: Callable[..., AppTest], import_dir: Path, build: Callable[..., Any], tmp_path: Path
) -> None:
    rows = EVENTS_CSV + f"h9,{HOSTILE_PATIENT},not a time,lab,Chemistry,Sodium 139 mmol/L\n"  # line 5
    (tmp_path / "records.csv").write_text(rows, encoding="utf-8")
    at = start_import(open_patients(import_dir), tmp_path / "records.csv")
    assert [i.value for i in at.info if f"**{NAME}** is queued" in i.value], [i.value for i in at.info]
    app = build(import_dir)
    [job] = app.patient_imports.latest()
    assert (job.status, job.path) == ("queued", str((tmp_path / "records.csv").resolve()))
    assert at.button(key=f"patients-import-cancel-{job.import_id}")
    # A worker has read part of it: the page shows what it records.
    assert app.catalog.imports.claim_import(job.import_id, "test@nowhere:1:x", 60)
    owner = "test@nowhere:1:x"
    assert app.catalog.imports.record_progress(job.import_id, owner, ImportStep("records.csv", 2, 2, 4, 1, 1, 2, 4))
    at.run()
    infos = [i.value.replace("\\", "") for i in at.info]  # the page escapes markdown (file names, colons)
    shown = [text for text in infos if "Importing records.csv: 2 of 4 rows · 2 events stored" in text]
    assert shown and shown[0].endswith("estimating the time left…"), infos
    assert at.get("progress")[0].proto.text == "2 of 4 rows in all", "the total of all tables"
    step = ImportStep("records.csv", 2, 2, 4, 1, 1, 2, 4, 40.0, 40.0)
    assert app.catalog.imports.record_progress(job.import_id, owner, step)
    at.run()
    assert [i.value for i in at.info if i.value.endswith("2 events stored · about 40 s left")], [i.value for i in at.info]
    assert app.catalog.imports.release_to_queue(job.import_id, "test@nowhere:1:x")
    handle_job(app, str(JobEntry.patient_import(job.import_id)), "test@nowhere:2:y", threading.Event())
    at.run()
    assert not at.exception, at.exception
    [done] = at.success
    assert f"Imported **{NAME}**: 3 events" in done.value
    [skipped] = [w.value for w in at.warning if "skipped" in w.value]
    assert skipped.startswith("1 row skipped") and "records.csv:5: timestamp 'not a time'" in at.code[0].value
    assert set(tables(at)[0]["patient"]) == {HOSTILE_PATIENT, LONE_PATIENT}, "the list shows the imported patients"


def test_a_failed_import_says_what_went_wrong(open_patients: Callable[..., AppTest], import_dir: Path,
                                             build: Callable[..., Any], tmp_path: Path) -> None:
    path = tmp_path / "records.csv"
    path.write_text(EVENTS_CSV, encoding="utf-8")
    app = build(import_dir)
    job = app.patient_imports.submit(path)
    path.write_text("id,when,what\n1,2150-01-01,x\n", encoding="utf-8")  # replaced before the worker reads it
    handle_job(app, str(JobEntry.patient_import(job.import_id)), "test@nowhere:2:y", threading.Event())
    at = open_patients(import_dir)
    [failed] = at.error
    assert f"The import of **{NAME}** failed" in failed.value and "the header must be exactly" in failed.value


def test_record_text_is_escaped(open_patients: Callable[..., AppTest], data_dir: Path) -> None:
    at = choose(open_patients(data_dir), "patients-patient", HOSTILE_PATIENT)
    assert HOSTILE in set(tables(at)[1]["content"]), "tables show the text as it is"
    choose(at, "patients-event", "h2")
    shown = markdown(at)
    assert escape_markdown(HOSTILE) in shown, "the related event's hostile content is listed, escaped"
    choose(at, "patients-event", "h1")
    shown = markdown(at)
    assert escape_markdown(HOSTILE) in shown
    assert "<b>" not in shown and "**y**" not in shown and ":red[" not in shown and "](http" not in shown


def test_a_broken_rules_file_is_a_message_not_a_traceback(open_patients: Callable[..., AppTest], data_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    broken = tmp_path / "rules.yaml"
    broken.write_text("rules: not a list\n", encoding="utf-8")
    with pytest.raises(RulesFileError) as expected:
        load_rules(broken)
    monkeypatch.setenv("WORKSPACE_PATIENTS__RULES_FILE", str(broken))
    at = choose(open_patients(data_dir), "patients-patient", HOSTILE_PATIENT)
    choose(at, "patients-event", "h1")
    assert [e.value for e in at.error] == [expected.value.user_message]
    assert escape_markdown(HOSTILE) in markdown(at), "the event itself is still shown"


def test_reasons_read_as_plain_words() -> None:
    query = Event("a", "p", "2150-01-01 08:00:00", "lab", "Chemistry", "K 3.1", concepts=("abnormal:potassium↓", "lab:potassium"))
    later = Event("b", "p", "2150-01-01 11:00:00", "order", "Medication", "KCl",
                  concepts=("lab:potassium", "abnormal:potassium↓", "drug:potassium chloride"))
    reasons = {"sim_vec": 0.7149, "dt_h": 3.0, "rule_hits": ["hypokalemia_to_kcl"]}
    assert reason_text(query, later, reasons) == (
        "similarity 0.71 · 3 h after · shares potassium, potassium↓ · rule: hypokalemia → kcl"
    )
    assert reason_text(query, later, {"sim_vec": 0.2, "dt_h": -0.5, "rule_hits": []}).endswith("30 min before · shares potassium, potassium↓")
    assert [time_phrase(h) for h in (0, 1.5, -12.2, 60, -0.25)] == ["same time", "1.5 h after", "12 h before", "2.5 d after", "15 min before"]


def test_a_queued_import_can_be_cancelled_from_the_page(open_patients: Callable[..., AppTest], import_dir: Path,
                                                        build: Callable[..., Any], tmp_path: Path) -> None:
    (tmp_path / "records.csv").write_text(EVENTS_CSV, encoding="utf-8")
    job = build(import_dir).patient_imports.submit(tmp_path / "records.csv")
    at = open_patients(import_dir)
    at.button(key=f"patients-import-cancel-{job.import_id}").click().run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning if f"The import of **{NAME}** was cancelled" in w.value], at.warning
    assert build(import_dir).patient_imports.get(job.import_id).status == "cancelled"


def test_similar_patients_are_listed_with_reasons_and_one_opens_on_a_click(
    open_patients: Callable[..., AppTest], build: Callable[..., Any], tmp_path: Path
) -> None:
    records = tmp_path / "records.csv"
    records.write_text(
        "event_id,patient_id,timestamp,event_type,sub_type,content\n"
        + "".join(
            f"{p}{i},{p},2150-01-0{i + 1} 08:00:00,{kind},{sub},{content}\n"
            for p in ("P-a", "P-b", "P-c")
            for i, (kind, sub, content) in enumerate(
                [("history", "diagnosis", "Atrial fibrillation"), ("order", "prescription", "Warfarin 5 mg PO")]
                if p != "P-c" else [("order", "prescription", "Warfarin 5 mg PO")]
            )
        ),
        encoding="utf-8",
    )
    data = tmp_path / "data"
    app = build(data)
    app.patients.import_path(records)
    similar = app.patients.similar_patients("P-a", 5)
    assert [s.patient.patient_id for s in similar] == ["P-b", "P-c"]
    at = choose(open_patients(data), "patients-patient", "P-a")
    opens = [b for b in at.button if b.key and b.key.startswith("patients-similar-open-")]
    assert [b.key for b in opens] == ["patients-similar-open-P-b", "patients-similar-open-P-c"]
    shown = markdown(at)
    assert all(escape_markdown("; ".join(s.reasons)) in shown for s in similar)
    assert "atrial fibrillation" in shown
    opens[0].click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="patients-patient").value == "P-b"
    assert at.query_params["patient"] == "P-b"


def test_an_import_message_writes_every_count_the_same_way() -> None:
    """"235609 events, 235,609 newly embedded" was one message: every count has its thousands separator."""
    from components.text import plural

    assert plural(235609, "event") == "235,609 events" and plural(1, "patient") == "1 patient"
    message = ", ".join([plural(235609, "event"), f"{235609:,} newly embedded"])  # components/patient_imports.py
    assert "235609" not in message
