"""Chats, their messages and saved notes in the PostgreSQL catalog, as storage/sqlite/chats.py keeps them.

Answers are stored as JSON text records (`Answer.to_record`), so a reopened chat shows the same citations and
highlights without asking again. Rows belong to a workspace and go with it (foreign keys cascade).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from workspace_app.errors import ChatNotFoundError
from workspace_app.models.answers import Answer, Chat, ChatMessage, Note
from workspace_app.storage.postgres.database import PostgresDatabase


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class PostgresChats:
    """Chats of a workspace and their question/answer exchanges."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def create_chat(self, workspace_id: str, title: str) -> Chat:
        """Start an empty chat."""
        now = _now()
        chat = Chat(uuid.uuid4().hex[:12], workspace_id, title, now, now)
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO chats (id, workspace_id, title, created_at, updated_at) VALUES (%s, %s, %s, %s, %s)",
                (chat.id, workspace_id, title, now, now),
            )
        return chat

    def list_chats(self, workspace_id: str) -> list[Chat]:
        """The workspace's chats, most recently used first."""
        rows = self._db.query(
            "SELECT * FROM chats WHERE workspace_id = %s ORDER BY updated_at DESC, created_at DESC", (workspace_id,)
        )
        return [_chat(row) for row in rows]

    def get_chat(self, chat_id: str) -> Chat | None:
        """A chat by id."""
        rows = self._db.query("SELECT * FROM chats WHERE id = %s", (chat_id,))
        return _chat(rows[0]) if rows else None

    def rename_chat(self, chat_id: str, title: str) -> None:
        """Give a chat a new title."""
        with self._db.transaction() as db:
            db.execute("UPDATE chats SET title = %s WHERE id = %s", (title, chat_id))

    def delete_chat(self, chat_id: str) -> None:
        """Delete a chat and its messages."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM chats WHERE id = %s", (chat_id,))

    def add_message(self, chat_id: str, question: str, answer: Answer) -> ChatMessage:
        """Append an exchange to a chat (the chat's row is locked first, so two appends get two positions)."""
        now = _now()
        message_id = uuid.uuid4().hex[:12]
        with self._db.transaction() as db:
            cursor = db.execute("UPDATE chats SET updated_at = %s WHERE id = %s", (now, chat_id))
            if cursor.rowcount == 0:
                raise ChatNotFoundError("This chat no longer exists. Start a new chat.")
            row = db.execute(
                "SELECT COALESCE(MAX(position), 0) + 1 AS position FROM chat_messages WHERE chat_id = %s", (chat_id,)
            ).fetchone()
            position = int(row["position"]) if row else 1
            db.execute(
                "INSERT INTO chat_messages (id, chat_id, position, question, answer, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (message_id, chat_id, position, question, json.dumps(answer.to_record(), ensure_ascii=False), now),
            )
        return ChatMessage(message_id, chat_id, position, question, answer, now)

    def list_messages(self, chat_id: str) -> list[ChatMessage]:
        """A chat's exchanges in order."""
        rows = self._db.query("SELECT * FROM chat_messages WHERE chat_id = %s ORDER BY position", (chat_id,))
        return [
            ChatMessage(
                row["id"], row["chat_id"], row["position"], row["question"],
                Answer.from_record(json.loads(row["answer"])), row["created_at"],
            )
            for row in rows
        ]


class PostgresNotes:
    """A workspace's notes: answers saved from chats (at most once per chat message) and notes of one's own."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def add_note(
        self, workspace_id: str, title: str, answer: Answer | None, body: str = "", message_id: str | None = None
    ) -> Note:
        """Add a note; an answer already saved from `message_id` is returned as it is, not saved again."""
        now = _now()
        note = Note(uuid.uuid4().hex[:12], workspace_id, title, answer, now, body, message_id, now)
        record = json.dumps(answer.to_record(), ensure_ascii=False) if answer is not None else None
        with self._db.transaction() as db:
            cursor = db.execute(
                "INSERT INTO notes (id, workspace_id, title, answer, body, message_id, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (workspace_id, message_id) WHERE message_id IS NOT NULL DO NOTHING",
                (note.id, workspace_id, title, record, body, message_id, now, now),
            )
            inserted = cursor.rowcount == 1
        if inserted:
            return note
        rows = self._db.query(
            "SELECT * FROM notes WHERE workspace_id = %s AND message_id = %s", (workspace_id, message_id)
        )
        return _note(rows[0])

    def list_notes(self, workspace_id: str) -> list[Note]:
        """The workspace's notes, newest first."""
        rows = self._db.query("SELECT * FROM notes WHERE workspace_id = %s ORDER BY created_at DESC", (workspace_id,))
        return [_note(row) for row in rows]

    def update_note(self, note_id: str, title: str, body: str) -> None:
        """Give a note a new title and body."""
        with self._db.transaction() as db:
            db.execute(
                "UPDATE notes SET title = %s, body = %s, updated_at = %s WHERE id = %s", (title, body, _now(), note_id)
            )

    def delete_note(self, note_id: str) -> None:
        """Delete a note."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM notes WHERE id = %s", (note_id,))


def _note(row: dict[str, Any]) -> Note:
    answer = Answer.from_record(json.loads(row["answer"])) if row["answer"] else None
    return Note(
        row["id"], row["workspace_id"], row["title"], answer, row["created_at"], row["body"], row["message_id"],
        row["updated_at"],
    )


def _chat(row: dict[str, Any]) -> Chat:
    return Chat(row["id"], row["workspace_id"], row["title"], row["created_at"], row["updated_at"])
