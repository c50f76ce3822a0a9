"""Chats (a workspace's questions with their answers, in order) and notes (answers saved, or one's own text).

The answer service answers; these keep what was asked and saved. Both read the workspace through the scope catalog
(a name or an id) and give clear errors for a chat or note of another workspace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from workspace_app.answer.export import chat_markdown, note_markdown, notes_markdown
from workspace_app.errors import ChatNotFoundError, DocumentNotFoundError, NoteNotFoundError, WorkspaceError
from workspace_app.models.answers import Answer, Chat, ChatMessage, Citation, Note, SourceUses, Turn
from workspace_app.models.documents import Rect, Workspace
from workspace_app.retrieval.scope import ScopeCatalog, find_workspace
from workspace_app.storage.base import ChatRepository, NoteRepository
from workspace_app.text.language import detect_language
from workspace_app.text.names import refuse_control_characters

NEW_CHAT = "New chat"
CHAT_TITLE_CHARS = 80
NOTE_TITLE_CHARS = 200
MAX_NOTE_CHARS = 20_000


class ChatService:
    """A workspace's chats and their messages."""

    def __init__(self, catalog: ScopeCatalog, chats: ChatRepository, notes: NoteRepository) -> None:
        """`notes`: read to tell which of the workspace's notes cite a source (`source_uses`)."""
        self.catalog = catalog
        self.chats = chats
        self.notes = notes

    def create_chat(self, workspace: str, title: str = NEW_CHAT) -> Chat:
        """Start a chat in a workspace."""
        return self.chats.create_chat(self._workspace(workspace).id, _chat_name(title))

    def list_chats(self, workspace: str) -> list[Chat]:
        """The workspace's chats, most recent first."""
        return self.chats.list_chats(self._workspace(workspace).id)

    def get_chat(self, workspace: str, chat_id: str) -> Chat:
        """A chat of this workspace, or a clear error."""
        chat = self.chats.get_chat(chat_id)
        if chat is None or chat.workspace_id != self._workspace(workspace).id:
            raise ChatNotFoundError("This chat no longer exists. Pick another chat or start a new one.")
        return chat

    def rename_chat(self, workspace: str, chat_id: str, title: str) -> Chat:
        """Give a chat a new title (1-80 visible characters)."""
        self.get_chat(workspace, chat_id)
        self.chats.rename_chat(chat_id, _chat_name(title))
        return self.get_chat(workspace, chat_id)

    def delete_chat(self, workspace: str, chat_id: str) -> None:
        """Delete a chat with its messages."""
        self.chats.delete_chat(self.get_chat(workspace, chat_id).id)

    def chat_messages(self, workspace: str, chat_id: str) -> list[ChatMessage]:
        """A chat's exchanges in order."""
        return self.chats.list_messages(self.get_chat(workspace, chat_id).id)

    def chat_history(self, workspace: str, chat_id: str) -> list[Turn]:
        """The chat's turns in order (the answer service reads a follow-up question with the last few)."""
        return [Turn(m.question, m.answer.text) for m in self.chat_messages(workspace, chat_id)]

    def record_answer(self, workspace: str, chat_id: str, answer: Answer) -> ChatMessage:
        """Keep an answer in its chat; the first question names a chat still called 'New chat'."""
        chat = self.get_chat(workspace, chat_id)
        message = self.chats.add_message(chat.id, answer.question, answer)
        if chat.title == NEW_CHAT and message.position == 1:
            self.chats.rename_chat(chat.id, clean_title(answer.question, limit=60))
        return message

    def export_chat(self, workspace: str, chat_id: str) -> str:
        """The chat as Markdown, each answer followed by its numbered citation list."""
        chat = self.get_chat(workspace, chat_id)
        return chat_markdown(chat, self.chats.list_messages(chat.id))

    def source_uses(self, workspace: str, document_id: str) -> SourceUses:
        """How many chats and notes of the workspace cite the document (removal warns with these)."""
        ws = self._workspace(workspace)

        def cites(answer: Answer | None) -> bool:
            return answer is not None and any(c.document_id == document_id for c in answer.citations)

        chats = sum(
            any(cites(m.answer) for m in self.chats.list_messages(chat.id)) for chat in self.chats.list_chats(ws.id)
        )
        return SourceUses(chats=chats, notes=sum(cites(note.answer) for note in self.notes.list_notes(ws.id)))

    def _workspace(self, workspace: str) -> Workspace:
        return find_workspace(self.catalog, workspace)


class NoteService:
    """A workspace's notes: saved answers and notes of one's own."""

    def __init__(self, catalog: ScopeCatalog, notes: NoteRepository) -> None:
        self.catalog = catalog
        self.notes = notes

    def save_note(
        self, workspace: str, answer: Answer, title: str | None = None, message_id: str | None = None, body: str = ""
    ) -> Note:
        """Save an answer to the workspace's notes, titled by the question it answered (a follow-up's standalone
        form), with Markdown `body` above it (a studio output's text); saving the answer of one chat message again
        returns the note already saved."""
        ws = self._workspace(workspace)
        heading = title or answer.standalone_question or answer.question
        return self.notes.add_note(ws.id, _note_title(heading), answer, _clean_body(body) if body else "", message_id=message_id)

    def save_passage(self, workspace: str, document_id: str, page: int, quote: str, rects: Sequence[Rect] = ()) -> Note:
        """Save a passage the reader selected in the viewer as a note citing it: the quoted text as the note's
        answer with one citation (the document, the page and the selection's boxes), as a saved answer's
        citations are kept, so its chip opens the page with the passage in red."""
        ws = self._workspace(workspace)
        document = next((d for d in self.catalog.list_documents(ws.id) if d.id == document_id), None)
        if document is None:
            raise DocumentNotFoundError("That source is no longer in the workspace.")
        text = re.sub(r"\s+", " ", quote).strip()
        if not text:
            raise WorkspaceError("Select some text of the page first, then save it.")
        if len(text) > MAX_NOTE_CHARS:
            raise WorkspaceError(f"A note is limited to {MAX_NOTE_CHARS:,} characters; select less and save again.")
        if not 1 <= page <= max(document.pages, 1):
            raise WorkspaceError(f"Page {page} is not a page of {document.name}.")
        on_page = tuple(r for r in rects if r.page == page)
        citation = Citation(n=1, chunk_id="", document=document.name, document_id=document.id, page_start=page,
                            page_end=page, section="", quote=text, rects=on_page, chunk_rects=on_page, score=1.0)
        answer = Answer(question=f"{document.name}, p. {page}", text=f"“{text}” [1]", citations=[citation],
                        grounded=True, refused=False, confidence=1.0, language=detect_language(text), answerer="passage")
        return self.notes.add_note(ws.id, _note_title(f"Passage from {document.name}, p. {page}"), answer, "")

    def add_note(self, workspace: str, title: str, body: str) -> Note:
        """A note of one's own: a title and Markdown text."""
        ws = self._workspace(workspace)
        return self.notes.add_note(ws.id, _typed_note_title(title), None, _clean_body(body))

    def update_note(self, workspace: str, note_id: str, title: str, body: str) -> Note:
        """Give a note a new title and Markdown text."""
        self.get_note(workspace, note_id)
        self.notes.update_note(note_id, _typed_note_title(title), _clean_body(body))
        return self.get_note(workspace, note_id)

    def list_notes(self, workspace: str) -> list[Note]:
        """The workspace's notes, newest first."""
        return self.notes.list_notes(self._workspace(workspace).id)

    def saved_messages(self, workspace: str) -> dict[str, str]:
        """Chat message id -> id of the note it was saved to, for the workspace's saved answers."""
        return {note.message_id: note.id for note in self.list_notes(workspace) if note.message_id}

    def delete_note(self, workspace: str, note_id: str) -> None:
        """Delete a note of the workspace."""
        self.notes.delete_note(self.get_note(workspace, note_id).id)

    def export_notes(self, workspace: str) -> str:
        """All notes of the workspace as one Markdown document."""
        ws = self._workspace(workspace)
        return notes_markdown(ws.name, self.notes.list_notes(ws.id))

    def note_markdown(self, workspace: str, note_id: str) -> str:
        """One note as a Markdown file: its title, its own text and its saved answer with the citation list (what
        the workspace reads back when the note is added as a source)."""
        return note_markdown(self.get_note(workspace, note_id))

    def get_note(self, workspace: str, note_id: str) -> Note:
        """A note of this workspace, or a clear error."""
        found = next((n for n in self.notes.list_notes(self._workspace(workspace).id) if n.id == note_id), None)
        if found is None:
            raise NoteNotFoundError("This note no longer exists.")
        return found

    def _workspace(self, workspace: str) -> Workspace:
        return find_workspace(self.catalog, workspace)


def clean_title(title: str, limit: int = CHAT_TITLE_CHARS, what: str = "A chat name") -> str:
    """A title of printable characters, its spaces collapsed, cut at a word's end to `limit` characters."""
    cleaned = re.sub(r"\s+", " ", "".join(ch for ch in title if ch.isprintable())).strip()
    if not cleaned:
        raise WorkspaceError(f"{what} needs at least one visible character.")
    if len(cleaned) <= limit:
        return cleaned
    cut = cleaned[: limit - 1]
    # At a word's end where there is one in the second half (a chat named "… the class of evid…" reads badly).
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut).rstrip(" ,;:") + "…"


def _chat_name(title: str) -> str:
    """A chat name the user typed: refused with control characters (one made from a question is cleaned instead)."""
    return clean_title(refuse_control_characters(title, "A chat name"))


def _typed_note_title(title: str) -> str:
    """A note title the user typed: refused with control characters (one made from a question is cleaned instead)."""
    return _note_title(refuse_control_characters(title, "A note's title"))


def _note_title(title: str) -> str:
    return clean_title(title, NOTE_TITLE_CHARS, "A note's title")


def _clean_body(body: str) -> str:
    if len(body) > MAX_NOTE_CHARS:
        raise WorkspaceError(f"A note is limited to {MAX_NOTE_CHARS:,} characters; shorten it and save again.")
    return body.strip()
