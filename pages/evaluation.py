"""Evaluation page: ask a question file of your own (JSONL with gold sources and pages or answer strings) in the
current workspace and see how well its sources answer: first citation right, refusals of the unanswerable, false
refusals, search hits, overall, by language and by split, and each question's outcome.

The run happens in this page's script run (the progress bar moves after each question); its report is kept in
the session (`st.session_state["eval-report"]`) and shown while the same workspace is open.
"""

from __future__ import annotations

import logging
from typing import Any

import streamlit as st

from components.application import EvaluationService, current_app, current_evaluation
from components.chats import render_query_mode, render_scope
from components.evaluation import (
    QuestionFile,
    render_eval_progress,
    render_eval_report,
    render_file_check,
    render_question_format,
    render_question_upload,
)
from components.feedback import GENERIC_ERROR, report_errors
from components.text import escape_markdown
from components.workspace_gate import render_workspace_gate
from workspace_app.app import MODES, App, safe_file_name
from workspace_app.errors import WorkspaceError
from workspace_app.models.documents import Workspace

log = logging.getLogger("workspace_app.ui")

UPLOAD_KEY = "eval-file"
MODE_KEY = "eval-mode"
RUN_KEY = "eval-run"
REPORT = "eval-report"
DEFAULT_MODE = "hybrid"


def render_page(app: App, evaluation: EvaluationService) -> None:
    """The question file, the sources and query mode it is asked with, Run, then the last run's figures and rows."""
    st.title("Evaluation")
    workspace = render_workspace_gate(app.workspaces.get, purpose="your questions are asked of its sources")
    if workspace is None:
        return
    st.caption(f"How well do the sources of **{escape_markdown(workspace.name)}** answer your own questions? "
               "Each question is asked and searched as in Chat, and judged by the sources and pages you give.")
    asking, format_panel = st.columns([3, 2], gap="large")
    with format_panel:
        render_question_format(key=UPLOAD_KEY)
    with asking:
        upload = render_question_upload(key=UPLOAD_KEY)
        questions = read_questions(evaluation, workspace, upload)
        render_scope(app.documents.list(workspace.id))
        mode = render_query_mode(MODES, DEFAULT_MODE, key=MODE_KEY)
        run = st.button("Run the evaluation", key=RUN_KEY, type="primary", icon=":material/play_arrow:",
                        disabled=not questions)
        if run and upload is not None and questions:
            run_evaluation(evaluation, workspace, questions, mode, upload.name)
    report = st.session_state.get(REPORT)
    if report is not None and report.workspace == workspace.id:
        name = safe_file_name(f"Evaluation - {workspace.name}", "jsonl", "evaluation")
        render_eval_report(report, file_name=name, key="eval")


def read_questions(evaluation: EvaluationService, workspace: Workspace, upload: QuestionFile | None) -> list[Any]:
    """The uploaded file's questions, with a word on what was read and on gold sources the workspace lacks; none
    (its error shown) when there is no file or it is malformed."""
    if upload is None:
        return []
    try:
        questions = evaluation.read_questions(upload.data, upload.name)
        unknown = evaluation.unknown_documents(workspace.id, questions)
    except WorkspaceError as exc:  # the message quotes the file's name and text: escaped
        st.error(escape_markdown(exc.user_message), icon=":material/error:")
        return []
    except Exception:
        log.exception("reading a question file failed")
        st.error(GENERIC_ERROR, icon=":material/error:")
        return []
    render_file_check(len(questions), sum(1 for q in questions if q.answerable), unknown)
    return questions


def run_evaluation(
    evaluation: EvaluationService, workspace: Workspace, questions: list[Any], mode: str, file_name: str
) -> None:
    """Ask every question under a progress bar; keep the report in the session (none after a failure)."""
    st.session_state.pop(REPORT, None)
    slot = st.empty()
    with slot.container():
        progress = render_eval_progress(len(questions))
    with report_errors():
        st.session_state[REPORT] = evaluation.run(workspace.id, questions, mode, file_name, progress)
    slot.empty()


app = current_app()
render_page(app, current_evaluation())
