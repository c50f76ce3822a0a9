"""The Notes page's studio: build a FAQ, a briefing or a study guide from the workspace's sources, every statement
cited, kept as a note (whose chips open the cited passages) and offered as a Markdown download."""

from __future__ import annotations

import streamlit as st

from components.account import may
from components.feedback import flash, report_errors
from workspace_app.app import STUDIO_KINDS, Action, App, safe_file_name
from workspace_app.models.documents import Workspace

LAST = "studio-last"  # (workspace id, title, Markdown) of the output built last, for its download
_LABELS = {"faq": ("FAQ", ":material/quiz:"), "briefing": ("Briefing", ":material/summarize:"),
           "study-guide": ("Study guide", ":material/school:")}
_HELP = {
    "faq": "The suggested questions of your sources, each with its cited answer.",
    "briefing": "Each source's key recommendations with class, level and page (or its summary), cited.",
    "study-guide": "Each source's key topics with what the source says they are, cited.",
}


def render_studio(app: App, workspace: Workspace, *, can_save: bool = True) -> None:
    """Three buttons; the one clicked builds its output with progress, saves it as a note and reruns. Without
    `can_save` (a viewer's role) the buttons are disabled: a build is saved to the workspace's notes."""
    with st.container(border=True, key="studio"):
        st.markdown("**Studio**")
        st.caption("Build a document from this workspace's sources. Every statement is cited; it is saved to your notes.")
        columns = st.columns(len(STUDIO_KINDS))
        clicked = None
        for column, kind in zip(columns, STUDIO_KINDS, strict=True):
            label, icon = _LABELS[kind]
            if column.button(label, key=f"studio-{kind}", icon=icon, width="stretch", disabled=not can_save,
                             help=_HELP[kind] if can_save else "Building saves a note: an editor's role is needed."):
                clicked = kind
        if clicked is not None:
            _build(app, workspace, clicked)
        last = st.session_state.get(LAST)
        if last and last[0] == workspace.id:
            st.download_button(
                f"Download “{last[1]}” (Markdown)", last[2].encode("utf-8"), file_name=safe_file_name(last[1], "md", "studio"),
                mime="text/markdown", key="studio-download", icon=":material/download:", on_click="ignore",
            )


def _build(app: App, workspace: Workspace, kind: str) -> None:
    label = _LABELS[kind][0]
    if not may(app, workspace.id, Action.EDIT):  # the build is saved to the workspace's notes
        st.error("Building saves a note in this workspace, which your role here does not allow.", icon=":material/lock:")
        return
    with report_errors(), st.status(f"Building the {label.lower()}…", expanded=True) as status:
        bar = st.progress(0.0, text="Reading the sources…")

        def show(done: int, total: int) -> None:
            bar.progress(done / total if total else 0.0, text=f"{done} of {total} done")

        output = app.studio.build(workspace.id, kind, report=show)  # type: ignore[arg-type]
        app.studio.save(workspace.id, output)
        status.update(label=f"{label} built", state="complete")
        st.session_state[LAST] = (workspace.id, output.title, app.studio.markdown(output))
        left = f" ({output.left_out} of {output.items} left out: the sources do not answer them)" if output.left_out else ""
        flash(f"“{output.title}” saved to your notes{left}.")
        st.rerun()
