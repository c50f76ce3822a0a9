"""Errors a user can act on. Each carries a plain `user_message`, an HTTP-like `status` and `retryable`.

    WorkspaceError
    ├── WorkspaceNotFoundError        (404)
    ├── WorkspaceExistsError          (409)
    ├── DocumentNotFoundError         (404)
    ├── PageNotFoundError             (404)
    ├── AmbiguousDocumentError        (409)
    ├── ChatNotFoundError             (404)
    ├── NoteNotFoundError             (404)
    ├── UnsupportedFileError          (415)
    │   ├── EmptyFileError
    │   ├── CorruptPdfError
    │   ├── EncryptedPdfError
    │   └── ImageOnlyPdfError
    ├── FileTooLargeError             (413)
    ├── IngestionError                (500)
    ├── StorageError                  (503, retryable)
    │   └── ObjectStoreError          (the S3-compatible store of shared files)
    ├── ModelUnavailableError         (503)
    ├── EmbeddingModelMismatchError   (409)
    ├── LlmUnavailableError           (503, retryable)
    ├── DataDirBusyError              (409)
    ├── PatientNotFoundError          (404)
    ├── EventNotFoundError            (404)
    ├── RulesFileError                (422)
    ├── ImportSourceError             (422)
    ├── ImportNotFoundError           (404)
    ├── QuestionFileError             (422)
    ├── SignInError                   (401)
    ├── PermissionDeniedError         (403)
    └── UserExistsError               (409)
"""

from __future__ import annotations


class WorkspaceError(Exception):
    """Root of every error whose message is meant for users."""

    status = 400
    retryable = False

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class WorkspaceNotFoundError(WorkspaceError):
    """The named workspace does not exist."""

    status = 404


class WorkspaceExistsError(WorkspaceError):
    """A workspace with that name already exists."""

    status = 409


class DocumentNotFoundError(WorkspaceError):
    """The named document is not in the workspace."""

    status = 404


class PageNotFoundError(WorkspaceError):
    """The document has no page with that number."""

    status = 404


class AmbiguousDocumentError(WorkspaceError):
    """A name given for a document is shared by several documents of the workspace."""

    status = 409


class ChatNotFoundError(WorkspaceError):
    """The chat does not exist (any more)."""

    status = 404


class NoteNotFoundError(WorkspaceError):
    """The note is not in the workspace (deleted, or never there)."""

    status = 404


class UnsupportedFileError(WorkspaceError):
    """The file cannot be read as a source."""

    status = 415


class EmptyFileError(UnsupportedFileError):
    """The file has no bytes."""


class CorruptPdfError(UnsupportedFileError):
    """The file claims to be a PDF but cannot be opened as one."""


class EncryptedPdfError(UnsupportedFileError):
    """The PDF needs a password."""


class ImageOnlyPdfError(UnsupportedFileError):
    """The PDF has no text layer on any page."""


class FileTooLargeError(WorkspaceError):
    """The file exceeds the configured size or page limit."""

    status = 413


class IngestionError(WorkspaceError):
    """Ingestion failed for a reason not covered above."""

    status = 500


class StorageError(WorkspaceError):
    """A storage backend failed (disk, Chroma server, database lock)."""

    status = 503
    retryable = True


class ObjectStoreError(StorageError):
    """The S3-compatible object store of shared files is unreachable, has no such bucket or refuses access."""


class ModelUnavailableError(WorkspaceError):
    """The configured embedding or rerank model cannot be loaded."""

    status = 503


class EmbeddingModelMismatchError(WorkspaceError):
    """The workspace's vectors were made by another embedding model than the configured one (never mixed)."""

    status = 409


class LlmUnavailableError(WorkspaceError):
    """The configured LLM cannot be reached or refused the request."""

    status = 503
    retryable = True


class DataDirBusyError(WorkspaceError):
    """Another process owns the data directory (a `serve`, or a process using the embedded vector store)."""

    status = 409


class PatientNotFoundError(WorkspaceError):
    """No patient with this id was imported."""

    status = 404


class EventNotFoundError(WorkspaceError):
    """No event with this id for this patient."""

    status = 404


class RulesFileError(WorkspaceError):
    """The related-event rules file is unreadable or invalid (the message names the rule and key)."""

    status = 422


class ImportSourceError(WorkspaceError):
    """What was given to import is missing, or neither a MIMIC-IV folder nor a .csv/.jsonl events file."""

    status = 422


class ImportNotFoundError(WorkspaceError):
    """No patient import with this id."""

    status = 404


class QuestionFileError(WorkspaceError):
    """An evaluation question file is unreadable or a line of it is malformed (the message names the line)."""

    status = 422


class SignInError(WorkspaceError):
    """Accounts are on and the caller is not signed in (no key, a wrong key, a wrong name or password)."""

    status = 401


class PermissionDeniedError(WorkspaceError):
    """The caller's role in the workspace (or their account) does not allow this action."""

    status = 403


class UserExistsError(WorkspaceError):
    """A user with that name already exists."""

    status = 409
