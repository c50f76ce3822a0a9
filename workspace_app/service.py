"""The application facade every front end calls (UI, CLI, worker, API)."""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import tempfile
import threading
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from storage.base import Catalog, FileStore, JobQueue, VectorIndex
from workspace_app.config import Settings
from workspace_app.embedding.embedder import Embedder
from workspace_app.errors import (
    DocumentNotFoundError,
    FileTooLargeError,
    UnsupportedFileError,
    WorkspaceError,
    WorkspaceNotFoundError,
)
from workspace_app.graph.service import GraphService
from workspace_app.ingest.pipeline import ProgressCallback, StopCheck, ingest_document
from workspace_app.documents.jobs import discard_outputs, new_owner, recover_jobs, run_job, run_until_settled
from workspace_app.models.documents import FINAL_STATUSES, Document, IngestReport, SearchHit, SearchResult, Workspace
from workspace_app.retrieval.hybrid import HybridRetriever
from workspace_app.retrieval.rerank import CrossEncoderReranker

log = logging.getLogger(__name__)

MEDIA_TYPES = {".pdf": "application/pdf", ".txt": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown"}
_MAX_NAME = 180


def clean_display_name(name: str) -> str:
    """A safe display name: the last path part, NFC, no control characters, bounded length."""
    name = unicodedata.normalize("NFC", name).replace("\\", "/").split("/")[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip().strip(".") or "untitled"
    if len(name) > _MAX_NAME:
        stem, dot, suffix = name.rpartition(".")
        name = (stem[: _MAX_NAME - len(suffix) - 2] + "…" + dot + suffix) if dot else name[:_MAX_NAME]
    return name


def clean_workspace_name(name: str) -> str:
    """Validate a workspace name: 1-80 visible characters."""
    cleaned = re.sub(r"\s+", " ", "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")).strip()
    if not cleaned or len(cleaned) > 80:
        raise WorkspaceError("A workspace name needs 1 to 80 visible characters.")
    return cleaned


class WorkspaceService:
    """Workspaces, their documents, ingestion and search."""

    def __init__(
        self, settings: Settings, catalog: Catalog, vectors: VectorIndex, files: FileStore, embedder: Embedder,
        queue: JobQueue | None = None, graph: GraphService | None = None,
    ) -> None:
        self.settings = settings
        self.catalog = catalog
        self.vectors = vectors
        self.files = files
        self.embedder = embedder
        self.queue = queue
        self.graph = graph
        reranker = CrossEncoderReranker(settings.retrieval.reranker) if settings.retrieval.reranker else None
        self.retriever = HybridRetriever(embedder, vectors, catalog, settings.retrieval, reranker)

    # Workspaces

    def create_workspace(self, name: str) -> Workspace:
        """Create a workspace."""
        return self.catalog.create_workspace(clean_workspace_name(name))

    def list_workspaces(self) -> list[Workspace]:
        """All workspaces."""
        return self.catalog.list_workspaces()

    def get_workspace(self, name_or_id: str) -> Workspace:
        """A workspace by name or id, or a clear error."""
        found = self.catalog.find_workspace(name_or_id)
        if found is None:
            raise WorkspaceNotFoundError(
                f"There is no workspace '{name_or_id}'. Create it first (workspace-app workspace create NAME)."
            )
        return found

    def rename_workspace(self, name_or_id: str, new_name: str) -> Workspace:
        """Rename a workspace."""
        return self.catalog.rename_workspace(self.get_workspace(name_or_id).id, clean_workspace_name(new_name))

    def delete_workspace(self, name_or_id: str) -> None:
        """Delete a workspace with everything in it (files only when no other workspace uses them)."""
        workspace = self.get_workspace(name_or_id)
        documents = self.catalog.list_documents(workspace.id)
        self.vectors.drop_workspace(workspace.id)
        self.catalog.delete_workspace(workspace.id)
        for document in documents:
            self._release_file(document)

    # Documents

    def list_documents(self, workspace: str) -> list[Document]:
        """Documents of a workspace with their status."""
        return self.catalog.list_documents(self.get_workspace(workspace).id)

    def get_document(self, workspace: str, name_or_id: str) -> Document:
        """A document by name, id or sha256, or a clear error."""
        ws = self.get_workspace(workspace)
        found = self.catalog.find_document(ws.id, name_or_id)
        if found is None:
            raise DocumentNotFoundError(f"There is no document '{name_or_id}' in workspace '{ws.name}'.")
        return found

    def document_path(self, document: Document) -> Path:
        """Where the document's file is stored."""
        return self.files.path_for(document.sha256, _suffix(document.media_type))

    def add_document(self, workspace: str, source: Path, display_name: str | None = None) -> tuple[Document, bool]:
        """Store a file and record it as queued; returns (document, is_new). Same content twice is one document."""
        ws = self.get_workspace(workspace)
        name = clean_display_name(display_name or source.name)
        media_type = _media_type(name)
        size = source.stat().st_size
        self.check_size(name, size)
        sha, _ = self.files.put(source, _suffix(media_type))
        existing = self.catalog.find_document(ws.id, sha)
        if existing is not None:
            return existing, False
        document = Document(
            id=hashlib.sha256(f"{ws.id}/{sha}".encode()).hexdigest()[:16], workspace_id=ws.id, name=name, sha256=sha,
            size_bytes=size, pages=0, chunks=0, status="queued", stage="queued", progress=0.0, error=None,
            added_at=_now(), media_type=media_type,
        )
        return self.catalog.add_document(document), True

    def check_size(self, name: str, size: int) -> None:
        """Refuse a file over the upload limit, naming the limit."""
        limit = self.settings.ingest.max_file_mb
        if size > limit * 1024 * 1024:
            raise FileTooLargeError(f"{name} is {size / 1048576:.1f} MB; the limit is {limit} MB. Split or compress it.")

    def ingest_file(
        self, workspace: str, source: Path, display_name: str | None = None, on_progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Add and ingest one file in this process (waiting if a worker has it); errors become a failed report."""
        name = clean_display_name(display_name or source.name)
        try:
            document, is_new = self.add_document(workspace, source, name)
            if not is_new and document.status == "ready":
                return _duplicate(document, name)
            self.catalog.requeue_document(document.id, FINAL_STATUSES)
            run_until_settled(self, document.id, new_owner("cli"), on_progress)
        except WorkspaceError as exc:
            return IngestReport(None, name, "failed", 0, 0, exc.user_message)
        done = self.catalog.get_document(document.id) or document
        return IngestReport(done.id, name, done.status, done.pages, done.chunks if done.status == "ready" else 0, done.error)

    def submit_file(self, workspace: str, source: Path, display_name: str | None = None) -> IngestReport:
        """Store a file and queue it for a worker; returns at once (status queued, duplicate or failed)."""
        name = clean_display_name(display_name or source.name)
        try:
            document, is_new = self.add_document(workspace, source, name)
        except WorkspaceError as exc:
            return IngestReport(None, name, "failed", 0, 0, exc.user_message)
        if not is_new and document.status == "ready":
            return _duplicate(document, name)
        if is_new or self.catalog.requeue_document(document.id, FINAL_STATUSES):
            try:
                self.job_queue().enqueue(document.id)
            except WorkspaceError as exc:
                self.catalog.update_document(document.id, status="failed", stage="failed", error=exc.user_message)
                return IngestReport(document.id, name, "failed", 0, 0, exc.user_message)
        return IngestReport(document.id, name, "queued", 0, 0, None)

    def submit_upload(self, workspace: str, name: str, data: bytes) -> IngestReport:
        """Queue uploaded bytes (the Sources page); over-size files are refused before anything is written."""
        display = clean_display_name(name)
        try:
            self.check_size(display, len(data))
        except WorkspaceError as exc:
            return IngestReport(None, display, "failed", 0, 0, exc.user_message)
        path = copy_upload(data, display)
        try:
            return self.submit_file(workspace, path, display)
        finally:
            remove_upload(path)

    def enqueue_documents(self, workspace: str, names_or_ids: Sequence[str]) -> list[Document]:
        """Queue recorded documents (queued, failed or cancelled ones) for a worker."""
        queued = []
        for key in names_or_ids:
            document = self.get_document(workspace, key)
            if document.is_active or self.catalog.requeue_document(document.id, FINAL_STATUSES):
                self.job_queue().enqueue(document.id)
                queued.append(self.catalog.get_document(document.id) or document)
        return queued

    def cancel_document(self, workspace: str, name_or_id: str) -> Document:
        """Cancel a queued job at once, or ask the worker running it to stop at its next batch."""
        document = self.get_document(workspace, name_or_id)
        if not document.is_active:
            raise WorkspaceError(f"{document.name} is not waiting or running ({document.status}); there is nothing to cancel.")
        if self.catalog.request_cancel(document.id) == "cancelled":
            discard_outputs(self, document.id, document.workspace_id)
        return self.catalog.get_document(document.id) or document

    def retry_document(self, workspace: str, name_or_id: str) -> Document:
        """Queue a failed or cancelled document again."""
        document = self.get_document(workspace, name_or_id)
        if not self.catalog.requeue_document(document.id, ("failed", "cancelled")):
            raise WorkspaceError(f"{document.name} is {document.status}; only failed or cancelled sources can be retried.")
        self.job_queue().enqueue(document.id)
        return self.catalog.get_document(document.id) or document

    def set_included(self, workspace: str, name_or_id: str, included: bool) -> Document:
        """Include a source in chat answers or leave it out (saved with the workspace)."""
        document = self.get_document(workspace, name_or_id)
        self.catalog.update_document(document.id, included=int(included))
        return self.catalog.get_document(document.id) or document

    def included_document_ids(self, workspace: str) -> list[str]:
        """Ids of the ready sources the user left switched on for chat."""
        return [d.id for d in self.list_documents(workspace) if d.status == "ready" and d.included]

    def run_ingestion(
        self, document: Document, on_progress: ProgressCallback | None = None, should_stop: StopCheck | None = None
    ) -> Document:
        """Run the pipeline on a recorded document (jobs call this while they hold its lease)."""
        self.catalog.update_document(
            document.id, status="running", stage="parsing", progress=0.0, error=None, eta_s=None,
            pages_parsed=0, chunks_embedded=0, chunks_total=0,
        )
        return ingest_document(
            document, self.document_path(document), embedder=self.embedder, documents=self.catalog,
            chunks=self.catalog, vectors=self.vectors, settings=self.settings.ingest, on_progress=on_progress,
            should_stop=should_stop, graph=self.graph,
        )

    # Jobs (the worker adapter calls these)

    def job_queue(self) -> JobQueue:
        """The ingestion queue, or a clear error when this service was built without one."""
        if self.queue is None:
            raise WorkspaceError("No ingestion queue is configured for this service.")
        return self.queue

    def process_job(self, document_id: str, owner: str, shutdown: threading.Event | None = None) -> str:
        """Run one queued document if no other worker has it; returns what became of it."""
        return run_job(self, document_id, owner, shutdown)

    def recover_jobs(self) -> list[str]:
        """Queue again the documents whose worker died or whose job went missing; returns their ids."""
        return recover_jobs(self)

    def remove_document(self, workspace: str, name_or_id: str) -> Document:
        """Remove a document, its chunks, index rows, vectors and (when unused) its file; a running job stops."""
        document = self.get_document(workspace, name_or_id)
        if document.is_active:
            self.catalog.request_cancel(document.id)
        self.vectors.delete_document(document.workspace_id, document.id)
        self.catalog.delete_document(document.id)
        if self.graph is not None:
            self.graph.remove_document(document.workspace_id, document.id)
        self._release_file(document)
        return document

    def _release_file(self, document: Document) -> None:
        if self.catalog.count_file_references(document.sha256) == 0:
            self.files.delete(document.sha256, _suffix(document.media_type))

    # Search

    def search(
        self, workspace: str, query: str, top_k: int | None = None, documents: Sequence[str] | None = None,
        methods: Sequence[str] = ("dense", "sparse"),
    ) -> SearchResult:
        """Hybrid search over a workspace, optionally restricted to some documents (names or ids)."""
        started = time.perf_counter()
        ws = self.get_workspace(workspace)
        all_documents = self.catalog.list_documents(ws.id)
        names = {d.id: d.name for d in all_documents}
        document_ids = self._searchable_ids(ws, all_documents, documents)
        k = top_k or self.settings.retrieval.top_k
        ranked, timings = self.retriever.search(ws.id, query, k, document_ids, methods)
        hits = [
            SearchHit(rank, item.chunk, names.get(item.chunk.document_id, "?"), item.score, item.ranks)
            for rank, item in enumerate(ranked, start=1)
        ]
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResult(query, hits, timings)

    def _searchable_ids(
        self, ws: Workspace, all_documents: list[Document], wanted: Sequence[str] | None
    ) -> list[str] | None:
        ready = [d for d in all_documents if d.status == "ready"]
        if wanted is None:
            return None if len(ready) == len(all_documents) else [d.id for d in ready]
        chosen = []
        for key in wanted:
            match = next((d for d in all_documents if key in (d.id, d.name, d.sha256)), None)
            if match is None:
                raise DocumentNotFoundError(f"There is no document '{key}' in workspace '{ws.name}'.")
            if match.status == "ready":
                chosen.append(match.id)
        return chosen


def _duplicate(document: Document, name: str) -> IngestReport:
    return IngestReport(
        document.id, name, "duplicate", document.pages, document.chunks,
        f"{name} is already in this workspace as {document.name}.",
    )


def _media_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix not in MEDIA_TYPES:
        raise UnsupportedFileError(f"{name}: '{suffix or 'no extension'}' files are not supported. Upload PDF, .txt or .md files.")
    return MEDIA_TYPES[suffix]


def _suffix(media_type: str) -> str:
    return {"application/pdf": ".pdf", "text/plain": ".txt", "text/markdown": ".md"}[media_type]


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds")


def copy_upload(data: bytes, name: str) -> Path:
    """Write uploaded bytes to a private temporary file (the caller removes it)."""
    folder = Path(tempfile.mkdtemp(prefix="upload-"))
    target = folder / "upload.bin"
    target.write_bytes(data)
    del name
    return target


def remove_upload(path: Path) -> None:
    """Delete a temporary upload written by copy_upload."""
    shutil.rmtree(path.parent, ignore_errors=True)
