"""Routes of a workspace's documents: upload (queued for the worker), list, get, remove, cancel, retry, the
stored file and page images a client needs to show a highlighted citation, and the document's figures (with page,
box and a thumbnail).

An upload is parsed by Starlette into a spooled temporary file (on disk above 1 MB) and copied to the store in
1 MB pieces by `app.documents.submit`: it never sits in memory whole. The route is a plain `def`, so it runs in
the thread pool beside asks.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Path, Request, UploadFile
from fastapi.responses import FileResponse, JSONResponse, Response

from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.errors import error_body
from workspace_app.adapters.api.roles import record
from workspace_app.app import App
from workspace_app.documents.figures import FigureService
from workspace_app.errors import WorkspaceError
from workspace_app.models.documents import IngestReport

router = APIRouter(tags=["documents"])


@router.post("/workspaces/{workspace}/documents", status_code=202)
def upload_document(
    workspace: str, file: Annotated[UploadFile, File()], request: Request, app: AppDep
) -> JSONResponse:
    """Store a PDF (or .txt/.md) and queue it for the worker: 202 with the document (`status` queued), 200 when
    the same content is already in the workspace, 422 with the reason when the file cannot be used (nothing of it
    is kept: sent again, it is judged afresh)."""
    name = file.filename or "untitled"
    found = app.workspaces.get(workspace)  # an unknown workspace is a 404, not a failed upload
    if file.size is not None:
        app.documents.check_size(name, file.size)  # 413, naming the limit
    report = app.documents.submit(workspace, file.file, name, keep_refused=False)
    record(request, app, "uploaded", found.id, name, report.status)
    return _report_response(app, workspace, report)


def _report_response(app: App, workspace: str, report: IngestReport) -> JSONResponse:
    document = app.documents.find(workspace, report.document_id) if report.document_id else None
    body: dict[str, Any] = {
        "status": report.status, "message": report.error, "document": document.to_json() if document else None,
    }
    if report.status == "queued":
        return JSONResponse(body, 202)
    if report.status == "duplicate":
        return JSONResponse(body, 200)
    message = report.error or "The file could not be used."
    return JSONResponse(error_body("unusable_file", message, status="failed", document=body["document"]), 422)


@router.get("/workspaces/{workspace}/documents")
def list_documents(workspace: str, app: AppDep) -> list[dict[str, Any]]:
    """The workspace's documents with status, stage, progress, counts and time left (as `documents --json`)."""
    return [d.to_json() for d in app.documents.list(workspace)]


@router.get("/workspaces/{workspace}/documents/{document}")
def get_document(workspace: str, document: str, app: AppDep) -> dict[str, Any]:
    """One document by id, sha256 or name (409 when two share the name)."""
    return app.documents.get(workspace, document).to_json()


@router.delete("/workspaces/{workspace}/documents/{document}")
def remove_document(workspace: str, document: str, request: Request, app: AppDep) -> dict[str, Any]:
    """Remove a document with its passages and vectors; a running ingestion stops."""
    removed = app.documents.remove(workspace, document)
    record(request, app, "removed", removed.workspace_id, removed.name)
    return {"removed": removed.name, "document_id": removed.id}


@router.post("/workspaces/{workspace}/documents/{document}/cancel")
def cancel_document(workspace: str, document: str, app: AppDep) -> dict[str, Any]:
    """Cancel a queued ingestion now, or stop a running one at its next page or batch."""
    return app.documents.cancel(workspace, document).to_json()


@router.post("/workspaces/{workspace}/documents/{document}/retry")
def retry_document(workspace: str, document: str, app: AppDep) -> dict[str, Any]:
    """Queue a failed or cancelled document again."""
    return app.documents.retry(workspace, document).to_json()


@router.get("/workspaces/{workspace}/documents/{document}/file")
def document_file(workspace: str, document: str, app: AppDep) -> Response:
    """The stored file (the PDF), streamed from the store; `nosniff` so a browser never takes it for a page."""
    found = app.documents.get(workspace, document)
    path = app.documents.document_path(found)
    if not path.is_file():
        raise WorkspaceError(f"The file of {found.name} is missing from the store. Upload it again.")
    safe = "".join(ch if ch.isascii() and ch.isprintable() and ch not in '"\\' else "_" for ch in found.name)
    return FileResponse(path, media_type=found.media_type, headers={
        "Content-Disposition": f'inline; filename="{safe}"', "X-Content-Type-Options": "nosniff",
    })


@router.get("/workspaces/{workspace}/documents/{document}/pages/{page}.png")
def page_image(
    workspace: str, document: str, page: Annotated[int, Path(ge=1)], app: AppDep
) -> Response:
    """One page drawn as a PNG (1-based), e.g. to draw a citation's rects on it (PDF points x2)."""
    image = app.documents.page_image(workspace, document, page)
    return Response(image.png, media_type="image/png", headers={
        "X-Page-Count": str(image.pages), "X-Page-Width-Pt": f"{image.width:.2f}",
        "X-Page-Height-Pt": f"{image.height:.2f}",
    })


@router.get("/workspaces/{workspace}/documents/{document}/figures")
def document_figures(workspace: str, document: str, app: AppDep) -> list[dict[str, Any]]:
    """The document's figures in reading order: label, caption, inner text, page and box (`rect`, PDF points,
    top-left origin, as citations' rects), the passages beside each, the graph's entities its caption names (`id`,
    `name`, `type`) and whether it has a thumbnail."""
    return [
        {**figure.to_json(), "entities": [{"id": e.id, "name": e.name, "type": e.type} for e in entities]}
        for figure, entities in _figures(app).linked_figures(workspace, document)
    ]


@router.get("/workspaces/{workspace}/documents/{document}/figures/{figure_id}.png")
def figure_thumbnail(workspace: str, document: str, figure_id: str, app: AppDep) -> Response:
    """A figure's thumbnail (PNG); 404 when the document has no such figure."""
    return Response(_figures(app).thumbnail(workspace, document, figure_id), media_type="image/png",
                    headers={"X-Content-Type-Options": "nosniff"})


def _figures(app: App) -> FigureService:
    if app.figures is None:
        raise WorkspaceError("Figures are not available in this server. Restart it with the current version.")
    return app.figures
