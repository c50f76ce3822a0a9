"""Widgets of the Chat page: the chat picker (new, open, rename, delete, export) and the source scope line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import streamlit as st

from components.text import escape_markdown, plural
from workspace_app.models.answers import Chat
from workspace_app.models.documents import Document

ChatActionKind = Literal["new", "open", "rename", "delete"]


@dataclass(frozen=True)
class ChatAction:
    """What the user asked for: the kind, the chat and a title where one was typed."""

    kind: ChatActionKind
    chat_id: str | None = None
    title: str | None = None


def render_chat_picker(chats: list[Chat], current: Chat | None, export: str | None, *, key: str) -> ChatAction | None:
    """New chat, the list of chats, rename, delete and export of the current one."""
    action = None
    if st.button("New chat", key=f"{key}-new", icon=":material/add_comment:", width="stretch"):
        action = ChatAction("new")
    if chats:
        action = _render_list(chats, current, key=key) or action
    if current is not None:
        action = _render_manage(current, export, key=key) or action
    return action


def _render_list(chats: list[Chat], current: Chat | None, *, key: str) -> ChatAction | None:
    """The chat list; follows the page's current chat unless the user just picked another one."""
    ids = [chat.id for chat in chats]
    titles = {chat.id: chat.title for chat in chats}
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


def _render_manage(chat: Chat, export: str | None, *, key: str) -> ChatAction | None:
    action = None
    with st.popover("Rename", icon=":material/edit:", width="stretch", key=f"{key}-rename-pop"):
        title = st.text_input("Chat name", value=chat.title, max_chars=80, key=f"{key}-rename-{chat.id}")
        if st.button("Save name", key=f"{key}-rename-save", type="primary"):
            action = ChatAction("rename", chat.id, title)
    with st.popover("Delete", icon=":material/delete:", width="stretch", key=f"{key}-delete-pop"):
        st.markdown(f"Delete **{escape_markdown(chat.title)}** and all its answers?")
        if st.button("Delete chat", key=f"{key}-delete-confirm", type="primary"):
            action = ChatAction("delete", chat.id)
    if export is not None:
        st.download_button(
            "Export to Markdown", export.encode("utf-8"), file_name=_file_name(chat.title), mime="text/markdown",
            key=f"{key}-export", icon=":material/download:", width="stretch", on_click="ignore",
        )
    return action


def _file_name(title: str) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "-_ " else "_" for ch in title).strip().replace(" ", "-")
    return f"{stem[:60] or 'chat'}.md"


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
