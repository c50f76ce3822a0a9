"""Patients page: the imported patient records (app-wide: no workspace needed), and importing more.

An import (a MIMIC-IV folder or an events file on the server, or an uploaded events file) is checked and queued
here; the worker runs it. Its status re-reads every second (a fragment) while it is queued or running: the table
being read and the events stored, then the counts and the rows skipped (or what failed and what to do).

Choosing a patient draws their timeline (events by type over time, filtered by type, zoomed to an admission) over
the table of those events; choosing an event shows it and its related events, each with its score and its reasons
in plain words; "Similar patients" lists the patients most like the chosen one, with the reasons, and opens one on a
click. The patient and the event are kept in the URL (`?patient=…&event=…`) for reloads and bookmarks.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from components.account import current_user
from components.application import current_app
from components.feedback import flash, report_errors, show_flash
from components.patient_imports import ImportRequest, render_import_form, render_import_status
from components.patients import (
    render_event_picker,
    render_patients,
    render_similar_patients,
    render_timeline,
    render_timeline_filter,
)
from components.related_events import RelatedEvent, render_event, render_related
from components.workspace_gate import set_url_param
from workspace_app.app import App
from workspace_app.models.events import Admission, Event, Patient, PatientImport

PATIENT_KEY = "patients-patient"
EVENT_KEY = "patients-event"
TIMELINE_KEY = "patients-timeline"
RELATED_KEY = "patients-related"
SHOWN = "patients-shown"  # the patient whose widgets (filters, event) the session holds
GOTO = "patients-goto"  # an event chosen from the related list, applied before the picker is drawn next run
GOTO_PATIENT = "patients-goto-patient"  # a patient chosen from the similar ones, applied the same way
SIMILAR_KEY = "patients-similar"
SIMILAR = 5
PATIENT_PARAM, EVENT_PARAM = "patient", "event"
RELATED = 10
IMPORT_KEY = "patients-import"
POLL_S = 1.0


def render_page(app: App) -> None:
    """The patient list, then the chosen patient's timeline and events, then the chosen event and its relations."""
    st.title("Patients")
    user = current_user()
    if user is not None and not user.is_admin:  # accounts on: patient records are for admins (not shared yet)
        st.info("Patient records are open to admins only.", icon=":material/lock:")
        return
    show_flash()
    patients: list[Patient] | None = None
    with report_errors():
        patients = app.patients.list()
    if patients is None:
        return
    _import_panel(app, expanded=not patients)
    _seed_patient(patients)
    if GOTO_PATIENT in st.session_state:
        st.session_state[PATIENT_KEY] = st.session_state.pop(GOTO_PATIENT)
    patient_id = render_patients(patients, key=PATIENT_KEY)
    _follow_patient(patient_id)
    if patient_id is None:
        return
    events: list[Event] = []
    admissions: list[Admission] = []
    with report_errors():
        events = app.patients.events(patient_id)
        admissions = app.patients.admissions(patient_id)
    by_id = {e.event_id: e for e in events}
    st.subheader("Timeline")
    shown = render_timeline_filter(events, admissions, key=TIMELINE_KEY).apply(events)
    if GOTO in st.session_state:
        st.session_state[EVENT_KEY] = st.session_state.pop(GOTO)
    wanted = st.session_state.get(EVENT_KEY)
    if wanted and wanted not in by_id:
        st.warning("The event in this link is not among this patient's events.", icon=":material/link_off:")
        st.session_state.pop(EVENT_KEY)
    current = by_id.get(wanted or "")
    render_timeline(shown, current, key=TIMELINE_KEY)
    event_id = render_event_picker(shown, current, key=EVENT_KEY)
    set_url_param(EVENT_PARAM, event_id)
    if event_id is not None:
        _event_panel(app, by_id[event_id], by_id)
    if len(patients) > 1:
        _similar_panel(app, patient_id)


def _similar_panel(app: App, patient_id: str) -> None:
    """The patients most like this one (shared concepts and their order), with the reasons; a click opens one."""
    with st.expander("Similar patients", icon=":material/group:"):
        similar = None
        with report_errors(), st.spinner("Comparing this record with the other patients'…"):
            similar = app.patients.similar_patients(patient_id, SIMILAR)
        chosen = render_similar_patients(similar, key=SIMILAR_KEY) if similar is not None else None
    if chosen is not None:
        st.session_state[GOTO_PATIENT] = chosen
        st.rerun()


def _import_panel(app: App, *, expanded: bool) -> None:
    """The import form (open while there is no patient) and the live status of the latest imports."""
    with st.expander("Import patient records", expanded=expanded, icon=":material/upload_file:"):
        request = render_import_form(key=IMPORT_KEY)
        if request is not None:
            with report_errors():
                _submit(app, request)
    polling = False
    with report_errors():
        polling = any(job.is_active for job in app.patient_imports.latest())
    st.fragment(_render_live_imports, run_every=POLL_S if polling else None)(app, polling)


def _submit(app: App, request: ImportRequest) -> None:
    """Queue the import the form asks for (an upload is kept under the data dir first). Raises WorkspaceError."""
    if request.upload is not None:
        path = app.patient_imports.save_upload(*request.upload)
    elif request.path:
        path = Path(request.path)
    else:
        st.warning("Give a path on the server or upload an events file to import.", icon=":material/info:")
        return
    job = app.patient_imports.submit(path, request.patients)
    flash(f"Queued the import of {Path(job.path).name}.")
    st.rerun()


def _render_live_imports(app: App, polling: bool) -> None:
    """The imports queued or running, and the latest one, as the worker records them (re-read every second while
    one runs: `polling`). When the last one ends, the whole page runs again, so its patients are listed."""
    jobs: list[PatientImport] = []
    with report_errors():
        latest = app.patient_imports.latest()
        if polling and not any(job.is_active for job in latest):
            st.rerun()
        jobs = [job for job in latest if job.is_active] or latest[:1]
        if latest and latest[0] not in jobs:
            jobs.insert(0, latest[0])
    for job in jobs:
        if render_import_status(job, key=IMPORT_KEY) == "cancel":
            with report_errors():
                app.patient_imports.cancel(job.import_id)
            st.rerun()


def _seed_patient(patients: list[Patient]) -> None:
    """On a session's first visit, the patient the URL names (or the only one) is the chosen one."""
    if PATIENT_KEY in st.session_state:
        return
    wanted = st.query_params.get(PATIENT_PARAM)
    ids = [p.patient_id for p in patients]
    if wanted in ids:
        st.session_state[PATIENT_KEY] = wanted
        return
    if wanted:
        st.warning("The patient in this link is not imported here.", icon=":material/link_off:")
    if len(ids) == 1:
        st.session_state[PATIENT_KEY] = ids[0]


def _follow_patient(patient_id: str | None) -> None:
    """A newly chosen patient starts with no filters and no event (but the event the URL names for them)."""
    if st.session_state.get(SHOWN) != patient_id:
        st.session_state[SHOWN] = patient_id
        for key in (EVENT_KEY, GOTO, f"{TIMELINE_KEY}-types", f"{TIMELINE_KEY}-admission"):
            st.session_state.pop(key, None)
        wanted = st.query_params.get(EVENT_PARAM)
        if patient_id is not None and st.query_params.get(PATIENT_PARAM) == patient_id and wanted:
            st.session_state[EVENT_KEY] = wanted
    set_url_param(PATIENT_PARAM, patient_id)
    if patient_id is None:
        set_url_param(EVENT_PARAM, None)


def _event_panel(app: App, event: Event, by_id: dict[str, Event]) -> None:
    """The chosen event beside its related events (reasons spelled out); a click on one makes it the chosen event."""
    detail, related = st.columns([2, 3], gap="large")
    with detail:
        st.subheader("Event")
        render_event(event, key="patients-event-card")
    with related:
        hits: list[RelatedEvent] | None = None
        with report_errors():
            found = app.patients.related(event.patient_id, event.event_id, top_k=RELATED)
            hits = [RelatedEvent(by_id[h["event_id"]], h["score"], h["reasons"]) for h in found if h["event_id"] in by_id]
        if hits is None:
            return
        chosen = render_related(event, hits, key=RELATED_KEY)
    if chosen is not None:
        st.session_state[GOTO] = chosen
        st.rerun()


app = current_app()
render_page(app)
