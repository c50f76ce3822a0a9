"""Widgets of the Patients page: the imported patients, one patient's timeline (events by type over time, filtered
by type and zoomed to an admission), the table of the events shown, and the event picker.

Dataframes, chart tooltips and select options show text as text; anything put into markdown is escaped first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import pandas as pd
import streamlit as st

from components.text import escape_markdown, plural
from workspace_app.models.events import Admission, Event, Patient, SimilarPatient, parse_time

MAX_POINTS = 5000  # Vega-Lite slows down past a few thousand points: the table below still lists every event
IMPORT_HINT = (
    "No patients imported yet. Import a MIMIC-IV folder or a `.csv`/`.jsonl` events file above (the worker runs "
    "it), or from a terminal: `workspace-app patients import ../shared/clinical/mimic-iv-demo --patients 10019917`."
)


@dataclass(frozen=True)
class TimelineFilter:
    """What the timeline shows: some event types (none: all) within one admission's dates (None: all time)."""

    types: tuple[str, ...] = ()
    admission: Admission | None = None

    def apply(self, events: Sequence[Event]) -> list[Event]:
        """The events that pass the filter, in their order."""
        kept = [e for e in events if not self.types or e.event_type in self.types]
        if self.admission is None:
            return kept
        start, end = parse_time(self.admission.admit_time), parse_time(self.admission.discharge_time)
        return [e for e in kept if start <= parse_time(e.timestamp) <= end]


def patient_table(patients: Sequence[Patient]) -> pd.DataFrame:
    """One row per patient: id, gender, age, counts and the span of their events."""
    return pd.DataFrame(
        [
            {"patient": p.patient_id, "gender": p.gender, "age": p.age, "admissions": p.admissions,
             "events": p.events, "first event": p.first_time, "last event": p.last_time}
            for p in patients
        ],
        columns=["patient", "gender", "age", "admissions", "events", "first event", "last event"],
    ).astype({"age": "Int64"})  # an unknown age is blank, not "None"


def render_patients(patients: Sequence[Patient], *, key: str) -> str | None:
    """The patient list and the patient picker; returns the chosen patient's id (the page seeds `key` from the URL)."""
    if not patients:
        st.info(IMPORT_HINT, icon=":material/person_search:")
        return None
    st.dataframe(patient_table(patients), hide_index=True, key=f"{key}-table", width="stretch")
    by_id = {p.patient_id: p for p in patients}
    chosen: str | None = st.selectbox(
        "Patient", list(by_id), index=None, key=key, placeholder="Choose a patient",
        format_func=lambda i: _patient_label(by_id[i]),
    )
    return chosen


def render_timeline_filter(events: Sequence[Event], admissions: Sequence[Admission], *, key: str) -> TimelineFilter:
    """The event-type filter and the admission to zoom to."""
    types = sorted({e.event_type for e in events})
    by_id = {a.admission_id: a for a in admissions}
    type_col, admission_col = st.columns(2)
    chosen = type_col.multiselect("Event types", types, key=f"{key}-types", placeholder="All types")
    zoom = admission_col.selectbox(
        "Zoom to an admission", list(by_id), index=None, key=f"{key}-admission", placeholder="All admissions",
        format_func=lambda i: admission_label(by_id[i]), disabled=not by_id,
    )
    return TimelineFilter(tuple(chosen), by_id.get(zoom) if zoom else None)


def render_timeline(events: Sequence[Event], chosen: Event | None, *, key: str) -> None:
    """The chart of the events (chosen one ringed) and the table of them all."""
    if not events:
        st.info("No events of this patient pass these filters.", icon=":material/filter_alt_off:")
        return
    if len(events) > MAX_POINTS:
        st.caption(f"The chart shows the first {MAX_POINTS} of {len(events)} events: zoom to an admission or pick "
                   "event types to see the rest. The table lists them all.")
    st.altair_chart(timeline_chart(events[:MAX_POINTS], chosen), key=f"{key}-chart", width="stretch")
    st.dataframe(event_table(events), hide_index=True, key=f"{key}-events", width="stretch")


def timeline_chart(events: Sequence[Event], chosen: Event | None = None) -> alt.LayerChart:
    """Events as points on a time axis, one row and colour per event type, the content in the tooltip."""
    data = pd.DataFrame(
        [{"time": parse_time(e.timestamp).replace(tzinfo=None), "type": e.event_type, "sub-type": e.sub_type,
          "content": e.content, "id": e.event_id} for e in events]
    )
    points = alt.Chart(data).mark_circle(size=60, opacity=0.7).encode(
        x=alt.X("time:T", title=None),
        y=alt.Y("type:N", title=None),
        color=alt.Color("type:N", legend=None),
        tooltip=[alt.Tooltip("time:T", format="%Y-%m-%d %H:%M"), "type:N", "sub-type:N", "content:N"],
    )
    ring = alt.Chart(data[data["id"] == (chosen.event_id if chosen else "")]).mark_point(
        size=260, color="black", strokeWidth=2
    ).encode(x="time:T", y="type:N")
    return alt.layer(points, ring).properties(height=max(120, 45 * data["type"].nunique()))


def event_table(events: Sequence[Event]) -> pd.DataFrame:
    """One row per event: time, type, sub-type, content and where it came from."""
    return pd.DataFrame(
        [
            {"time": e.timestamp, "type": e.event_type, "sub-type": e.sub_type, "content": e.content,
             "source table": e.source_table, "row": e.source_row}
            for e in events
        ],
        columns=["time", "type", "sub-type", "content", "source table", "row"],
    )


def render_event_picker(events: Sequence[Event], current: Event | None, *, key: str) -> str | None:
    """Choose an event by a readable label; the current one stays listed even when the filters hide it."""
    by_id = {e.event_id: e for e in events}
    if current is not None and current.event_id not in by_id:
        by_id = {current.event_id: current, **by_id}
    chosen: str | None = st.selectbox(
        "Event", list(by_id), index=None, key=key, placeholder="Choose an event to see its related events",
        format_func=lambda i: event_label(by_id[i]),
    )
    return chosen


def event_label(event: Event) -> str:
    """'2180-05-07 00:19 · lab · Potassium 3.1 mmol/L (low; ref 3.5–5.1)' (cut at 90 characters)."""
    content = " ".join(event.content.split())
    content = content if len(content) <= 90 else content[:89] + "…"
    return f"{event.timestamp[:16]} · {event.event_type} · {content}"


def admission_label(admission: Admission) -> str:
    """'24757478 · 2180-05-06 → 2180-05-07 (URGENT)'."""
    kind = f" ({admission.admission_type})" if admission.admission_type else ""
    return f"{admission.admission_id} · {admission.admit_time[:10]} → {admission.discharge_time[:10]}{kind}"


def _patient_label(patient: Patient) -> str:
    facts = [f for f in (patient.gender, f"{patient.age} y" if patient.age is not None else "") if f]
    facts.append(plural(patient.events, "event"))
    return f"{patient.patient_id} ({', '.join(facts)})"


def render_similar_patients(similar: Sequence[SimilarPatient], *, key: str) -> str | None:
    """The patients most like the chosen one, best first, each with the reasons in words; returns the id of the one
    whose button was clicked (to open that patient next)."""
    if not similar:
        st.caption("No other imported patient's record names any concept this one's does.")
        return None
    clicked = None
    for found in similar:
        with st.container(border=True, key=f"{key}-{found.patient.patient_id}"):
            st.markdown(f"**{escape_markdown(_patient_label(found.patient))}** · score {found.score:.2f}")
            st.caption(escape_markdown("; ".join(found.reasons)))
            if st.button("Open this patient", key=f"{key}-open-{found.patient.patient_id}",
                         icon=":material/arrow_forward:", type="tertiary"):
                clicked = found.patient.patient_id
    return clicked
