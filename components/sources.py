"""Widgets of the Sources page: the upload drop zone and the one list of sources, a row per source.

Each row holds everything about its source: the "use in chat" checkbox, name and facts, live progress with the
current stage's counter (queued and running), the status badge, the plain-words error of a failed one, the
actions (cancel; retry only when running it again may help; remove with confirmation) and, once ready, its
source guide. Every user-supplied or document text (names, errors, guides) is escaped before it reaches markdown.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import BinaryIO, Literal

import streamlit as st

from components.guide import render_source_guide
from components.text import escape_markdown, escape_mid_line, format_date, plural
from workspace_app.models.documents import Document, time_left_words
from workspace_app.models.guides import SourceGuide

ActionKind = Literal["cancel", "retry", "remove", "include", "exclude"]
STAGE_TEXT = {
    "queued": "Waiting for a worker",
    "parsing": "Reading pages",
    "tables": "Reading tables",
    "ocr": "Reading scanned pages (OCR)",
    "chunking": "Splitting into passages",
    "embedding": "Embedding passages",
    "indexing": "Indexing",
    "figures": "Finding figures",
    "figure text": "Reading the words in figures (OCR)",
    "cross-language": "Indexing for questions in the other language",
    "sentences": "Preparing sentences for answers",
    "graph": "Building the entity graph",
    "graph links": "Linking the entity graph (communities and summaries)",
    "guide": "Writing the source guide",
}
# What the current stage counts (the counter shown beside its name).
STAGE_UNITS = {"parsing": "pages", "tables": "pages", "ocr": "pages", "chunking": "sections", "embedding": "passages",
               "indexing": "passages", "figures": "pages", "figure text": "pictures", "cross-language": "passages",
               "sentences": "sentences", "graph": "passages"}
STATUS_TEXT = {"queued": "Queued", "running": "Processing", "ready": "Ready", "failed": "Failed", "cancelled": "Cancelled"}
_BADGES = {"ready": ":green-badge[:material/check: Ready]", "failed": ":red-badge[:material/error: Failed]",
           "cancelled": ":gray-badge[:material/block: Cancelled]"}


@dataclass(frozen=True)
class Upload:
    """A file the user dropped: its name and contents (read from Streamlit's buffer, never copied whole)."""

    name: str
    data: BinaryIO


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
    return [Upload(file.name, file) for file in files]


def clear_uploader(*, key: str) -> None:
    """Empty the drop zone rendered with `key` (a new widget replaces it on the next run)."""
    st.session_state[f"{key}-generation"] = st.session_state.get(f"{key}-generation", 0) + 1


def render_upload_problems(problems: list[str], duplicates: list[str] | None = None, *, key: str) -> bool:
    """The files that could not be added (with their reasons) and those already in the workspace; True when
    the user dismisses them."""
    duplicates = duplicates or []
    if not problems and not duplicates:
        return False
    with st.container(border=True, key=f"{key}-box"):
        if problems:
            st.markdown(f"**{plural(len(problems), 'file')} could not be added**")
            for problem in problems:
                st.error(escape_markdown(problem), icon=":material/error:")
        if duplicates:
            st.markdown(f"**{plural(len(duplicates), 'file')} already in this workspace, not added again**")
            for duplicate in duplicates:
                st.info(escape_markdown(duplicate), icon=":material/content_copy:")
        return st.button("Dismiss", key=f"{key}-dismiss", icon=":material/close:")


def render_summary(documents: list[Document]) -> None:
    """One line: how many sources, and how many are ready, in progress, failed."""
    counts = {status: sum(d.status == status for d in documents) for status in STATUS_TEXT}
    parts = [plural(len(documents), "source"), f"{counts['ready']} ready"]
    busy = counts["queued"] + counts["running"]
    parts += [f"{busy} in progress"] if busy else []
    parts += [f"{counts['failed']} failed"] if counts["failed"] else []
    st.caption(" · ".join(parts))


def render_source_rows(
    documents: list[Document], guides: dict[str, SourceGuide] | None = None, *, key: str
) -> SourceAction | None:
    """The one list of sources: a row each with its checkbox, state, error, actions and guide; returns the
    action the user took."""
    action = None
    for document in documents:
        with st.container(border=True, key=f"{key}-row-{document.id}"):
            action = _render_row(document, (guides or {}).get(document.id), key=key) or action
    return action


def take_early_action(*, key: str) -> SourceAction | None:
    """The cancel or include/exclude asked for by a click on the rows rendered with `key`, once. Their widgets
    record it in a callback, which runs before the next run: the page applies it before it lists the sources,
    so that run already shows "Cancelling…" or the new tick (no second rerun, which took seconds under load)."""
    return st.session_state.pop(f"{key}-early", None)


def _remember(key: str, action: SourceAction) -> None:
    st.session_state[f"{key}-early"] = action


def _remember_include(key: str, widget: str, document_id: str) -> None:
    _remember(key, SourceAction("include" if st.session_state.get(widget) else "exclude", document_id))


def close_remove_confirmation(*, key: str) -> None:
    """Close the open "remove?" confirmation of the rows rendered with `key`."""
    st.session_state.pop(f"{key}-confirm", None)


def status_text(document: Document) -> str:
    """Short plain status: "Ready", "Embedding passages 120/340 · about 40 s left in this step", "Failed". The time
    left is the stage's, at the pace measured in this run (none until measured: "estimating the time left…")."""
    if not document.is_active:
        return STATUS_TEXT.get(document.status, document.status.capitalize())
    note = document.job_note(time.time())
    if document.stalled or document.retrying:
        return (note or "").capitalize()
    text = STAGE_TEXT.get(document.stage, document.stage.capitalize())
    counts = _stage_counts(document)
    if counts:
        text += f" {counts}"
    if document.cancel_requested:
        return f"Cancelling… ({text})"
    if document.partly_searchable:
        text += " · partly searchable (the pages read so far)"
    if document.waiting_turn:
        text += " · waiting for the model (another source is using it)"
    elif document.estimating:
        text += " · estimating the time left…"
    elif document.eta_s is not None and document.status == "running" and _stage_counts(document):
        text += f" · {format_eta(document.eta_s)} in this step"
    return f"{text} · {note}" if note else text


def format_size(size_bytes: int) -> str:
    """Bytes as "512 B", "84 KB", "3.2 MB"."""
    if size_bytes < 1024:
        return f"{size_bytes} B"
    if size_bytes < 1024 * 1024:
        return f"{size_bytes / 1024:.0f} KB"
    return f"{size_bytes / 1048576:.1f} MB"


def format_eta(seconds: float) -> str:
    """ "about 40 s left", "about 3 min left"."""
    return time_left_words(seconds)


def _stage_counts(document: Document) -> str:
    done, total = document.stage_done, document.stage_total
    if document.stage == "parsing" and document.pages:
        done, total = document.pages_parsed, document.pages
    elif document.stage == "embedding" and document.chunks_total:
        done, total = document.chunks_embedded, document.chunks_total
    if total <= 1:  # a stage that has not counted yet (or has one step) shows no counter
        return ""
    unit = STAGE_UNITS.get(document.stage, "")
    named = unit in STAGE_TEXT.get(document.stage, "")  # "Embedding passages 120/340", not "... passages" twice
    return f"{done}/{total}" + (f" {unit}" if unit and not named else "")


def _render_row(document: Document, guide: SourceGuide | None, *, key: str) -> SourceAction | None:
    check_col, info_col, state_col, button_col = st.columns([0.4, 4, 3.2, 2.4], vertical_alignment="center")
    with check_col:
        _render_checkbox(document, key=key)
    with info_col:
        st.markdown(f"**{escape_markdown(document.name)}**")
        st.caption(_facts(document))
    with state_col:
        _render_state(document)
    with button_col:
        action = _render_buttons(document, key=key)
    if document.status == "failed" and document.error:
        hint = "" if document.retryable else " Remove it, or fix the file and add it again."
        st.error(escape_markdown(document.error + hint), icon=":material/error:")
    elif document.retrying and document.error:
        st.warning(escape_markdown(f"The last try failed: {document.error} It is retried on its own."),
                   icon=":material/sync_problem:")
    if st.session_state.get(f"{key}-confirm") == document.id:
        action = _render_confirm_remove(document, key=key) or action
    if guide is not None:
        with st.expander("Source guide", icon=":material/menu_book:"):
            render_source_guide(guide, key=f"{key}-guide-{document.id}")
    return action


def _render_checkbox(document: Document, *, key: str) -> None:
    failed = document.status == "failed"  # a failed source has nothing to answer with: never shown as used
    widget = f"{key}-include-{document.id}"
    if failed:
        st.session_state[widget] = False  # the widget keeps its last state otherwise (ticked while it ran)
    st.checkbox(
        f"Use {escape_mid_line(document.name)} in chat", value=document.included and not failed,
        key=widget, label_visibility="collapsed", disabled=failed,
        help="This source failed: it cannot be used in chat" if failed else "Use this source in chat answers",
        on_change=_remember_include, args=(key, widget, document.id),
    )


def _facts(document: Document) -> str:
    facts = [plural(document.pages, "page")] if document.pages else []
    facts += [plural(document.chunks, "passage")] if document.status == "ready" else []
    facts += [format_size(document.size_bytes), f"added {format_date(document.added_at)}"]
    facts += [] if document.included and document.status != "failed" else ["not used in chat"]
    return " · ".join(facts)


def _render_state(document: Document) -> None:
    if document.is_active:
        st.progress(min(max(document.progress, 0.0), 1.0), text=escape_markdown(status_text(document)))
    else:
        st.markdown(_BADGES.get(document.status, escape_markdown(document.status)))


def _render_buttons(document: Document, *, key: str) -> SourceAction | None:
    first, second = st.columns(2)
    clicked = None
    if document.is_active:
        first.button(
            "Cancel", key=f"{key}-cancel-{document.id}", icon=":material/stop_circle:", width="stretch",
            disabled=document.cancel_requested, on_click=_remember, args=(key, SourceAction("cancel", document.id)),
        )
    elif (document.status == "cancelled" or (document.status == "failed" and document.retryable)) and first.button(
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
