"""What both catalogs (SQLite, PostgreSQL) answer themselves: every repository method, handed to the repository that
holds it, so that one catalog object satisfies the `Catalog`, `ChatRepository`, `NoteRepository` and
`GuideRepository` protocols. A catalog sets the repositories in its constructor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workspace_app.models.answers import Answer, Chat, ChatMessage, Note
from workspace_app.models.documents import Chunk, Document, JobState, Workspace
from workspace_app.models.guides import SourceGuide, SuggestedQuestion
from workspace_app.storage.base import (
    ChatRepository,
    ChunkRepository,
    DocumentRepository,
    GuideRepository,
    JobLeases,
    NoteRepository,
    WorkspaceRepository,
)


class CatalogFacade:
    """The repository methods of a catalog, each handed to its repository."""

    workspaces: WorkspaceRepository
    documents: DocumentRepository
    chunks: ChunkRepository
    leases: JobLeases
    chats: ChatRepository
    notes: NoteRepository
    guides: GuideRepository

    # Workspaces

    def create_workspace(self, name: str) -> Workspace:
        """Create a workspace with a unique name."""
        return self.workspaces.create_workspace(name)

    def find_workspace(self, name_or_id: str) -> Workspace | None:
        """The workspace with this id or name, if any."""
        return self.workspaces.find_workspace(name_or_id)

    def list_workspaces(self) -> list[Workspace]:
        """All workspaces, oldest first."""
        return self.workspaces.list_workspaces()

    def rename_workspace(self, workspace_id: str, new_name: str) -> Workspace:
        """Give a workspace a new unique name."""
        return self.workspaces.rename_workspace(workspace_id, new_name)

    def delete_workspace(self, workspace_id: str) -> None:
        """Delete a workspace with its documents, chunks and keyword index rows."""
        self.workspaces.delete_workspace(workspace_id)

    # Documents

    def add_document(self, document: Document) -> Document:
        """Insert a document row (unique per workspace and content)."""
        return self.documents.add_document(document)

    def find_document(self, workspace_id: str, name_id_or_sha: str) -> Document | None:
        """The document with this id, sha256 or name in the workspace."""
        return self.documents.find_document(workspace_id, name_id_or_sha)

    def get_document(self, document_id: str) -> Document | None:
        """The document with this id in any workspace, if any."""
        return self.documents.get_document(document_id)

    def list_documents(self, workspace_id: str) -> list[Document]:
        """The workspace's documents in the order they were added."""
        return self.documents.list_documents(workspace_id)

    def update_document(self, document_id: str, **fields: object) -> None:
        """Change some columns of a document row."""
        self.documents.update_document(document_id, **fields)

    def delete_document(self, document_id: str) -> None:
        """Delete a document with its chunks and keyword index rows."""
        self.documents.delete_document(document_id)

    def count_file_references(self, sha256: str) -> int:
        """How many documents (in any workspace) use this file."""
        return self.documents.count_file_references(sha256)

    # Chunks, the keyword index and abbreviations

    def replace_chunks(
        self, document_id: str, workspace_id: str, chunks: Sequence[Chunk], keyword_texts: Sequence[tuple[str, str]]
    ) -> None:
        """Swap a document's chunks and keyword rows (section terms, body terms per chunk) in one transaction."""
        self.chunks.replace_chunks(document_id, workspace_id, chunks, keyword_texts)

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are left out)."""
        return self.chunks.get_chunks(chunk_ids)

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(kind, text) of chunks by id, without their boxes (missing ids are left out)."""
        return self.chunks.chunk_texts(chunk_ids)

    def document_chunk_ids(self, document_id: str) -> list[str]:
        """Ids of a document's chunks in order."""
        return self.chunks.document_chunk_ids(document_id)

    def keyword_search(
        self, workspace_id: str, terms: Sequence[str], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Chunk ids ranked by BM25 over any of the terms (best first), with their BM25 scores."""
        return self.chunks.keyword_search(workspace_id, terms, limit, document_ids)

    def replace_abbreviations(self, document_id: str, workspace_id: str, pairs: Mapping[str, str]) -> None:
        """Swap the abbreviations defined in a document for new ones."""
        self.chunks.replace_abbreviations(document_id, workspace_id, pairs)

    def workspace_abbreviations(self, workspace_id: str) -> dict[str, str]:
        """Short form -> long form over the workspace's ready documents (the most common long form wins)."""
        return self.chunks.workspace_abbreviations(workspace_id)

    # Job leases

    def claim_document(self, document_id: str, owner: str, stale_after_s: float) -> bool:
        """Take the lease of a queued or running document unless a live lease or a cancel request stops it."""
        return self.leases.claim_document(document_id, owner, stale_after_s)

    def cancel_requested(self, document_id: str) -> bool:
        """Whether the user asked the document's job to stop."""
        return self.leases.cancel_requested(document_id)

    def renew_lease(self, document_id: str, owner: str) -> str:
        """Refresh the heartbeat: 'ok', 'cancel' or 'lost'."""
        return self.leases.renew_lease(document_id, owner)

    def release_lease(self, document_id: str, owner: str, **fields: object) -> bool:
        """Give the lease up (setting some state columns at the same time); False when it was not ours."""
        return self.leases.release_lease(document_id, owner, **fields)

    def request_cancel(self, document_id: str) -> str:
        """Cancel a queued document at once, or ask its worker to stop; returns the resulting status."""
        return self.leases.request_cancel(document_id)

    def requeue_document(self, document_id: str, statuses: Sequence[str]) -> bool:
        """Put a document with one of these statuses back in the queued state."""
        return self.leases.requeue_document(document_id, statuses)

    def list_jobs(self) -> list[JobState]:
        """Every queued or running document in the catalog, with its lease."""
        return self.leases.list_jobs()

    # Chats and notes

    def create_chat(self, workspace_id: str, title: str) -> Chat:
        """Start an empty chat."""
        return self.chats.create_chat(workspace_id, title)

    def list_chats(self, workspace_id: str) -> list[Chat]:
        """The workspace's chats, most recently used first."""
        return self.chats.list_chats(workspace_id)

    def get_chat(self, chat_id: str) -> Chat | None:
        """A chat by id."""
        return self.chats.get_chat(chat_id)

    def rename_chat(self, chat_id: str, title: str) -> None:
        """Give a chat a new title."""
        self.chats.rename_chat(chat_id, title)

    def delete_chat(self, chat_id: str) -> None:
        """Delete a chat and its messages."""
        self.chats.delete_chat(chat_id)

    def add_message(self, chat_id: str, question: str, answer: Answer) -> ChatMessage:
        """Append an exchange to a chat."""
        return self.chats.add_message(chat_id, question, answer)

    def list_messages(self, chat_id: str) -> list[ChatMessage]:
        """A chat's exchanges in order."""
        return self.chats.list_messages(chat_id)

    def add_note(
        self, workspace_id: str, title: str, answer: Answer | None, body: str = "", message_id: str | None = None
    ) -> Note:
        """Add a note (an answer saved from `message_id` once only)."""
        return self.notes.add_note(workspace_id, title, answer, body, message_id)

    def update_note(self, note_id: str, title: str, body: str) -> None:
        """Give a note a new title and body."""
        self.notes.update_note(note_id, title, body)

    def list_notes(self, workspace_id: str) -> list[Note]:
        """The workspace's notes, newest first."""
        return self.notes.list_notes(workspace_id)

    def delete_note(self, note_id: str) -> None:
        """Delete a note."""
        self.notes.delete_note(note_id)

    # Source guides and suggested questions

    def save_guide(self, workspace_id: str, guide: SourceGuide, version: str) -> None:
        """Store (or replace) a document's guide."""
        self.guides.save_guide(workspace_id, guide, version)

    def get_guides(self, document_ids: Sequence[str], version: str) -> dict[str, SourceGuide]:
        """The stored guides of these documents made by `version`."""
        return self.guides.get_guides(document_ids, version)

    def save_document_suggestions(self, document_id: str, check_key: str, questions: Sequence[SuggestedQuestion]) -> None:
        """Store a document's checked suggestions under the key of what checked them."""
        self.guides.save_document_suggestions(document_id, check_key, questions)

    def get_document_suggestions(self, check_keys: Mapping[str, str]) -> dict[str, list[SuggestedQuestion]]:
        """The stored suggestions of these documents made under their keys."""
        return self.guides.get_document_suggestions(check_keys)
