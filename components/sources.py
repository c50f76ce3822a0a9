"""Widgets of the Sources page: the upload drop zone, the table of sources and one row per source.

Rows show live progress for queued and running documents, the plain-words error of failed ones, a
"use in chat" checkbox and the actions (cancel, retry, remove with confirmation). Every user-supplied
text (names, errors) is escaped before it reaches markdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd
import streamlit as st

from components.text import escape_markdown, format_date, plural
from workspace_app.models.documents import ACTIVE_STATUSES as ACTIVE
from workspace_app.models.documents import Document

ActionKind = Literal["cancel", "retry", "remove", "include", "exclude"]
STAGE_TEXT = {
    "queued": "Waiting for a worker",
    "parsing": "Reading pages",
    "chunking": "Splitting into passages",
    "embedding": "Embedding passages",
    "indexing": "Indexing",
    "graph": "Building the entity graph",
}
STATUS_TEXT = {"queued": "Queued", "running": "Processing", "ready": "Ready", "failed": "Failed", "cancelled": "Cancelled"}
_BADGES = {"ready": ":green-badge[:material/check: Ready]", "failed": ":red-badge[:material/error: Failed]",
           "cancelled": ":gray-badge[:material/block: Cancelled]"}


@dataclass(frozen=True)
class Upload:
    """A file the user dropped: its name and bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class SourceAction:
    """What the user asked for on one source."""

    kind: ActionKind
    document_id: str


def render_uploader(*, suffixes: list[str], limit_mb: int, key: str) -> list[Upload] | None:
    """A drop zone for many files at once; returns the dropped files once (the zone is cleared afterwards)."""
    generation = st.session_state.get(f"{key}-generation", 0)
    files = st.file_uploader(
        "Add sources", type=suffixes, accept_multiple_files=True, key=f"{key}-{generation}",
        max_upload_size=limit_mb,
        help=f"PDF, plain text or Markdown, up to {limit_mb} MB each. Drop several files at once.",
    )
    if not files:
        return None
    return [Upload(file.name, file.getvalue()) for file in files]


def clear_uploader(*, key: str) -> None:
    """Empty the drop zone rendered with `key` (a new widget replaces it on the next run)."""
    st.session_state[f"{key}-generation"] = st.session_state.get(f"{key}-generation", 0) + 1


def render_upload_problems(problems: list[str], *, key: str) -> bool:
    """The files that could not be added, each with its reason; True when the user dismisses them."""
    if not problems:
        return False
    with st.container(border=True, key=f"{key}-box"):
        st.markdown(f"**{plural(len(problems), 'file')} could not be added**")
        for problem in problems:
            st.error(escape_markdown(problem), icon=":material/error:")
        return st.button("Dismiss", key=f"{key}-dismiss", icon=":material/close:")


def render_summary(documents: list[Document]) -> None:
    """One line: how many sources, and how many are ready, in progress, failed."""
    counts = {status: sum(d.status == status for d in documents) for status in STATUS_TEXT}
    parts = [plural(len(documents), "source"), f"{counts['ready']} ready"]
    busy = counts["queued"] + counts["running"]
    parts += [f"{busy} in progress"] if busy else []
    parts += [f"{counts['failed']} failed"] if counts["failed"] else []
    st.caption(" · ".join(parts))


def render_source_table(documents: list[Document], *, key: str) -> None:
    """The workspace's documents as a table: name, pages, chunks, size, added, status, progress."""
    st.dataframe(
        source_frame(documents), key=key, hide_index=True, width="stretch", placeholder="—",
        column_config={
            "Progress": st.column_config.ProgressColumn("Progress", min_value=0.0, max_value=1.0, format="percent"),
            "Size": st.column_config.TextColumn("Size"),
            "In chat": st.column_config.CheckboxColumn("In chat", help="Used to answer questions in chat"),
        },
    )


def source_frame(documents: list[Document]) -> pd.DataFrame:
    """The table's rows (plain values: the table shows text literally, so names need no escaping)."""
    rows = [
        {
            "Name": d.name, "Status": status_text(d), "Progress": d.progress if d.status in ("ready", *ACTIVE) else None,
            "Pages": d.pages or None, "Chunks": d.chunks if d.status == "ready" else None,
            "Size": format_size(d.size_bytes), "Added": format_date(d.added_at), "In chat": d.included,
        }
        for d in documents
    ]
    columns = ["Name", "Status", "Progress", "Pages", "Chunks", "Size", "Added", "In chat"]
    return pd.DataFrame(rows, columns=columns)


def render_source_rows(documents: list[Document], *, key: str) -> SourceAction | None:
    """One row per source with its checkbox, state and actions; returns the action the user took."""
    action = None
    for document in documents:
        with st.container(border=True, key=f"{key}-row-{document.id}"):
            action = _render_row(document, key=key) or action
    return action


def close_remove_confirmation(*, key: str) -> None:
    """Close the open "remove?" confirmation of the rows rendered with `key`."""
    st.session_state.pop(f"{key}-confirm", None)


def status_text(document: Document) -> str:
    """Short plain status: "Ready", "Embedding passages 120/340 · about 40 s left", "Failed"."""
    if not document.is_active:
        return STATUS_TEXT.get(document.status, document.status.capitalize())
    text = STAGE_TEXT.get(document.stage, document.stage.capitalize())
    counts = _stage_counts(document)
    if counts:
        text += f" {counts}"
    if document.cancel_requested:
        return f"Cancelling… ({text})"
    if document.eta_s is not None and document.status == "running":
        text += f" · {format_eta(document.eta_s)}"
    return text


def format_size(size_bytes: int) -> str:
    """Bytes as "512 B", "84 KB", "3.2 MB"."""
    if size_bytes < 1024:
        return f"{size_bytes} B"
    if size_bytes < 1024 * 1024:
        return f"{size_bytes / 1024:.0f} KB"
    return f"{size_bytes / 1048576:.1f} MB"


def format_eta(seconds: float) -> str:
    """ "about 40 s left", "about 3 min left"."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s left"
    return f"about {round(seconds / 60)} min left"


def _stage_counts(document: Document) -> str:
    if document.stage == "parsing" and document.pages:
        return f"{document.pages_parsed}/{document.pages}"
    if document.stage == "embedding" and document.chunks_total:
        return f"{document.chunks_embedded}/{document.chunks_total}"
    return ""


def _render_row(document: Document, *, key: str) -> SourceAction | None:
    check_col, info_col, state_col, button_col = st.columns([0.4, 4, 3.2, 2.4], vertical_alignment="center")
    with check_col:
        action = _render_checkbox(document, key=key)
    with info_col:
        st.markdown(f"**{escape_markdown(document.name)}**")
        st.caption(_facts(document))
    with state_col:
        _render_state(document)
    with button_col:
        action = _render_buttons(document, key=key) or action
    if document.status == "failed" and document.error:
        st.error(escape_markdown(document.error), icon=":material/error:")
    if st.session_state.get(f"{key}-confirm") == document.id:
        action = _render_confirm_remove(document, key=key) or action
    return action


def _render_checkbox(document: Document, *, key: str) -> SourceAction | None:
    included = st.checkbox(
        f"Use {escape_markdown(document.name)} in chat", value=document.included, key=f"{key}-include-{document.id}",
        label_visibility="collapsed", help="Use this source in chat answers",
    )
    if included == document.included:
        return None
    return SourceAction("include" if included else "exclude", document.id)


def _facts(document: Document) -> str:
    facts = [plural(document.pages, "page")] if document.pages else []
    facts += [plural(document.chunks, "passage")] if document.status == "ready" else []
    facts += [format_size(document.size_bytes), f"added {format_date(document.added_at)}"]
    facts += [] if document.included else ["not used in chat"]
    return " · ".join(facts)


def _render_state(document: Document) -> None:
    if document.is_active:
        st.progress(min(max(document.progress, 0.0), 1.0), text=escape_markdown(status_text(document)))
    else:
        st.markdown(_BADGES.get(document.status, escape_markdown(document.status)))


def _render_buttons(document: Document, *, key: str) -> SourceAction | None:
    first, second = st.columns(2)
    clicked = None
    if document.is_active and first.button(
        "Cancel", key=f"{key}-cancel-{document.id}", icon=":material/stop_circle:", width="stretch",
        disabled=document.cancel_requested,
    ):
        clicked = SourceAction("cancel", document.id)
    elif document.status in ("failed", "cancelled") and first.button(
        "Retry", key=f"{key}-retry-{document.id}", icon=":material/refresh:", width="stretch"
    ):
        clicked = SourceAction("retry", document.id)
    second.button(
        "Remove", key=f"{key}-remove-{document.id}", icon=":material/delete:", width="stretch",
        on_click=_open_confirm, args=(key, document.id),
    )
    return clicked


def _render_confirm_remove(document: Document, *, key: str) -> SourceAction | None:
    st.warning(
        f"Remove **{escape_markdown(document.name)}** from this workspace with its passages and vectors? "
        "This cannot be undone.",
        icon=":material/warning:",
    )
    confirm_col, cancel_col, _ = st.columns([2, 1, 3])
    confirmed = confirm_col.button(
        "Remove permanently", key=f"{key}-confirm-remove-{document.id}", type="primary", width="stretch"
    )
    cancel_col.button("Keep", key=f"{key}-keep-{document.id}", width="stretch",
                      on_click=close_remove_confirmation, kwargs={"key": key})
    return SourceAction("remove", document.id) if confirmed else None


def _open_confirm(key: str, document_id: str) -> None:
    st.session_state[f"{key}-confirm"] = document_id
