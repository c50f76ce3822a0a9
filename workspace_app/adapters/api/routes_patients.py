"""Routes of patient records (seed 004) and questions about one patient (seed 002 QUERY-003): thin calls into
`app.patients`, `app.patient_links` (LINKS_TO edges to a workspace's graph) and `app.patient_answers`.

Everything is read-only but the question and imports. An import (a MIMIC-IV folder or an events file on the
server's disk) takes minutes, which is no request's business: `POST /patients/imports` checks the path and queues
it for the worker (202), `GET /patients/imports/{id}` follows it. Only paths inside the import roots
(WORKSPACE_PATIENTS__IMPORT_ROOTS) are read; any other, and one that cannot be imported, is a 422 (`import_source`)
with one message whatever the reason (a key holder must not learn what is on the server's disk); an unknown patient, event or import a 404 (`patient_not_found`, `event_not_found`,
`import_not_found`); a broken rules file a 422 (`rules_file`) naming the rule and key; a query parameter out of its
bounds a 422 naming the parameter. With accounts on, only admins reach patient records (adapters/api/roles.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.payloads import admission_payload, answer_payload
from workspace_app.adapters.api.roles import record
from workspace_app.adapters.api.routes_ask import DEFAULT_MODE, Mode

router = APIRouter(tags=["patients"])
MAX_TOP_K = 200
MAX_HOURS = 24 * 365  # a year either side: more than any stay, and a bound a typo cannot pass


class PatientAskRequest(BaseModel):
    """A question about the patient, answered from its events, the workspace's sources and the vocabulary."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=2000, description="The question, in English or Chinese.")
    mode: Mode = Field(DEFAULT_MODE, description="How the guideline level searches: naive, local, global, hybrid.")
    documents: list[str] | None = Field(None, description="Names or ids of the sources to use (default: the ticked).")


class ImportRequest(BaseModel):
    """Patient records to import, read by the server from its own disk."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        min_length=1, max_length=4096,
        description="A MIMIC-IV folder or a .csv/.jsonl events file inside the import roots, in full or relative to one.",
    )
    patients: list[str] | None = Field(None, max_length=10_000, description="Only these patients (MIMIC-IV).")


@router.post("/patients/imports", status_code=202)
def queue_import(body: ImportRequest, app: AppDep) -> dict[str, Any]:
    """Check the path (inside the import roots) and queue its import for the worker; returns the import (`queued`)."""
    return app.patient_imports.submit_from_roots(body.path, body.patients).to_json()


@router.get("/patients/imports/{import_id}")
def import_status(import_id: str, app: AppDep) -> dict[str, Any]:
    """An import's status: the table being read and events stored while it runs, then its counts and bad rows."""
    return app.patient_imports.get(import_id).to_json()


@router.get("/patients")
def list_patients(app: AppDep) -> list[dict[str, Any]]:
    """Every imported patient with admission and event counts (as `patients list --json`)."""
    return [patient.to_json() for patient in app.patients.list()]


@router.get("/patients/{patient_id}/events")
def patient_events(
    patient_id: str, app: AppDep,
    event_type: Annotated[str | None, Query(alias="type", max_length=40, description="Only this type (lab, ...).")] = None,
) -> list[dict[str, Any]]:
    """A patient's events in time order (as `events --json`)."""
    return [event.to_json() for event in app.patients.events(patient_id, event_type or None)]


@router.get("/patients/{patient_id}/admissions")
def patient_admissions(patient_id: str, app: AppDep) -> list[dict[str, Any]]:
    """A patient's hospital stays in time order."""
    return [admission_payload(admission) for admission in app.patients.admissions(patient_id)]


@router.get("/patients/{patient_id}/events/{event_id}/related")
def related_events(
    patient_id: str, event_id: str, app: AppDep,
    top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K, description="How many related events.")] = 20,
    window_h: Annotated[float, Query(gt=0, le=MAX_HOURS, description="Temporal recall window, ± hours.")] = 24,
    tau_h: Annotated[float, Query(gt=0, le=MAX_HOURS, description="Time decay constant τ, hours.")] = 6,
) -> list[dict[str, Any]]:
    """Events related to one event, best first: `[{"event_id", "score", "reasons"}]` (seed 004 §4)."""
    return app.patients.related(patient_id, event_id, top_k, window_h, tau_h=tau_h)


@router.get("/patients/{patient_id}/similar")
def similar_patients(
    patient_id: str, app: AppDep,
    top_k: Annotated[int, Query(ge=1, le=100, description="How many similar patients.")] = 5,
) -> list[dict[str, Any]]:
    """The imported patients most like this one, best first: `[{"patient_id", "score", "profile", "sequence",
    "shared", "reasons"}]` (as `patients similar --json`)."""
    return [found.to_json() for found in app.patients.similar_patients(patient_id, top_k)]


@router.post("/workspaces/{workspace}/patients/{patient_id}/ask")
def ask_about_patient(
    workspace: str, patient_id: str, body: PatientAskRequest, request: Request, app: AppDep
) -> dict[str, Any]:
    """Answer a question about a patient; each citation carries its level (patient, guideline, vocabulary)."""
    found = app.workspaces.get(workspace)
    record(request, app, "asked", found.id, f"patient:{patient_id}", body.question)
    answer = app.patient_answers.ask(found.id, patient_id, body.question, body.documents, body.mode)
    return answer_payload(answer, found.name)


@router.get("/workspaces/{workspace}/patients/{patient_id}/links")
def patient_links(workspace: str, patient_id: str, app: AppDep) -> list[dict[str, Any]]:
    """The patient's LINKS_TO edges to the workspace graph's entities, with the events and codes supporting each."""
    found = app.workspaces.get(workspace)
    return [link.to_json() for link in app.patient_links.links(found.id, patient_id)]
