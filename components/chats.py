"""Widgets of the Chat page: the chat picker (new, open, rename, delete, export) and the source scope line; and
`ask_in_chat`, how another page puts a question to the chat."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import streamlit as st

from components.text import escape_markdown, plural
from workspace_app.app import safe_file_name
from workspace_app.models.answers import Chat
from workspace_app.models.documents import Document

ChatActionKind = Literal["new", "open", "rename", "delete"]
# The questions asked but not yet answered, as (workspace id, question): the Chat page answers them in order.
PENDING = "chat-pending"


@dataclass(frozen=True)
class ChatAction:
    """What the user asked for: the kind, the chat and a title where one was typed."""

    kind: ChatActionKind
    chat_id: str | None = None
    title: str | None = None


def render_chat_picker(
    chats: list[Chat], current: Chat | None, export: str | None, *, key: str, editable: bool = True
) -> ChatAction | None:
    """New chat, the list of chats, rename, delete and export of the current one (without `editable`, a role that
    only reads: the list and the export)."""
    action: ChatAction | None = st.session_state.pop(_action_key(key), None)
    if editable and st.button("New chat", key=f"{key}-new", icon=":material/add_comment:", width="stretch"):
        action = ChatAction("new")
    if chats:
        listed = _render_list(chats, current, key=key)
        action = action or listed
    if current is not None:
        _render_manage(current, export, key=key, editable=editable)
    return action


def ask_in_chat(workspace_id: str, question: str) -> None:
    """Leave a question for the Chat page, which asks it when it next runs (another page, then st.switch_page)."""
    st.session_state[PENDING] = [*st.session_state.get(PENDING, []), (workspace_id, question)]


def chat_labels(chats: list[Chat]) -> dict[str, str]:
    """A distinct label per chat: Streamlit's selectbox reports the picked label, so two chats both called 'New chat'
    would both open the first of them. Repeated titles get their creation time, then a number."""
    counts: dict[str, int] = {}
    for chat in chats:
        counts[chat.title] = counts.get(chat.title, 0) + 1
    labels: dict[str, str] = {}
    for chat in chats:
        label = chat.title if counts[chat.title] == 1 else f"{chat.title} · {_created(chat.created_at)}"
        while label in labels.values():
            label += " ·"
        labels[chat.id] = label
    return labels


def _created(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%-d %b %H:%M:%S")
    except ValueError:
        return iso


def _render_list(chats: list[Chat], current: Chat | None, *, key: str) -> ChatAction | None:
    """The chat list; follows the page's current chat unless the user just picked another one."""
    ids = [chat.id for chat in chats]
    titles = chat_labels(chats)
    pick_key, shown_key = f"{key}-pick", f"{key}-shown"
    chosen = st.session_state.get(pick_key)
    action = None
    if chosen in ids and chosen != st.session_state.get(shown_key):
        action = ChatAction("open", chosen)
        st.session_state[shown_key] = chosen
    elif current is not None:
        st.session_state[pick_key] = st.session_state[shown_key] = current.id
    st.selectbox("Chats", ids, format_func=lambda chat_id: titles[chat_id], key=pick_key)
    return action


def _render_manage(chat: Chat, export: str | None, *, key: str, editable: bool = True) -> None:
    """Rename and delete popovers for this chat (when `editable`), and its export.

    The popovers and the name box keep one identity whatever chat is shown: Streamlit's frontend reuses a block drawn
    at the same place and keeps the widgets it no longer gets as hidden "retained" copies, so per-chat keys left one
    hidden "Chat name" box per chat visited in the popover, and a popover opened during a chat switch was swapped for
    a new, closed one. Only the buttons carry the chat they were drawn for, so a second click can never reach the chat
    shown next; their callback starts a new generation of popover keys, which draws new, closed popovers (Streamlit
    keeps a popover open across reruns while its identity stays the same)."""
    if editable:
        _render_rename_and_delete(chat, key=key)
    if export is not None:
        st.download_button(
            "Export to Markdown", export.encode("utf-8"), file_name=safe_file_name(chat.title, "md", "chat"),
            mime="text/markdown", key=f"{key}-export", icon=":material/download:", width="stretch", on_click="ignore",
        )


def _render_rename_and_delete(chat: Chat, *, key: str) -> None:
    generation = st.session_state.get(_generation_key(key), 0)
    name_key = f"{key}-rename-name"
    _fill_name_box(chat, name_key, key=key)
    with st.popover("Rename", icon=":material/edit:", width="stretch", key=f"{key}-rename-pop-{generation}"):
        st.text_input("Chat name", max_chars=80, key=name_key)
        st.button(
            "Save name", key=f"{key}-rename-save-{chat.id}", type="primary",
            on_click=_request, args=(key, "rename", chat.id, name_key),
        )
    with st.popover("Delete", icon=":material/delete:", width="stretch", key=f"{key}-delete-pop-{generation}"):
        st.markdown(f"Delete **{escape_markdown(chat.title)}** and all its answers?")
        st.button(
            "Delete chat", key=f"{key}-delete-confirm-{chat.id}", type="primary",
            on_click=_request, args=(key, "delete", chat.id, None),
        )


def _fill_name_box(chat: Chat, name_key: str, *, key: str) -> None:
    """Put the chat's title in the name box when another chat (or a new title) is shown, or the box was dropped
    (Streamlit forgets a widget's value on a run that does not draw it); what the user typed stays otherwise."""
    filled_key = f"{key}-rename-filled"
    if st.session_state.get(filled_key) != (chat.id, chat.title) or name_key not in st.session_state:
        st.session_state[name_key] = chat.title
        st.session_state[filled_key] = (chat.id, chat.title)


def _request(key: str, kind: ChatActionKind, chat_id: str, title_key: str | None) -> None:
    """Button callback: remember the action for this run and close the popovers (new keys, drawn closed)."""
    title = st.session_state.get(title_key) if title_key else None
    st.session_state[_action_key(key)] = ChatAction(kind, chat_id, title)
    st.session_state[_generation_key(key)] = st.session_state.get(_generation_key(key), 0) + 1


def _generation_key(key: str) -> str:
    return f"{key}-generation"


def _action_key(key: str) -> str:
    return f"{key}-requested"


def render_save_to_notes(saved: bool, *, key: str) -> bool:
    """'Save to notes' under an answer, or, once saved, a disabled 'Saved to notes' (an answer is saved once)."""
    if saved:
        st.button("Saved to notes", key=key, icon=":material/bookmark_added:", type="tertiary", disabled=True)
        return False
    return st.button("Save to notes", key=key, icon=":material/bookmark_add:", type="tertiary")


# Plain-language names of the query modes; the default needs no choosing (see render_query_mode).
MODE_NAMES = {
    "hybrid": ("Balanced (recommended)", "Passages that match your words, plus what the entity graph links to them."),
    "naive": ("Text search only", "Passages that match your words and their meaning; the entity graph is not used."),
    "local": ("Named concepts", "Starts from the drugs, diseases and tests your question names and their neighbours."),
    "global": ("Big-picture topics", "Starts from summaries of the sources' main topics; for broad questions."),
}


def render_query_mode(modes: tuple[str, ...] | list[str], default: str, *, key: str) -> str:
    """How sources are searched: the default unless changed under 'Advanced', each way named in plain words."""
    with st.expander("Advanced: how sources are searched", icon=":material/tune:", key=f"{key}-advanced"):
        mode = st.radio(
            "Search", list(modes), index=list(modes).index(default), key=key, label_visibility="collapsed",
            format_func=lambda m: MODE_NAMES.get(m, (m, ""))[0],
            captions=[MODE_NAMES.get(m, (m, ""))[1] for m in modes],
        )
    return mode if mode in modes else default


def render_patient_choice(patient_ids: list[str], *, key: str) -> str | None:
    """The patient questions are asked about (their records cited beside the guidelines), or None; nothing is
    drawn when no patient records were imported."""
    if not patient_ids:
        return None
    chosen = st.selectbox(
        "About a patient", [None, *patient_ids], key=key,
        format_func=lambda p: "No patient: the sources only" if p is None else f"Patient {p}",
        help="Ask about the patient's timeline (\"what anticoagulants did she get in the last 48 hours?\", "
        "\"患者最近服过什么药？\"): the answer cites the events the record gives, or says the record does not say. "
        "Ask what the guidelines say about the patient: the answer cites their records, the guidelines and the "
        "standard definitions.",
    )
    return chosen if chosen in patient_ids else None


def render_scope(documents: list[Document]) -> None:
    """Which sources answers come from (the 'use in chat' ticks of the Sources page)."""
    ready = [d for d in documents if d.status == "ready"]
    used = [d for d in ready if d.included]
    if not ready:
        st.warning("This workspace has no ready sources yet. Add PDFs on the Sources page.", icon=":material/inbox:")
    elif not used:
        st.warning("Every source is switched off for chat. Tick some on the Sources page.", icon=":material/block:")
    else:
        names = ", ".join(escape_markdown(d.name) for d in used)
        st.caption(f":material/filter_alt: Answering from {len(used)} of {plural(len(ready), 'ready source')}: {names}")
    st.page_link("pages/sources.py", label="Choose sources", icon=":material/tune:")
