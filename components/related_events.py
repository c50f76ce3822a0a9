"""The chosen event of a patient and its related events, each with its score and its reasons in plain words
("similarity 0.71 · 3 h after · shares potassium · rule: hypokalemia → kcl"). Record text is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from components.text import escape_markdown
from workspace_app.models.events import Event


@dataclass(frozen=True)
class RelatedEvent:
    """One hit of `app.patients.related`: the event it names, its score and its reasons."""

    event: Event
    score: float
    reasons: Mapping[str, Any]


def render_event(event: Event, *, key: str) -> None:
    """The event's content, time, type, source (table and row), admission and concepts."""
    with st.container(border=True, key=key):
        st.markdown(f"**{escape_markdown(event.content)}**")
        facts = [event.timestamp, f"{event.event_type} / {event.sub_type}", f"from {event.source_table}, row {event.source_row}"]
        if event.admission_id:
            facts.append(f"admission {event.admission_id}")
        st.caption(" · ".join(escape_markdown(f) for f in facts))
        concepts = ", ".join(concept_name(c) for c in event.concepts) or "none found"
        st.caption(f"Concepts: {escape_markdown(concepts)}")


def render_related(query: Event, hits: Sequence[RelatedEvent], *, key: str) -> str | None:
    """The related events, best first, each with its score and reasons; returns the event id whose button was
    clicked (to show that event next)."""
    if not hits:
        st.info(
            "No related events: nothing of this patient is similar enough, close enough in time, shares a concept "
            "or is linked by a rule.", icon=":material/link_off:",
        )
        return None
    st.markdown(f"**Related events** ({len(hits)}, best first)")
    clicked = None
    for hit in hits:
        with st.container(border=True, key=f"{key}-{hit.event.event_id}"):
            st.markdown(
                f"**score {hit.score:.2f}** · {escape_markdown(hit.event.event_type)} · "
                f"{escape_markdown(hit.event.timestamp[:16])} · {escape_markdown(hit.event.content)}"
            )
            st.caption(escape_markdown(
                f"{reason_text(query, hit.event, hit.reasons)} (from {hit.event.source_table}, row {hit.event.source_row})"
            ))
            if st.button("Show this event", key=f"{key}-open-{hit.event.event_id}", icon=":material/arrow_forward:",
                         type="tertiary"):
                clicked = hit.event.event_id
    return clicked


def reason_text(query: Event, candidate: Event, reasons: Mapping[str, Any]) -> str:
    """Why `candidate` is related to `query`, in plain words (plain text: escape it before markdown)."""
    parts = [f"similarity {float(reasons.get('sim_vec', 0.0)):.2f}", time_phrase(float(reasons.get("dt_h", 0.0)))]
    shared = sorted({concept_name(c) for c in set(query.concepts) & set(candidate.concepts)})
    if shared:
        parts.append("shares " + ", ".join(shared))
    parts += [f"rule: {rule_phrase(name)}" for name in reasons.get("rule_hits", [])]
    parts += [str(reason) for reason in reasons.get("links", [])[:1]]  # the strongest link learned from the record
    return " · ".join(parts)


def time_phrase(dt_h: float) -> str:
    """'same time', '40 min after', '3 h before', '2.5 d after' for a gap in hours (positive: later)."""
    gap, side = abs(dt_h), "after" if dt_h > 0 else "before"
    if gap * 60 < 1:
        return "same time"
    if gap < 1:
        return f"{round(gap * 60)} min {side}"
    if gap < 48:
        return f"{gap:.0f} h {side}" if gap >= 10 else f"{gap:.1f}".removesuffix(".0") + f" h {side}"
    return f"{gap / 24:.1f}".removesuffix(".0") + f" d {side}"


def concept_name(concept: str) -> str:
    """'abnormal:potassium↓' -> 'potassium↓' (the kind prefix dropped)."""
    return concept.split(":", 1)[-1]


def rule_phrase(name: str) -> str:
    """'hypokalemia_to_kcl' -> 'hypokalemia → kcl'."""
    return name.replace("_to_", " → ").replace("_", " ")
