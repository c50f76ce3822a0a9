"""The figures an answer shows: the one its question asks for ("show the syncope evaluation algorithm", "HFpEF 的诊断
流程图"), found by the figure search (caption, inner text, nearby passages), then those beside its cited passages.

A question asks for a figure when it names a kind of picture or says "show": words of documents in general, not of
medicine. Without such a word only the figures beside cited passages are shown, and none with a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from workspace_app.models.documents import Figure
from workspace_app.storage.base import FigureRepository
from workspace_app.text.analyzer import query_terms

_ASKS_FOR_FIGURE = re.compile(
    r"\b(?:show|figures?|fig|algorithms?|flow\s*charts?|flow\s*diagrams?|diagrams?|charts?|illustrations?|"
    r"pictures?|images?)\b|流程图|示意图|流程|图\s*\d",  # not 图 alone: 心电图 (an ECG) is no picture
    re.IGNORECASE,
)
# Words that only say a picture is wanted: they are left out of the figure search (every caption would match
# "figure"; "show" matches nothing), so the search weighs what the question is about.
_PICTURE_WORDS = re.compile(r"\b(?:show|figures?|fig|pictures?|images?)\b", re.IGNORECASE)


def asks_for_figure(question: str) -> bool:
    """Whether the question asks to see a figure (an algorithm, a chart, a flowchart...)."""
    return _ASKS_FOR_FIGURE.search(question) is not None


def figure_query(question: str) -> str:
    """What a question asking for a figure asks the figure search: the question without the words that only say a
    picture is wanted."""
    return re.sub(r"\s+", " ", _PICTURE_WORDS.sub(" ", question)).strip()


def answer_figures(
    figures: FigureRepository, query: str | None, workspace_id: str, document_ids: Sequence[str] | None,
    cited_chunk_ids: Sequence[str], limit: int,
) -> list[Figure]:
    """Up to `limit` figures: the figure search's best match for `query` (the plan's call of the figure tool, None
    when the question asks for no figure), then the figures beside the cited passages (in the citations' order)."""
    shown: list[Figure] = []
    if query is not None:
        ranked = figures.search_figures(workspace_id, query_terms(query), 1, document_ids)
        shown += list(figures.get_figures([figure_id for figure_id, _ in ranked]).values())
    for figure in figures.figures_beside(cited_chunk_ids):
        if figure.id not in {f.id for f in shown}:
            shown.append(figure)
    return shown[:limit]
