"""A chat as Markdown: each question, its answer and the numbered list of what each citation quotes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from workspace_app.models.answers import Answer, Chat, ChatMessage, Citation


def chat_markdown(chat: Chat, messages: Sequence[ChatMessage]) -> str:
    """The whole chat; document text is quoted as text (Markdown specials escaped)."""
    parts = [f"# {escape(chat.title)}", ""]
    for message in messages:
        parts += [f"## {escape(message.question)}", "", answer_markdown(message.answer), ""]
    return "\n".join(parts).rstrip() + "\n"


def answer_markdown(answer: Answer) -> str:
    """One answer with its citation list and disclaimer."""
    lines = [escape(answer.text, keep_markers=True), ""]
    if not answer.grounded:
        lines += ["*Some sentences could not be verified against their sources.*", ""]
    if answer.citations:
        lines += ["**Citations**", ""]
        lines += [citation_line(c) for c in answer.citations]
        lines.append("")
    if answer.entities:
        named = ", ".join(
            f"{escape(e.name)} ({escape(e.type)})" + "".join(f" [{n}]" for n in e.citations) for e in answer.entities
        )
        lines += [f"**Entities ({escape(answer.mode)} mode)**: {named}", ""]
    if answer.disclaimer:
        lines.append(f"*{escape(answer.disclaimer)}*")
    return "\n".join(lines).rstrip()


def citation_line(citation: Citation) -> str:
    """`[n] document, p. X, section — "quote" (Class I, LOE A)`."""
    pages = f"p. {citation.page_start}" + (f"–{citation.page_end}" if citation.page_end != citation.page_start else "")
    grading = grading_text(citation)
    tail = f" ({escape(grading)})" if grading else ""
    section = f", {escape(citation.section)}" if citation.section else ""
    return f"{citation.n}. {escape(citation.document)}, {pages}{section}: “{escape(citation.quote)}”{tail}"


def grading_text(citation: Citation) -> str:
    """'Class I, LOE B-NR' or what is known of it."""
    parts = []
    if citation.recommendation_class:
        parts.append(f"Class {citation.recommendation_class}")
    if citation.evidence_level:
        parts.append(f"LOE {citation.evidence_level}")
    return ", ".join(parts)


_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$&:")


def escape(text: str, keep_markers: bool = False) -> str:
    """Markdown-inert text: specials backslash-escaped, no raw HTML; `[n]` markers kept when asked."""
    out = "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)
    if keep_markers:
        out = re.sub(r"\\\[(\d{1,3})\\\]", r"[\1]", out)
    return out
