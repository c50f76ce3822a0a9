"""Documents of a workspace: add (run here or queue for a worker), list, cancel, retry, include, remove.

    add:  store the file (content-addressed) -> catalog row `queued` -> ingest here (`ingest`) or queue (`submit`)
    jobs: the worker runs queued documents through `Jobs.run` (documents/jobs.py)
Supported files come from the readers registry (ingest/readers); state changes go through `DocumentStates`.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from workspace_app.config import IngestSettings
from workspace_app.documents.jobs import Jobs
from workspace_app.documents.lifecycle import DocumentStates
from workspace_app.documents.pages import render_page
from workspace_app.errors import DocumentNotFoundError, FileTooLargeError, WorkspaceError
from workspace_app.ingest.pipeline import ProgressCallback
from workspace_app.ingest.readers import check_source, has_pages, media_type_for, stored_suffix, upload_suffixes
from workspace_app.jobs.leases import new_owner
from workspace_app.models.documents import FINAL_STATUSES, Document, IngestReport, PageImage
from workspace_app.retrieval.scope import find_workspace, pick_document
from workspace_app.storage.base import Catalog, FileStore, ThumbnailStore, VectorIndex
from workspace_app.text.names import refuse_control_characters

_MAX_NAME = 180
# Called with (workspace id, document id) after a document is removed (the graph drops its rows).
RemoveHook = Callable[[str, str], None]


def clean_display_name(name: str) -> str:
    """A safe display name: the last path part, NFC, no control characters, bounded length."""
    name = unicodedata.normalize("NFC", name).replace("\\", "/").split("/")[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip().strip(".") or "untitled"
    if len(name) > _MAX_NAME:
        stem, dot, suffix = name.rpartition(".")
        name = (stem[: _MAX_NAME - len(suffix) - 2] + "…" + dot + suffix) if dot else name[:_MAX_NAME]
    return name


class DocumentService:
    """The documents of workspaces and their ingestion."""

    def __init__(
        self, catalog: Catalog, vectors: VectorIndex, files: FileStore, states: DocumentStates, jobs: Jobs,
        settings: IngestSettings, on_remove: Sequence[RemoveHook] = (), thumbnails: ThumbnailStore | None = None,
    ) -> None:
        self._catalog = catalog
        self._vectors = vectors
        self._files = files
        self._thumbnails = thumbnails  # the figures' pictures, per document
        self._states = states
        self._settings = settings
        self._on_remove = list(on_remove)
        self.jobs = jobs

    # Reading

    def list(self, workspace: str) -> builtins.list[Document]:
        """Documents of a workspace with their status (a job whose holder stopped answering marked stalled)."""
        return [self.jobs.with_health(d) for d in self._catalog.list_documents(find_workspace(self._catalog, workspace).id)]

    def get(self, workspace: str, name_or_id: str) -> Document:
        """A document by id, sha256 or name, or a clear error (also for a name two documents share)."""
        ws = find_workspace(self._catalog, workspace)
        return self.jobs.with_health(pick_document(ws, self._catalog.list_documents(ws.id), name_or_id))

    def find(self, workspace: str, name_or_id: str) -> Document | None:
        """A document by id, sha256 or name, or None when it is not (or no longer) in the workspace."""
        try:
            return self.get(workspace, name_or_id)
        except DocumentNotFoundError:
            return None

    def page_image(self, workspace: str, name_or_id: str, page: int, scale: float = 2.0) -> PageImage:
        """One page of a document's PDF drawn as an image for the viewer."""
        document = self.get(workspace, name_or_id)
        if not self.has_pages(document):
            raise WorkspaceError(f"{document.name} is a text source; it has no pages to show.")
        return render_page(self._stored_file(document), page, scale)

    def file_bytes(self, workspace: str, name_or_id: str) -> bytes:
        """The stored file of a document (to open the whole PDF)."""
        return self._stored_file(self.get(workspace, name_or_id)).read_bytes()

    def _stored_file(self, document: Document) -> Path:
        path = self.document_path(document)
        if not path.is_file():
            raise WorkspaceError(f"The file of {document.name} is missing from the store. Upload it again.")
        return path

    def document_path(self, document: Document) -> Path:
        """Where the document's file is stored."""
        return self._files.path_for(document.sha256, stored_suffix(document.media_type))

    def has_pages(self, document: Document) -> bool:
        """Whether the document has pages to show (a PDF)."""
        return has_pages(document.media_type)

    def upload_suffixes(self) -> builtins.list[str]:
        """The file suffixes the upload widget accepts (from the readers registry)."""
        return upload_suffixes()

    def included_ids(self, workspace: str) -> builtins.list[str]:
        """Ids of the ready sources the user left switched on for chat."""
        return [d.id for d in self.list(workspace) if d.status == "ready" and d.included]

    # Adding

    def ingest(
        self, workspace: str, source: Path, display_name: str | None = None, on_progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Add and ingest one file in this process (waiting if a worker has it); errors become a failed report."""
        name = clean_display_name(display_name or source.name)
        try:
            document, is_new = self._record(workspace, source, name)
            if not is_new and document.status == "ready":
                return _duplicate(document, name)
            self._states.requeue(document.id, FINAL_STATUSES)
            self.jobs.run_until_settled(document.id, new_owner("cli"), on_progress)
        except WorkspaceError as exc:
            return IngestReport(None, name, "failed", 0, 0, exc.user_message)
        done = self._catalog.get_document(document.id) or document
        return IngestReport(
            done.id, done.name, done.status, done.pages, done.chunks if done.status == "ready" else 0, done.error
        )

    def submit(
        self, workspace: str, source: Path | bytes | BinaryIO, display_name: str | None = None, keep_refused: bool = True
    ) -> IngestReport:
        """Store a file (a path, or an upload's bytes or stream with its name) and queue it for a worker; returns
        at once. A file its reader would refuse (empty, not a PDF, damaged, locked) is recorded as failed, with the
        reason (the Sources page lists it), or with `keep_refused=False` removed again (the API answers with the
        reason, and the same file sent again is judged afresh); an over-size upload is refused before anything is
        written, and so is an upload whose name holds control characters."""
        if not isinstance(source, Path):
            return self._submit_upload(workspace, source, display_name or "untitled", keep_refused)
        name = clean_display_name(display_name or source.name)
        try:
            document, is_new = self._record(workspace, source, name)
        except WorkspaceError as exc:
            return IngestReport(None, name, "failed", 0, 0, exc.user_message)
        if not is_new and _already_there(document):
            return _duplicate(document, name)
        try:
            check_source(source, name, document.media_type, ocr=self._settings.ocr_engine != "none")
        except WorkspaceError as exc:  # what the worker would find: failed now, like a run that waits
            if is_new and not keep_refused:
                self._forget(document)
                return IngestReport(None, name, "failed", 0, 0, exc.user_message)
            self._states.fail(document.id, exc.user_message, exc.retryable)
            return IngestReport(document.id, document.name, "failed", 0, 0, exc.user_message)
        if is_new or self._states.requeue(document.id, FINAL_STATUSES):
            try:
                self.jobs.queue().enqueue(document.id)
            except WorkspaceError as exc:
                self._states.fail(document.id, exc.user_message)
                return IngestReport(document.id, name, "failed", 0, 0, exc.user_message)
        return IngestReport(document.id, document.name, "queued", 0, 0, None)

    def _submit_upload(self, workspace: str, data: bytes | BinaryIO, given_name: str, keep_refused: bool) -> IngestReport:
        stream = io.BytesIO(data) if isinstance(data, bytes) else data
        stream.seek(0, io.SEEK_END)
        size = stream.tell()
        stream.seek(0)
        name = clean_display_name(given_name)
        try:
            refuse_control_characters(given_name, "A file name")
            self.check_size(name, size)
        except WorkspaceError as exc:
            return IngestReport(None, name, "failed", 0, 0, exc.user_message)
        path = _copy_upload(stream)
        try:
            return self.submit(workspace, path, name, keep_refused)
        finally:
            shutil.rmtree(path.parent, ignore_errors=True)

    def _forget(self, document: Document) -> None:
        """Remove a document recorded moments ago that never reached a worker (no passages, no vectors yet)."""
        self._catalog.delete_document(document.id)
        self.release_file(document)

    def check_size(self, name: str, size: int) -> None:
        """Refuse a file over the upload limit, naming the limit."""
        limit = self._settings.max_file_mb
        if size > limit * 1024 * 1024:
            raise FileTooLargeError(f"{name} is {size / 1048576:.1f} MB; the limit is {limit} MB. Split or compress it.")

    def _record(self, workspace: str, source: Path, name: str) -> tuple[Document, bool]:
        """Store a file and record it as queued; returns (document, is_new). Same content twice is one document."""
        ws = find_workspace(self._catalog, workspace)
        media_type = media_type_for(name)
        size = source.stat().st_size
        self.check_size(name, size)
        sha, _ = self._files.put(source, stored_suffix(media_type))
        existing = self._catalog.find_document(ws.id, sha)
        if existing is not None:
            return existing, False
        document = Document(
            id=hashlib.sha256(f"{ws.id}/{sha}".encode()).hexdigest()[:16], workspace_id=ws.id,
            name=unused_name(name, {d.name for d in self._catalog.list_documents(ws.id)}), sha256=sha,
            size_bytes=size, pages=0, chunks=0, status="queued", stage="queued", progress=0.0, error=None,
            added_at=datetime.now(UTC).isoformat(timespec="milliseconds"), media_type=media_type,
        )
        return self._catalog.add_document(document), True

    # Changing

    def enqueue(self, workspace: str, names_or_ids: Sequence[str]) -> builtins.list[Document]:
        """Queue recorded documents (queued, failed or cancelled ones) for a worker."""
        queued = []
        for key in names_or_ids:
            document = self.get(workspace, key)
            if document.is_active or self._states.requeue(document.id, FINAL_STATUSES):
                self.jobs.queue().enqueue(document.id)
                queued.append(self._catalog.get_document(document.id) or document)
        return queued

    def cancel(self, workspace: str, name_or_id: str) -> Document:
        """Cancel a queued job at once, or ask the worker running it to stop at its next batch."""
        document = self.get(workspace, name_or_id)
        if not document.is_active:
            raise WorkspaceError(f"{document.name} is not waiting or running ({document.status}); there is nothing to cancel.")
        if self._catalog.request_cancel(document.id) == "cancelled":
            self.jobs.discard_outputs(document.id, document.workspace_id)
        return self._catalog.get_document(document.id) or document

    def retry(self, workspace: str, name_or_id: str) -> Document:
        """Queue a failed or cancelled document again."""
        document = self.get(workspace, name_or_id)
        if not self._states.requeue(document.id, ("failed", "cancelled")):
            raise WorkspaceError(f"{document.name} is {document.status}; only failed or cancelled sources can be retried.")
        self.jobs.queue().enqueue(document.id)
        return self._catalog.get_document(document.id) or document

    def reindex(self, workspace: str, names_or_ids: Sequence[str] = ()) -> builtins.list[Document]:
        """Queue documents (all of the workspace's by default) to be ingested again from their stored files: after
        an upgrade that adds an index (the cross-language one) or changes parsing. Running ones are left as they
        are; a queued document is out of search and chat until its run ends."""
        keys = list(names_or_ids) or [d.id for d in self.list(workspace)]
        queued = []
        for key in keys:
            document = self.get(workspace, key)
            if not document.is_active and self._states.requeue(document.id, FINAL_STATUSES):
                self.jobs.queue().enqueue(document.id)
                queued.append(self._catalog.get_document(document.id) or document)
        return queued

    def set_included(self, workspace: str, name_or_id: str, included: bool) -> Document:
        """Include a source in chat answers or leave it out (saved with the workspace)."""
        document = self.get(workspace, name_or_id)
        self._states.include(document.id, included)
        return self._catalog.get_document(document.id) or document

    def remove(self, workspace: str, name_or_id: str) -> Document:
        """Remove a document, its chunks, index rows, vectors and (when unused) its file; a running job stops."""
        document = self.get(workspace, name_or_id)
        if document.is_active:
            self._catalog.request_cancel(document.id)
        self._vectors.delete_document(document.workspace_id, document.id)
        self._catalog.delete_document(document.id)
        for hook in self._on_remove:
            hook(document.workspace_id, document.id)
        self.release_file(document)
        return document

    def release_file(self, document: Document) -> None:
        """Delete the document's figure thumbnails, and its file when no document (in any workspace) uses it any
        more."""
        if self._thumbnails is not None:
            self._thumbnails.delete_thumbnails(document.id)
        if self._catalog.count_file_references(document.sha256) == 0:
            self._files.delete(document.sha256, stored_suffix(document.media_type))


def unused_name(name: str, taken: set[str]) -> str:
    """The name, or with the first free " (n)" before its suffix when another file of the workspace has it:
    "same.pdf" -> "same (2).pdf"."""
    if name not in taken:
        return name
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    n = 2
    while f"{stem} ({n}){dot}{suffix}" in taken:
        n += 1
    return f"{stem} ({n}){dot}{suffix}"


def _already_there(document: Document) -> bool:
    """Whether the same content, added again, is a duplicate: it is ready, on its way, or failed for good
    (failed for a passing reason, or cancelled, it is queued again instead)."""
    return document.status in ("ready", "queued", "running") or (document.status == "failed" and not document.retryable)


def _duplicate(document: Document, name: str) -> IngestReport:
    state = {"queued": " (waiting to be ingested)", "running": " (being ingested)", "failed": " (it failed)"}
    return IngestReport(
        document.id, name, "duplicate", document.pages, document.chunks,
        f"{name} is already in this workspace as {document.name}{state.get(document.status, '')}.",
    )


def _copy_upload(stream: BinaryIO) -> Path:
    """Copy an upload to a private temporary file in 1 MB pieces (the caller removes its folder)."""
    folder = Path(tempfile.mkdtemp(prefix="upload-"))
    target = folder / "upload.bin"
    with target.open("wb") as out:
        shutil.copyfileobj(stream, out, 1 << 20)
    return target
