"""JSON shapes of the API, built on the models' own `to_json` (the CLI's public contract) and only adding to it.

An answer carries seed 001's fields (`answer`, `evidences[{id, guideline_id, guideline_title, year, section_id,
section_title, page_range}]`, one per guideline-level citation) next to ours (`citations` with quotes, rects and class/level of recommendation,
`refused`, `grounded`, `confidence`, `support` with its `support_note`, `language`, `entities`, `disclaimer`, `timings_ms`).
"""

from __future__ import annotations

import re
from typing import Any

from workspace_app.models.answers import Answer, AnswerLine, Chat, ChatMessage, Citation, Note
from workspace_app.models.documents import Workspace
from workspace_app.models.events import Admission

_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20\d\d)(?!\d)")
_SECTION_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?\s")
SOURCE_QUOTE_CHARS = 160


def answer_payload(answer: Answer, workspace: str | None = None) -> dict[str, Any]:
    """An answer as the API returns it: the CLI's `ask --json` plus evidences, disclaimer and how it was made."""
    data = answer.to_json()
    data.update(
        evidences=[evidence_payload(c) for c in answer.citations if c.level == "guideline"], disclaimer=answer.disclaimer,
        answerer=answer.answerer, standalone_question=answer.standalone_question, workspace=workspace,
    )
    return data


def evidence_payload(citation: Citation) -> dict[str, Any]:
    """Seed 001's evidence of one citation: the document as the guideline, its section and pages."""
    section_title = citation.section.split(" > ")[-1].strip() if citation.section else ""
    number = _SECTION_NUMBER.match(section_title)
    year = _YEAR.search(citation.document)
    return {
        "id": f"Doc {citation.n}", "n": citation.n, "guideline_id": citation.document_id,
        "guideline_title": citation.document.rsplit(".", 1)[0] if "." in citation.document else citation.document,
        "year": int(year.group(1)) if year else None, "section_id": number.group(1) if number else None,
        "section_title": section_title, "page_range": [citation.page_start, citation.page_end],
    }


def sources_text(answer: Answer) -> str:
    """The "Sources:" list appended to an answer for chat clients that show plain text."""
    if not answer.citations:
        return ""
    lines = ["Sources:"]
    for c in answer.citations:
        pages = f"p. {c.page_start}" + (f"-{c.page_end}" if c.page_end != c.page_start else "")
        section = f", {c.section.split(' > ')[-1]}" if c.section else ""
        quote = c.quote if len(c.quote) <= SOURCE_QUOTE_CHARS else c.quote[: SOURCE_QUOTE_CHARS - 1] + "…"
        lines.append(f'[{c.n}] {c.document}, {pages}{section}: "{quote}"')
    return "\n".join(lines)


def chat_reply_text(answer: Answer) -> str:
    """The whole reply of the OpenAI-compatible endpoint: the answer with its `[n]`, sources, disclaimer."""
    parts = [answer.support_note, answer.text, sources_text(answer), answer.disclaimer]
    return "\n\n".join(part for part in parts if part)


def chat_reply_line(line: AnswerLine) -> str:
    """What one line of a quoted answer adds to its `chat_reply_text`, sent before the rest is known: the support
    note before the first line, the joiner before the others (the lines' pieces are a prefix of the reply)."""
    if line.index == 0:
        return f"{line.support_note}\n\n{line.text}" if line.support_note else line.text
    return line.joiner + line.text


def workspace_payload(workspace: Workspace) -> dict[str, Any]:
    """A workspace as the CLI prints it."""
    return {
        "id": workspace.id, "name": workspace.name, "created_at": workspace.created_at,
        "documents": workspace.document_count,
    }


def admission_payload(admission: Admission) -> dict[str, Any]:
    """One hospital stay of a patient."""
    return {
        "admission_id": admission.admission_id, "patient_id": admission.patient_id, "admit_time": admission.admit_time,
        "discharge_time": admission.discharge_time, "admission_type": admission.admission_type,
    }


def chat_payload(chat: Chat) -> dict[str, Any]:
    """A chat without its messages."""
    return {"id": chat.id, "workspace_id": chat.workspace_id, "title": chat.title, "created_at": chat.created_at,
            "updated_at": chat.updated_at}


def message_payload(message: ChatMessage) -> dict[str, Any]:
    """One exchange of a chat with its answer."""
    return {"id": message.id, "chat_id": message.chat_id, "position": message.position,
            "question": message.question, "answer": answer_payload(message.answer), "created_at": message.created_at}


def note_payload(note: Note) -> dict[str, Any]:
    """A note: a saved answer (with its citations) or one's own Markdown text."""
    return {
        "id": note.id, "workspace_id": note.workspace_id, "title": note.title, "body": note.body,
        "answer": answer_payload(note.answer) if note.answer is not None else None, "message_id": note.message_id,
        "created_at": note.created_at, "updated_at": note.updated_at,
    }
