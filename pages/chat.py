"""Chat page: ask the current workspace's sources; every claim cites [n]; a click opens the PDF at the passage.

Chats are kept per workspace (new, rename, delete, export to Markdown); the open chat is in the URL
(`?workspace=<id>&chat=<id>`) so a reload or a bookmark comes back to it. The citation opened in the side panel is
`st.session_state["cited"]` = (message id, citation number), and `?cite=<message id>:<n>` in the URL.
"""

from __future__ import annotations

import logging

import streamlit as st

from components.account import current_user, may, record, require, role_caption
from components.application import current_app
from components.chats import (
    PENDING,
    ChatAction,
    ask_in_chat,
    render_chat_picker,
    render_patient_choice,
    render_query_mode,
    render_save_to_notes,
    render_scope,
)
from components.citations import AnswerAction, escape_answer, figure_citation, removed_documents, render_answer
from components.feedback import GENERIC_ERROR, flash, report_errors, show_flash
from components.guide import render_chat_greeting
from components.source_viewer import render_citation_viewer, sticky_viewer_style
from components.text import escape_markdown
from components.workspace_gate import (
    forget_citation,
    remember_citation,
    remembered_citation,
    render_workspace_gate,
    set_url_param,
)
from workspace_app.app import MODES, Action, App, ChatService, NoteService
from workspace_app.errors import ChatNotFoundError, WorkspaceError
from workspace_app.models.answers import Answer, Chat, ChatMessage, Citation
from workspace_app.models.documents import Workspace

log = logging.getLogger("workspace_app.ui")

CHAT = "chat"
CHAT_PARAM = "chat"
CITED = "cited"
CITE_PARAM = "cite"
INPUT_KEY = "chat-input"
VIEWER_KEY = "source-viewer"
MODE_KEY = "chat-mode"
PATIENT_KEY = "chat-patient"
DEFAULT_MODE = "hybrid"
VIEWER_ANSWERS = "chat-viewer-answers"  # a viewer's (workspace id, question, answer) of this session


def render_page(app: App) -> None:
    """Header, chat picker in the sidebar, the conversation, the PDF panel and the question box."""
    st.title("Chat")
    workspace = render_workspace_gate(app.workspaces.get, purpose="chat answers come from its sources")
    if workspace is None:
        return
    show_flash()
    chats = app.chats
    listed = chats.list_chats(workspace.id)
    current = _current_chat(listed)
    with st.sidebar:
        st.subheader("Chats")
        export = chats.export_chat(workspace.id, current.id) if current else None
        editable = may(app, workspace.id, Action.EDIT)  # a viewer reads the chats; nothing that writes one is drawn
        action = render_chat_picker(listed, current, export, key="chats", editable=editable)
        documents = app.documents.list(workspace.id)
        render_scope(documents)
        render_patient_choice(_patient_ids(app), key=PATIENT_KEY)
        render_query_mode(MODES, DEFAULT_MODE, key=MODE_KEY)
        st.caption(f"Answers by the {'language model' if app.answers.answerer_name == 'llm' else 'offline extractive'} answerer.")
        if role_caption(app, workspace.id):
            st.caption(role_caption(app, workspace.id))
    if action:
        apply_chat_action(chats, workspace, action)
    messages = chats.chat_messages(workspace.id, current.id) if current else []
    # The question box first: it can be typed in while the greeting checks its suggested questions (up to 16
    # answers on a new workspace), and a question typed skips the greeting.
    typed = st.chat_input("Ask a question about your sources", key=INPUT_KEY, max_chars=2000)
    talk, panel = st.columns([1, 1], gap="large")
    picked = None
    with talk:
        if not messages and not typed and not pending_questions(workspace):
            st.caption(f"Ask a question about the sources of **{escape_markdown(workspace.name)}**.")
            picked = _render_greeting(app, workspace)
        saved = app.notes.saved_messages(workspace.id) if messages else {}
        for message in messages:
            _render_exchange(app.notes, workspace, message, message.id in saved, {d.id for d in documents},
                             _thumbnails(app, workspace, message.answer), can_save=editable)
        _render_session_answers(workspace)
    queue_question(workspace, typed or picked)
    if pending_questions(workspace):
        with talk:
            answer_pending(app, workspace, current)
    with panel:
        sticky_viewer_style(VIEWER_KEY)
        citation, marks = _cited(messages, {d.id: d.name for d in documents})
        render_citation_viewer(app, workspace.id, citation, marks, key=VIEWER_KEY)


def _render_greeting(app: App, workspace: Workspace) -> str | None:
    """The empty chat's source guides and suggested questions; the question clicked, if any. Questions that
    cannot be checked now (a language model that does not answer) are left out, not shown as an error."""
    guides, questions = [], []
    with report_errors(), st.spinner("Reading your sources…"):
        names = {d.id: d.name for d in app.documents.list(workspace.id)}
        found = app.guides.guides(workspace.id, app.documents.included_ids(workspace.id))
        guides = [(names[i], guide) for i, guide in found.items()]
        try:
            questions = app.suggestions.suggest(workspace.id, selected_mode())
        except WorkspaceError as exc:
            log.warning("no suggested questions for %s: %s", workspace.id, exc.user_message)
    return render_chat_greeting(guides, questions, key="greeting")


def _render_exchange(
    notes: NoteService, workspace: Workspace, message: ChatMessage, saved: bool, present: set[str],
    thumbnails: dict[str, bytes], *, can_save: bool,
) -> None:
    """A question and its answer (citations of sources no longer in the workspace, `present`, marked removed; its
    figures with their `thumbnails`), and 'Save to notes' when the role may (`can_save`)."""
    with st.chat_message("user"):
        st.markdown(escape_markdown(message.question))
    with st.chat_message("assistant"):
        removed = removed_documents(message.answer.citations, present)
        action = render_answer(message.answer, key=f"answer-{message.id}", can_save=False, removed=removed,
                               thumbnails=thumbnails)
        if can_save and not message.answer.refused and render_save_to_notes(saved, key=f"answer-{message.id}-save"):
            action = AnswerAction("save")
    if action:
        apply_answer_action(notes, workspace, message, action)


def _render_session_answers(workspace: Workspace) -> None:
    """A viewer's answers of this session (not kept in a chat: a viewer does not write to the workspace)."""
    for i, (owner, question, answer) in enumerate(st.session_state.get(VIEWER_ANSWERS, [])):
        if owner != workspace.id:
            continue
        with st.chat_message("user"):
            st.markdown(escape_markdown(question))
        with st.chat_message("assistant"):
            render_answer(answer, key=f"viewer-answer-{i}", can_save=False, removed=set(), thumbnails={})


def apply_answer_action(notes: NoteService, workspace: Workspace, message: ChatMessage, action: AnswerAction) -> None:
    """Open a citation in the panel, or save the answer to notes (once: it is kept by its message id)."""
    if action.kind in ("cite", "figure") and action.n is not None:
        # No rerun: the viewer is drawn after the messages in this same run (a rerun would double the wait). A
        # figure is kept as a negative number (-1 the first): citations count from 1.
        remember_citation(CITED, CITE_PARAM, message.id, action.n if action.kind == "cite" else -(action.n + 1))
        return
    with report_errors():
        require(current_app(), workspace.id, Action.EDIT)
        notes.save_note(workspace.id, message.answer, message_id=message.id)
        flash("Saved to notes.")
        st.rerun()


def apply_chat_action(chats: ChatService, workspace: Workspace, action: ChatAction) -> None:
    """Start, open, rename or delete a chat, then rerun."""
    with report_errors():
        if action.kind != "open":
            require(current_app(), workspace.id, Action.EDIT)
        if action.kind == "new":
            st.session_state[CHAT] = chats.create_chat(workspace.id).id
            set_url_param(CHAT_PARAM, st.session_state[CHAT])
        elif action.kind == "open":
            st.session_state[CHAT] = action.chat_id
            set_url_param(CHAT_PARAM, action.chat_id)
        elif action.kind == "rename":
            flash(f"Renamed to {chats.rename_chat(workspace.id, action.chat_id or '', action.title or '').title}.")
        else:
            _delete_chat(chats, workspace, action.chat_id or "")
        forget_citation(CITED, CITE_PARAM)
        st.rerun()


def _delete_chat(chats: ChatService, workspace: Workspace, chat_id: str) -> None:
    """Delete the chat the button was drawn for; one already gone (a repeated click) counts as deleted."""
    try:
        chats.delete_chat(workspace.id, chat_id)
    except ChatNotFoundError:
        pass
    if st.session_state.get(CHAT) == chat_id:
        st.session_state.pop(CHAT, None)
    set_url_param(CHAT_PARAM, None)
    flash("Chat deleted.")


def queue_question(workspace: Workspace, question: str | None) -> None:
    """Keep a question until its answer is in the chat: a question typed while another answer streams reruns the
    page and stops that answer, which is then given again before the new one (not lost)."""
    if question:
        ask_in_chat(workspace.id, question)


def pending_questions(workspace: Workspace) -> list[str]:
    """The workspace's questions asked but not yet answered in a chat, oldest first."""
    return [question for owner, question in st.session_state.get(PENDING, []) if owner == workspace.id]


def answer_pending(app: App, workspace: Workspace, chat: Chat | None) -> None:
    """Answer the pending questions in order, each kept in the chat, then rerun to show them as the chat's own."""
    for question in pending_questions(workspace):
        chat = ask(app, workspace, chat, question)
        if chat is None:
            return
    st.rerun()


def ask(app: App, workspace: Workspace, chat: Chat | None, question: str) -> Chat | None:
    """Show the question, stream the answer (about the chosen patient, if any), keep it in the chat; the chat it
    is in, or None when it failed (the error is shown; the chat stays usable)."""
    chats = app.chats
    with st.chat_message("user"):
        st.markdown(escape_markdown(question))
    with st.chat_message("assistant"):
        patient = st.session_state.get(PATIENT_KEY)
        if patient:
            answer = _patient_answer(app, workspace, patient, question)
        else:
            answer = _answer(app, workspace, chat, question)
    if answer is None:
        _forget_pending(workspace, question)  # failed, with its message shown: not asked again
        return None
    record(app, "asked", workspace.id, chat.id if chat else "", question)
    if not may(app, workspace.id, Action.EDIT):  # a viewer's answers are shown in this session, not kept in a chat
        _forget_pending(workspace, question)
        st.session_state[VIEWER_ANSWERS] = [*st.session_state.get(VIEWER_ANSWERS, []), (workspace.id, question, answer)]
        st.rerun()  # shown by the next run (any other pending question is answered there)
    try:
        chat = chat or chats.create_chat(workspace.id)
        chats.record_answer(workspace.id, chat.id, answer)
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
        return None
    finally:
        _forget_pending(workspace, question)  # before anything Streamlit draws (a rerun could stop us there)
    st.session_state[CHAT] = chat.id
    set_url_param(CHAT_PARAM, chat.id)
    return chat


def _forget_pending(workspace: Workspace, question: str) -> None:
    queue = list(st.session_state.get(PENDING, []))
    if (workspace.id, question) in queue:
        queue.remove((workspace.id, question))
    st.session_state[PENDING] = queue


def _answer(app: App, workspace: Workspace, chat: Chat | None, question: str) -> Answer | None:
    history = app.chats.chat_history(workspace.id, chat.id) if chat else []
    placeholder = st.empty()
    written = ""
    try:
        with st.spinner("Searching the sources…"):
            for event in app.answers.ask_stream(workspace.id, question, history, mode=selected_mode()):
                if isinstance(event, Answer):
                    return event
                if isinstance(event, str):  # a language model's tokens (answer lines are not asked for)
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


def _patient_answer(app: App, workspace: Workspace, patient: str, question: str) -> Answer | None:
    """An answer about one patient across levels: their records, the guidelines, the standard definitions."""
    try:
        with st.spinner(f"Reading patient {patient}'s records and the sources…"):
            return app.patient_answers.ask(workspace.id, patient, question, mode=selected_mode())
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
    except Exception:
        log.exception("answering about a patient failed")
        st.error(GENERIC_ERROR, icon=":material/error:")
    return None


def _patient_ids(app: App) -> list[str]:
    """The imported patients' ids (none when the records cannot be read: the chat still works; none for a user who
    is not an admin, with accounts on: patient records are not shared per workspace yet)."""
    user = current_user()
    if user is not None and not user.is_admin:
        return []
    try:
        return app.patients.ids()
    except WorkspaceError as exc:
        log.warning("patients could not be listed: %s", exc.user_message)
        return []


def selected_mode() -> str:
    """The query mode picked under 'Advanced' in the sidebar (the default when none is)."""
    mode = st.session_state.get(MODE_KEY)
    return mode if mode in MODES else DEFAULT_MODE


def _thumbnails(app: App, workspace: Workspace, answer: Answer) -> dict[str, bytes]:
    """The pictures of an answer's figures whose source is still there, by figure id."""
    found: dict[str, bytes] = {}
    figures = app.figures
    if figures is None:
        return found
    for figure in answer.figures:
        try:
            found[figure.id] = figures.thumbnail(workspace.id, figure.document_id, figure.id)
        except WorkspaceError:
            continue  # the source or its figure is gone: the answer shows the rest
    return found


def _cited(messages: list[ChatMessage], names: dict[str, str]) -> tuple[Citation | None, list[Citation]]:
    """The citation open in the viewer (after a reload: the one the URL names), or a figure of an answer (its box
    outlined), and all citations of its answer (marked on the pages too). One the open chat does not hold is
    forgotten."""
    wanted = remembered_citation(CITED, CITE_PARAM)
    if not wanted:
        return None, []
    message_id, n = wanted
    for message in messages:
        if message.id == message_id and n < 0 and -n <= len(message.answer.figures):
            figure = message.answer.figures[-n - 1]
            return figure_citation(figure, names.get(figure.document_id, "")), message.answer.citations
        if message.id == message_id:
            return next((c for c in message.answer.citations if c.n == n), None), message.answer.citations
    forget_citation(CITED, CITE_PARAM)
    return None, []


def _current_chat(chats: list[Chat]) -> Chat | None:
    """The chat the session is in, else the one the URL names (a reload, a bookmark), else the latest; kept in both."""
    ids = {chat.id for chat in chats}
    wanted = st.session_state.get(CHAT)
    if wanted not in ids:
        wanted = st.query_params.get(CHAT_PARAM)
    found = next((chat for chat in chats if chat.id == wanted), chats[0] if chats else None)
    st.session_state[CHAT] = found.id if found else None
    set_url_param(CHAT_PARAM, found.id if found else None)
    return found


app = current_app()
render_page(app)
