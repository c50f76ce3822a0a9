"""Widgets of patient imports on the Patients page: the form that starts one (a path on the server or an uploaded
events file) and the status of an import as the worker runs it (table being read of how many, rows read of the
totals, events stored, the time left in the table and in all; then the counts and the rows skipped, or what went
wrong and what to do).

Paths, file names and bad rows come from users' files: they are escaped before they go into markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from components.text import escape_markdown, plural
from workspace_app.models.events import ImportStep, PatientImport

SHOWN_ERRORS = 5
UPLOAD_SUFFIXES = ["csv", "jsonl", "ndjson"]


@dataclass(frozen=True)
class ImportRequest:
    """What the user asked to import: a path on the server, or an uploaded file (name, bytes); some patients."""

    path: str = ""
    upload: tuple[str, bytes] | None = None
    patients: list[str] = field(default_factory=list)


def render_import_form(*, key: str) -> ImportRequest | None:
    """A server path or an uploaded events file, an optional patient filter and the Import button; returns the
    request when the button is pressed."""
    path = st.text_input(
        "Path on the server", key=f"{key}-path", placeholder="../shared/clinical/mimic-iv-demo",
        help="A MIMIC-IV folder (the one holding hosp/ and icu/) or a .csv/.jsonl events file, read by the server.",
    )
    upload = st.file_uploader(
        "…or upload an events file", type=UPLOAD_SUFFIXES, key=f"{key}-upload",
        help="CSV with the header event_id,patient_id,timestamp,event_type,sub_type,content, or JSON Lines with "
             "those fields.",
    )
    patients = st.text_input(
        "Only these patients (MIMIC-IV)", key=f"{key}-patients", placeholder="10019917, 10000032",
        help="Comma-separated patient ids; empty imports everyone.",
    )
    if not st.button("Import", key=f"{key}-start", icon=":material/upload:", type="primary"):
        return None
    chosen = [p.strip() for p in patients.split(",") if p.strip()]
    return ImportRequest(path.strip(), (upload.name, upload.getvalue()) if upload else None, chosen)


def render_import_status(job: PatientImport, *, key: str) -> str | None:
    """One import's state; returns 'cancel' when the user stops a queued or running import."""
    name = escape_markdown(Path(job.path).name or job.path)
    who = f" (patients {escape_markdown(', '.join(job.patients))})" if job.patients else ""
    if job.status == "queued":
        st.info(f"**{name}**{who} is queued, waiting for a worker (`workspace-app worker`, started by `make run`).",
                icon=":material/schedule:")
    elif job.stalled:
        st.warning(f"**{name}**{who}: its worker stopped answering after {job.events:,} events. A worker takes it "
                   "over shortly and goes on (nothing is stored twice).", icon=":material/hourglass_disabled:")
    elif job.status == "running":
        st.info(f"**{name}**{who}: {escape_markdown(import_progress_text(job))}", icon=":material/sync:")
        if job.step is not None and job.step.rows_total:
            st.progress(min(job.step.rows_done / job.step.rows_total, 1.0), text=_rows_text(job.step))
    elif job.status == "done":
        _render_done(job, name + who)
    elif job.status == "failed":
        st.error(f"The import of **{name}** failed: {escape_markdown(job.error)}", icon=":material/error:")
    else:
        st.warning(f"The import of **{name}** was cancelled after {job.events:,} events; they are kept. Import it "
                   "again to finish it (nothing is stored twice).", icon=":material/cancel:")
    if job.is_active and st.button("Cancel import", key=f"{key}-cancel-{job.import_id}", icon=":material/stop:"):
        return "cancel"
    return None


def import_progress_text(job: PatientImport) -> str:
    """A running import in words: table of how many, rows read of its total, events stored and the time left in the
    table and in all (measured in this run; "estimating the time left…" until it is)."""
    if job.step is not None:
        return job.step.in_words()
    doing = f"Importing {job.table}" if job.table else "Starting the import (counting the rows)"
    return f"{doing} · {job.events:,} events stored"


def _rows_text(step: ImportStep) -> str:
    return f"{step.rows_done:,} of {step.rows_total:,} rows in all"


def _render_done(job: PatientImport, name: str) -> None:
    counts = [plural(job.patient_count, "patient"), plural(job.admissions, "admission")] if job.patient_count else []
    counts += [plural(job.events, "event"), f"{job.embedded:,} newly embedded"]
    st.success(f"Imported **{name}**: {', '.join(counts)}.", icon=":material/check_circle:")
    if not job.error_count:
        return
    more = job.error_count - min(job.error_count, SHOWN_ERRORS)
    st.warning(f"{plural(job.error_count, 'row')} skipped (file:line: why)"
               + (f"; the first {SHOWN_ERRORS} are listed." if more else ":"), icon=":material/warning:")
    st.code("\n".join(job.first_errors[:SHOWN_ERRORS]), language=None)
