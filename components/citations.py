"""An answer with its citation chips ([1], [2]...), the citation details, and its actions.

All document text (quotes, sections, names) and answer text is escaped: a PDF containing `<script>` or a
Markdown link shows it as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import streamlit as st

from components.text import escape_markdown
from workspace_app.app import grading_text
from workspace_app.models.answers import Answer, Citation, EntityRef
from workspace_app.models.documents import Figure

AnswerActionKind = Literal["cite", "save", "figure"]


@dataclass(frozen=True)
class AnswerAction:
    """A chip click (`cite`, with its number), a figure's 'Show in source' (`figure`, with its position from 0) or
    `save` to notes."""

    kind: AnswerActionKind
    n: int | None = None


def escape_answer(text: str) -> str:
    """Answer text as inert Markdown, keeping its paragraphs."""
    return "\n\n".join(escape_markdown(paragraph) for paragraph in text.split("\n\n"))


LEVEL_NAMES = {"patient": "patient record", "vocabulary": "definition"}


def pages_label(citation: Citation) -> str:
    """'p. 11' or 'pp. 11–12'; a patient event or a definition has no page: its level instead."""
    if citation.level in LEVEL_NAMES:
        return LEVEL_NAMES[citation.level]
    if citation.page_end != citation.page_start:
        return f"pp. {citation.page_start}–{citation.page_end}"
    return f"p. {citation.page_start}"


def citation_tooltip(citation: Citation) -> str:
    """The hover text of a chip: document, page, section, grading and the quote."""
    grading = grading_text(citation)
    lines = [f"**{escape_markdown(citation.document)}**, {pages_label(citation)}"]
    if citation.section:
        lines.append(escape_markdown(citation.section))
    if grading:
        lines.append(escape_markdown(grading))
    lines.append(f"“{escape_markdown(citation.quote)}”")
    return "\n\n".join(lines)


REMOVED_HINT = "**Source removed** from the workspace: a click shows the quote saved with the answer."


def removed_documents(citations: list[Citation], present: set[str]) -> frozenset[str]:
    """The ids of the cited documents no longer in the workspace (`present`: the ids of those that are); patient
    events and definitions are not documents of the workspace."""
    return frozenset(c.document_id for c in citations if c.level not in LEVEL_NAMES and c.document_id not in present)


def render_answer(
    answer: Answer, *, key: str, can_save: bool = True, removed: frozenset[str] = frozenset(),
    thumbnails: dict[str, bytes] | None = None,
) -> AnswerAction | None:
    """The answer text, chips, the citation list in an expander, its figures (those with a picture in
    `thumbnails`, by figure id), the disclaimer and 'Save to notes'. Citations of the `removed` documents are marked
    as such before anyone clicks them."""
    if answer.support_note:
        st.info(escape_markdown(answer.support_note), icon=":material/rule:")
    st.markdown(escape_answer(answer.text))
    if not answer.grounded:
        st.warning(
            "Some sentences could not be verified against the cited sources; they are marked as such.",
            icon=":material/report:",
        )
    action = render_chips(answer.citations, key=key, removed=removed)
    if answer.citations:
        render_citation_list(answer.citations, key=f"{key}-list", removed=removed)
    render_entities(answer.entities, answer.mode, crossed=any(c.level == "patient" for c in answer.citations))
    shown = render_figures(answer.figures, thumbnails or {}, key=f"{key}-figures")
    action = shown or action
    st.caption(escape_markdown(answer.disclaimer))
    if can_save and not answer.refused and st.button(
        "Save to notes", key=f"{key}-save", icon=":material/bookmark_add:", type="tertiary"
    ):
        action = AnswerAction("save")
    return action


def render_chips(citations: list[Citation], *, key: str, removed: frozenset[str] = frozenset()) -> AnswerAction | None:
    """One small button per citation, labelled exactly [n]; hovering shows the quote. A chip whose source was
    removed carries a broken-link icon and says so first in its hover text."""
    if not citations:
        return None
    action = None
    with st.container(horizontal=True, key=f"{key}-chips", gap="small"):
        for citation in citations:
            gone = citation.document_id in removed
            tooltip = citation_tooltip(citation)
            if st.button(
                f"\\[{citation.n}\\]", key=f"{key}-chip-{citation.n}", type="secondary",
                help=f"{REMOVED_HINT}\n\n{tooltip}" if gone else tooltip, icon=":material/link_off:" if gone else None,
            ):
                action = AnswerAction("cite", citation.n)
    return action


def entities_line(entities: list[EntityRef]) -> str:
    """'aspirin (drug) \\[1\\] · stroke (disease)': each entity with its type and the citations mentioning it, escaped."""
    parts = []
    for entity in entities:
        marks = "".join(f"\\[{n}\\]" for n in entity.citations)
        parts.append(f"{escape_markdown(entity.name)} ({escape_markdown(entity.type)})" + (f" {marks}" if marks else ""))
    return " · ".join(parts)


def render_entities(entities: list[EntityRef], mode: str, crossed: bool = False) -> None:
    """The graph entities the answer drew on, under the answer (nothing for an answer without any); for an answer
    about a patient (`crossed`), the graph entities it crossed between the patient's record and the guidelines."""
    if entities and crossed:
        st.caption(f"Graph entities crossed (patient record ↔ guidelines, LINKS_TO): {entities_line(entities)}")
    elif entities:
        st.caption(f"Entities used ({escape_markdown(mode)} mode): {entities_line(entities)}")


def render_citation_list(citations: list[Citation], *, key: str, removed: frozenset[str] = frozenset()) -> None:
    """Every citation with its document, page, section, grading and quote (and whether the source was removed)."""
    with st.expander(f"Sources of this answer ({len(citations)})", key=key, icon=":material/format_quote:"):
        for citation in citations:
            grading = grading_text(citation)
            facts = [f"**\\[{citation.n}\\] {escape_markdown(citation.document)}**", pages_label(citation)]
            if grading:
                facts.append(escape_markdown(grading))
            if citation.document_id in removed:
                facts.append("source removed")
            st.markdown(" · ".join(facts))
            if citation.section:
                st.caption(escape_markdown(citation.section))
            st.markdown(f"> {escape_markdown(citation.quote)}")


def figure_label(figure: Figure, document: str) -> str:
    """'Figure 1 · FIGURE 1 Syncope Initial Evaluation · shen.pdf, p. 9' (escaped): what a figure is and where."""
    title = figure.caption or figure.label or "Figure"
    where = f"{document}, p. {figure.rect.page}" if document else f"p. {figure.rect.page}"
    return escape_markdown(f"{title} · {where}")


def render_figures(figures: list[Figure], thumbnails: dict[str, bytes], *, key: str) -> AnswerAction | None:
    """Each figure's thumbnail with its caption and page, and 'Show in source' (outlined in the viewer)."""
    action = None
    for index, figure in enumerate(figures):
        png = thumbnails.get(figure.id)
        if png is None:
            continue  # its source was removed, or it has no picture
        with st.container(key=f"{key}-{index}", border=True):
            st.image(png, width=min(320, _width(png)))
            st.caption(figure_label(figure, ""))
            if st.button("Show in source", key=f"{key}-{index}-open", icon=":material/image_search:", type="tertiary"):
                action = AnswerAction("figure", index)
    return action


def figure_citation(figure: Figure, document: str) -> Citation:
    """A figure as the viewer opens a citation: its page, its box outlined, its caption as the quote."""
    return Citation(
        n=0, chunk_id=figure.chunk_ids[0] if figure.chunk_ids else "", document=document,
        document_id=figure.document_id, page_start=figure.rect.page, page_end=figure.rect.page,
        section=figure.label, quote=figure.caption or figure.label, rects=(figure.rect,), chunk_rects=(figure.rect,),
        score=0.0,
    )


def _width(png: bytes) -> int:
    """A PNG's width in pixels (from its header)."""
    return int.from_bytes(png[16:20], "big") if png[:8] == b"\x89PNG\r\n\x1a\n" else 320
