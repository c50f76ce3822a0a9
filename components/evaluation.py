"""Widgets of the Evaluation page: the question file (its format, an example to download), what was read of it,
the run's progress, the figures and the per-question rows.

Dataframes show text as text; anything put into markdown is escaped first.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from components.chats import MODE_NAMES
from components.sources import format_eta
from components.text import escape_markdown, plural
from workspace_app.models.evaluation import EvaluationReport

FORMAT = """One JSON object a line:

- `question`: the question's text (the only field every line needs);
- `doc` and `pages`: the source that answers it, named as on the Sources page, and its pages (counted from 1; leave
  them out for any page);
- `answers`: text a right passage contains, instead of a source or with it;
- `"answerable": false` for a question the sources cannot answer (the answer should refuse it);
- optional: `id`, `lang` (`en` or `zh`; detected when absent), `split` (figures per split), and `docs` with one
  page list each in `pages` for a question that needs several sources.
"""
EXAMPLE = (
    '{"id": "q1", "question": "What tilt angle gives the best yield?", "doc": "syncope.pdf", "pages": [21]}\n'
    '{"id": "q2", "question": "每日钠摄入上限是多少？", "answers": ["2,400 mg"], "split": "zh-ward"}\n'
    '{"id": "q3", "question": "What dose of midodrine should I start?", "answerable": false}\n'
)
QUESTION_WIDTH = 300  # pixels
FIGURES_NOTE = (
    "Each cell is the share, then (right / counted) questions; - when no question counts. Citation and search "
    "figures count the answerable questions, a refusal being a miss; “answerable refused” is better lower."
)


@dataclass(frozen=True)
class QuestionFile:
    """An uploaded question file: its name and content."""

    name: str
    data: bytes


def render_question_format(*, key: str) -> None:
    """The question file's format in a few lines and a three-line example to read or download."""
    with st.container(border=True):
        st.markdown("**Question file format**")
        st.markdown(FORMAT)
        st.code(EXAMPLE, language="json", wrap_lines=True)
        st.download_button(
            "Download the example", EXAMPLE.encode("utf-8"), file_name="example-questions.jsonl",
            mime="application/jsonl", key=f"{key}-example", icon=":material/download:", on_click="ignore",
        )


def render_question_upload(*, key: str) -> QuestionFile | None:
    """The question file's upload; the file chosen, if any."""
    uploaded = st.file_uploader("Question file (.jsonl)", type=["jsonl"], key=key)
    return QuestionFile(uploaded.name, uploaded.getvalue()) if uploaded is not None else None


def render_file_check(questions: int, answerable: int, unknown: Sequence[str]) -> None:
    """How many questions the file holds, and a warning for each gold document the workspace does not have."""
    st.caption(f":material/check: {plural(questions, 'question')} read: {answerable} answerable, "
               f"{questions - answerable} not answerable.")
    if unknown:
        names = ", ".join(escape_markdown(name) for name in unknown)
        st.warning(
            f"This workspace has no source named {names}: the questions that need "
            f"{'it' if len(unknown) == 1 else 'them'} cannot be right. Check the names in the file against the "
            "Sources page.", icon=":material/warning:",
        )


def render_eval_progress(total: int) -> Callable[[int, int], None]:
    """A progress bar with "Question k of n" and the time left; returns what to call after each question."""
    started = time.monotonic()
    bar = st.progress(0.0, text=progress_text(0, total, None))

    def update(done: int, of: int) -> None:
        left = (time.monotonic() - started) / done * (of - done) if done else None
        bar.progress(done / of if of else 1.0, text=progress_text(done, of, left))

    return update


def progress_text(done: int, total: int, seconds_left: float | None) -> str:
    """ "Question 3 of 10 · about 20 s left" while questions remain, then "Question 10 of 10 · done"."""
    if done >= total:
        return f"Question {total} of {total} · done"
    eta = "estimating the time left" if seconds_left is None else format_eta(seconds_left)
    return f"Question {done + 1} of {total} · {eta}"


def render_eval_report(report: EvaluationReport, *, file_name: str, key: str) -> None:
    """What the run was, its figures, then each question's row and the rows to download (as `file_name`)."""
    st.subheader("Figures")
    mode = MODE_NAMES.get(report.mode, (report.mode, ""))[0]
    st.caption(f"{escape_markdown(report.file_name)}: {plural(len(report.rows), 'question')} asked, sources searched "
               f"the “{escape_markdown(mode)}” way, in {report.elapsed_s:.0f} s.")
    render_eval_figures(report.figures, key=key)
    st.subheader("Questions")
    render_eval_rows(report.rows, file_name=file_name, key=key)


def render_eval_figures(figures: list[list[str]], *, key: str) -> None:
    """The figures: one row per figure, one column per group (all, each language, each split)."""
    header, *body = figures
    frame = pd.DataFrame([row[1:] for row in body], columns=header[1:], index=[row[0] for row in body])
    st.dataframe(frame, key=f"{key}-figures", width="stretch")
    st.caption(FIGURES_NOTE)


def render_eval_rows(rows: list[dict[str, Any]], *, file_name: str, key: str) -> None:
    """Each question's outcome in a table, and the rows to download as JSONL (as `workspace-app eval --rows`)."""
    # The question gets a fixed width (its full text shows on hover), so every column fits beside it.
    question = st.column_config.TextColumn("question", width=QUESTION_WIDTH)
    st.dataframe(result_table(rows), hide_index=True, key=f"{key}-rows", width="stretch",
                 column_config={"question": question})
    st.download_button(
        "Download the rows (JSONL)", rows_jsonl(rows).encode("utf-8"), file_name=file_name,
        mime="application/jsonl", key=f"{key}-rows-download", icon=":material/download:", on_click="ignore",
    )


def result_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One line per question: id, question, language (and split, when any row has one), answerable, refused,
    right, first citation right, the first cited source and pages, search hit@5, confidence and support."""
    table = pd.DataFrame(
        [
            {"id": r["id"], "question": r["question"], "language": r["lang"], "split": r["split"] or "",
             "answerable": _yes(r["answerable"]), "refused": _yes(r["refused"]), "right": _yes(r["right"]),
             "first citation right": _yes(r["first_right"]),
             "first cited": _cited(r["first_document"], r["first_pages"]), "search hit@5": _yes(r["search_hit5"]),
             "confidence / support": _confidence(r["confidence"], r["support"])}
            for r in rows
        ]
    )
    return table if any(r["split"] for r in rows) else table.drop(columns="split")


def rows_jsonl(rows: list[dict[str, Any]]) -> str:
    """The rows as JSON lines."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _yes(value: bool | None) -> str:
    """ "yes", "no", or "–" for a question it does not apply to (an unanswerable one is not judged by citation)."""
    return "–" if value is None else "yes" if value else "no"


def _confidence(confidence: float, support: str | None) -> str:
    """ "0.83", or "0.83 · confident" when the answer says how well its sources support it."""
    return f"{confidence:.2f} · {support}" if support else f"{confidence:.2f}"


def _cited(document: str | None, pages: list[int] | None) -> str:
    if document is None:
        return ""
    if not pages:
        return document
    first, last = pages
    return f"{document}, p. {first}" if first == last else f"{document}, pp. {first}–{last}"
