"""Source guides and suggested questions: on the Sources page (a guide per source) and at the top of an empty chat.

Everything shown is the documents' own text (or a model's summary of it), escaped before it reaches markdown.
"""

from __future__ import annotations

import streamlit as st

from components.text import escape_label, escape_markdown
from workspace_app.models.guides import GuideRecommendation, SourceGuide, SuggestedQuestion

MAX_GREETING_GUIDES = 4


def render_source_guide(guide: SourceGuide, *, key: str) -> None:
    """One source's guide: summary, key recommendations with class and level, key topics, main entities."""
    with st.container(key=key):
        if guide.llm_summary:
            st.markdown(escape_markdown(guide.llm_summary))
            st.caption("Summary written by the language model from the source's own sentences.")
        elif guide.summary:
            st.markdown(escape_markdown(guide.summary))
        else:
            st.caption("No summary: the source has too little running text.")
        if guide.recommendations:
            st.markdown("**Key recommendations**")
            st.markdown("\n".join(f"- {recommendation_line(r)}" for r in guide.recommendations))
        if guide.topics:
            st.caption(f"Key topics: {' · '.join(escape_markdown(t) for t in guide.topics)}")
        if guide.entities:
            names = " · ".join(f"{escape_markdown(e.name)} ({escape_markdown(e.type)})" for e in guide.entities)
            st.caption(f"Main entities: {names}")


def recommendation_line(recommendation: GuideRecommendation) -> str:
    """A recommendation as one escaped markdown line: the statement, its grading, its page."""
    grading = [f"Class {recommendation.recommendation_class}"] if recommendation.recommendation_class else []
    grading += [f"Level {recommendation.evidence_level}"] if recommendation.evidence_level else []
    badge = f" :blue-badge[{escape_markdown(', '.join(grading))}]" if grading else ""
    return f"{escape_markdown(recommendation.text)}{badge} *p. {recommendation.page}*"


def render_chat_greeting(
    guides: list[tuple[str, SourceGuide]], questions: list[SuggestedQuestion], *, key: str
) -> str | None:
    """The empty chat: what the sources are about and questions they answer; returns the question clicked."""
    with st.container(key=key):
        if guides:
            st.markdown("**Your sources**")
            for name, guide in guides[:MAX_GREETING_GUIDES]:
                summary = guide.llm_summary or guide.summary or "No summary available."
                with st.expander(escape_label(name), icon=":material/description:"):
                    render_source_guide(guide, key=f"{key}-guide-{guide.document_id}")
                st.caption(escape_markdown(_shorten(summary, 260)))
            if len(guides) > MAX_GREETING_GUIDES:
                st.caption(f"…and {len(guides) - MAX_GREETING_GUIDES} more on the Sources page.")
        if not questions:
            return None
        st.markdown("**Questions your sources answer**")
        clicked = None
        for index, question in enumerate(questions):
            if st.button(escape_label(question.question), key=f"{key}-question-{index}", icon=":material/help:",
                         help=escape_markdown(f"From {question.document}")):
                clicked = question.question
        return clicked


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
