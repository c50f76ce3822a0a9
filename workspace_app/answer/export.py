"""A chat as Markdown: each question, its answer and the numbered list of what each citation quotes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from workspace_app.models.answers import Answer, Chat, ChatMessage, Citation, Note
from workspace_app.text.grades import describe_class


def chat_markdown(chat: Chat, messages: Sequence[ChatMessage]) -> str:
    """The whole chat; document text is quoted as text (what would form Markdown escaped)."""
    parts = [f"# {escape(chat.title, inline=True)}", ""]
    for message in messages:
        parts += [f"## {escape(message.question, inline=True)}", "", answer_markdown(message.answer), ""]
    return "\n".join(parts).rstrip() + "\n"


def notes_markdown(workspace_name: str, notes: Sequence[Note]) -> str:
    """All notes of a workspace: each saved answer with its citations, and each note's own Markdown as written."""
    parts = [f"# Notes: {escape(workspace_name, inline=True)}", ""]
    parts += [note_markdown(note, "##") for note in notes]
    return "\n".join(parts).rstrip() + "\n"


def note_markdown(note: Note, heading: str = "#") -> str:
    """One note under its title: its own Markdown as written (its headings nested below the title), then its saved
    answer with the citations."""
    parts = [f"{heading} {escape(note.title, inline=True)}", ""]
    if note.body:
        parts += [nested_headings(note.body, len(heading)), ""]
    if note.answer is not None:
        parts += [answer_markdown(note.answer), ""]
    return "\n".join(parts).rstrip() + "\n"


_ATX_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def nested_headings(markdown: str, depth: int) -> str:
    """Markdown whose outline sits just below a heading of level `depth`, outside fenced code: its shallowest
    heading becomes level depth + 1 and the others keep their distance to it (at most 6). A note's "# Plan" and
    "## Doses" exported under its "## title" become "### Plan" and "#### Doses"."""
    fence, found = "", []
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if opened and (not fence or opened.group(1) == fence):
            fence = "" if fence else opened.group(1)
        found.append(None if fence or opened else _ATX_HEADING.match(line))
    levels = [len(m.group(2)) for m in found if m]
    if not levels:
        return markdown
    shift = depth + 1 - min(levels)
    return "\n".join(
        line if m is None else m.group(1) + "#" * max(1, min(6, len(m.group(2)) + shift)) + line[m.end():]
        for line, m in zip(markdown.split("\n"), found)
    )


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
            f"{escape(e.name, inline=True)} ({escape(e.type, inline=True)})" + "".join(f" [{n}]" for n in e.citations) for e in answer.entities
        )
        lines += [f"**Entities ({escape(answer.mode)} mode)**: {named}", ""]
    if answer.disclaimer:
        lines.append(f"*{escape(answer.disclaimer)}*")
    return "\n".join(lines).rstrip()


def citation_line(citation: Citation) -> str:
    """`[n] document, p. X, section — "quote" (Class I, LOE A)`; a patient event or a definition has its level
    instead of pages."""
    pages = f"p. {citation.page_start}" + (f"–{citation.page_end}" if citation.page_end != citation.page_start else "")
    if citation.level != "guideline":
        pages = f"({citation.level})"
    grading = grading_text(citation)
    tail = f" ({escape(grading, inline=True)})" if grading else ""
    section = f", {escape(citation.section, inline=True)}" if citation.section else ""
    return f"{citation.n}. {escape(citation.document, inline=True)}, {pages}{section}: “{escape(citation.quote, inline=True)}”{tail}"


def grading_text(citation: Citation) -> str:
    """'Class I, LOE B-NR' or what is known of it."""
    parts = []
    if citation.recommendation_class:
        parts.append(describe_class(citation.recommendation_class))
    if citation.evidence_level:
        parts.append(f"LOE {citation.evidence_level}")
    return ", ".join(parts)


# Markdown syntax the exported text could form by accident, and nothing else: a reader of the .md file as plain
# text sees "mosca-2011-women-cvd.pdf", "(Class IIa, LOE B)" and "[56]", not "mosca\-2011", "\(Class IIa\)" or "\[56\]".
_INLINE = re.compile(
    r"\\(?=[!-/:-@\[-`{-~])"  # a backslash that would escape what follows
    r"|[`*]|~~"  # code, emphasis, strikethrough
    # An inline link or image, or a reference definition. "[3][4]" (our markers side by side, or a source's) would
    # be a reference link only with a definition, and every definition is escaped.
    r"|\[(?=[^\[\]\n]*\][(:])"
    r"|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])"  # emphasis: an underscore inside a word (snake_case) forms none
    r"|<(?=[A-Za-z/!?])"  # raw HTML and autolinks (a "<40%" stays as it is)
    r"|&(?=#?[0-9A-Za-z]+;)"  # character references
)
# Block syntax formed only at the start of a line: headings, quotes, list items, rules, setext underlines.
_LINE_START = re.compile(r"^(\s*)(#|>|[-+=]|\d+(?=[.)]\s|[.)]$))", re.MULTILINE)


def escape(text: str, keep_markers: bool = False, inline: bool = False) -> str:
    """Text that Markdown shows as written, escaping only what would form Markdown; `[n]` markers kept when asked.
    `inline`: the text goes after something on its line (a heading's "## ", a citation's document), where its
    start forms no block ("## 9. LIFESTYLE" is a heading, not a list)."""
    out = _INLINE.sub(lambda m: m.group() if _cannot_open(m.group(), text, m.start()) else "".join("\\" + ch for ch in m.group()), text)
    out = _LINE_START.sub(
        lambda m: m.group() if inline and m.start() == 0
        else m.group(1) + ("\\" + m.group(2) if not m.group(2)[0].isdigit() else m.group(2) + "\\"), out,
    )
    if keep_markers:
        out = re.sub(r"\\\[(\d{1,3})\\\]", r"[\1]", out)
    return out


def _cannot_open(mark: str, text: str, at: int) -> bool:
    """An asterisk that cannot open emphasis ("Guideline*", "p*,"): not followed by text, or glued after a word and
    before punctuation (CommonMark's left-flanking rule). Every one that can open is escaped, so none can close."""
    if mark != "*":
        return False
    after, before = text[at + 1 : at + 2], text[at - 1 : at] if at else ""
    if not after or after.isspace():
        return True
    return _punctuation(after) and bool(before) and not before.isspace() and not _punctuation(before)


def _punctuation(char: str) -> bool:
    return not char.isalnum() and not char.isspace()
