"""Chat page: ask the current workspace's sources; every claim cites [n]; a click opens the PDF at the passage.

Chats are kept per workspace (new, rename, delete, export to Markdown). The citation opened in the side
panel is `st.session_state["cited"]` = (message id, citation number).
"""

from __future__ import annotations

import logging

import streamlit as st

from components.application import current_app
from components.chats import ChatAction, render_chat_picker, render_scope
from components.citations import AnswerAction, escape_answer, render_answer
from components.feedback import GENERIC_ERROR, flash, report_errors, show_flash
from components.source_viewer import render_citation_viewer, sticky_viewer_style
from components.text import escape_markdown
from components.workspace_gate import render_workspace_gate
from workspace_app.app import MODES, AnswerService, App
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Answer, Chat, ChatMessage, Citation
from workspace_app.models.documents import Workspace

log = logging.getLogger("workspace_app.ui")

CHAT = "chat"
CITED = "cited"
INPUT_KEY = "chat-input"
VIEWER_KEY = "source-viewer"
MODE_KEY = "chat-mode"
DEFAULT_MODE = "hybrid"
MODE_HELP = (
    "naive: text search only · local: the entities your question names, their neighbours and communities · "
    "global: the community reports closest to the question · hybrid: local and global with text search"
)


def render_page(app: App, answers: AnswerService) -> None:
    """Header, chat picker in the sidebar, the conversation, the PDF panel and the question box."""
    st.title("Chat")
    workspace = render_workspace_gate(app.workspaces.get, purpose="chat answers come from its sources")
    if workspace is None:
        return
    show_flash()
    chats = answers.list_chats(workspace.id)
    current = _current_chat(chats)
    with st.sidebar:
        st.subheader("Chats")
        export = answers.export_chat(workspace.id, current.id) if current else None
        action = render_chat_picker(chats, current, export, key="chats")
        render_scope(app.documents.list(workspace.id))
        st.segmented_control("Query mode", MODES, default=DEFAULT_MODE, key=MODE_KEY, help=MODE_HELP)
        st.caption(f"Answers by the {'language model' if answers.answerer_name == 'llm' else 'offline extractive'} answerer.")
    if action:
        apply_chat_action(answers, workspace, action)
    messages = answers.chat_messages(workspace.id, current.id) if current else []
    talk, panel = st.columns([1, 1], gap="large")
    with talk:
        if not messages:
            st.caption(f"Ask a question about the sources of **{escape_markdown(workspace.name)}**.")
        for message in messages:
            _render_exchange(answers, workspace, message)
    question = st.chat_input("Ask a question about your sources", key=INPUT_KEY, max_chars=2000)
    if question:
        with talk:
            ask(answers, workspace, current, question)
    with panel:
        sticky_viewer_style(VIEWER_KEY)
        citation, marks = _cited(messages)
        render_citation_viewer(app, workspace.id, citation, marks, key=VIEWER_KEY)


def _render_exchange(answers: AnswerService, workspace: Workspace, message: ChatMessage) -> None:
    with st.chat_message("user"):
        st.markdown(escape_markdown(message.question))
    with st.chat_message("assistant"):
        action = render_answer(message.answer, key=f"answer-{message.id}")
    if action:
        apply_answer_action(answers, workspace, message, action)


def apply_answer_action(answers: AnswerService, workspace: Workspace, message: ChatMessage, action: AnswerAction) -> None:
    """Open a citation in the panel, or save the answer to notes."""
    if action.kind == "cite":
        # No rerun: the viewer is drawn after the messages in this same run (a rerun would double the wait).
        st.session_state[CITED] = (message.id, action.n)
        return
    with report_errors():
        answers.save_note(workspace.id, message.answer)
        flash("Saved to notes.")
        st.rerun()


def apply_chat_action(answers: AnswerService, workspace: Workspace, action: ChatAction) -> None:
    """Start, open, rename or delete a chat, then rerun."""
    with report_errors():
        if action.kind == "new":
            st.session_state[CHAT] = answers.create_chat(workspace.id).id
        elif action.kind == "open":
            st.session_state[CHAT] = action.chat_id
        elif action.kind == "rename":
            flash(f"Renamed to {answers.rename_chat(workspace.id, action.chat_id or '', action.title or '').title}.")
        else:
            answers.delete_chat(workspace.id, action.chat_id or "")
            st.session_state.pop(CHAT, None)
            flash("Chat deleted.")
        st.session_state.pop(CITED, None)
        st.rerun()


def ask(answers: AnswerService, workspace: Workspace, chat: Chat | None, question: str) -> None:
    """Show the question, stream the answer, keep it in the chat (a failed answer keeps the chat usable)."""
    with st.chat_message("user"):
        st.markdown(escape_markdown(question))
    with st.chat_message("assistant"):
        answer = _answer(answers, workspace, chat, question)
    if answer is None:
        return
    try:
        chat = chat or answers.create_chat(workspace.id)
        answers.record_answer(workspace.id, chat.id, answer)
        st.session_state[CHAT] = chat.id
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
        return
    st.rerun()


def _answer(answers: AnswerService, workspace: Workspace, chat: Chat | None, question: str) -> Answer | None:
    history = answers.chat_history(workspace.id, chat.id) if chat else []
    placeholder = st.empty()
    written = ""
    try:
        with st.spinner("Searching the sources…"):
            for event in answers.ask_stream(workspace.id, question, history, mode=selected_mode()):
                if isinstance(event, Answer):
                    return event
                written += event
                placeholder.markdown(escape_answer(written) + " ▌")
    except WorkspaceError as exc:
        placeholder.empty()
        st.error(exc.user_message, icon=":material/error:")
    except Exception:
        log.exception("answering failed")
        placeholder.empty()
        st.error(GENERIC_ERROR, icon=":material/error:")
    return None


def selected_mode() -> str:
    """The query mode picked in the sidebar (the default when none is selected)."""
    mode = st.session_state.get(MODE_KEY)
    return mode if mode in MODES else DEFAULT_MODE


def _cited(messages: list[ChatMessage]) -> tuple[Citation | None, list[Citation]]:
    """The citation open in the viewer and all citations of its answer (marked on the pages too)."""
    wanted = st.session_state.get(CITED)
    if not wanted:
        return None, []
    message_id, n = wanted
    for message in messages:
        if message.id == message_id:
            return next((c for c in message.answer.citations if c.n == n), None), message.answer.citations
    return None, []


def _current_chat(chats: list[Chat]) -> Chat | None:
    wanted = st.session_state.get(CHAT)
    found = next((chat for chat in chats if chat.id == wanted), None)
    if found is None and chats:
        found = chats[0]
        st.session_state[CHAT] = found.id
    return found


app = current_app()
render_page(app, app.answers)
