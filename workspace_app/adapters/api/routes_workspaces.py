"""Routes of workspaces, search, chats and notes: thin calls into `app.workspaces`, `app.search`, `app.answers`.

Chats and notes are managed as the Chat and Notes pages do it: create, list, get, rename or edit (PATCH), delete
(204). An unknown chat or note is a 404 (`chat_not_found`, `note_not_found`); a body with unknown or missing fields
a 422. Routes are plain `def`: FastAPI runs them in its thread pool, so a slow call never blocks the event loop.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.payloads import chat_payload, message_payload, note_payload, workspace_payload
from workspace_app.adapters.api.roles import caller, record, visible
from workspace_app.retrieval.search import METHODS as SEARCH_METHODS

router = APIRouter()
METHODS = {
    "hybrid": SEARCH_METHODS, "dense": ("dense",), "sparse": ("sparse",),
}


class WorkspaceBody(BaseModel):
    """A workspace's name (create or rename)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200, description="1-80 visible characters.")


@router.get("/workspaces", tags=["workspaces"])
def list_workspaces(request: Request, app: AppDep) -> list[dict[str, Any]]:
    """Every workspace (the caller's, with accounts on) with its document count."""
    return [workspace_payload(w) for w in visible(request, app)]


@router.post("/workspaces", status_code=201, tags=["workspaces"])
def create_workspace(body: WorkspaceBody, request: Request, app: AppDep) -> dict[str, Any]:
    """Create a workspace (409 when the name is taken); with accounts on it is private to its creator, its owner."""
    created = app.workspaces.create(body.name)
    app.accounts.created(caller(request), created)
    return workspace_payload(created)


@router.get("/workspaces/{workspace}", tags=["workspaces"])
def get_workspace(workspace: str, app: AppDep) -> dict[str, Any]:
    """One workspace by name or id."""
    return workspace_payload(app.workspaces.get(workspace))


@router.patch("/workspaces/{workspace}", tags=["workspaces"])
def rename_workspace(workspace: str, body: WorkspaceBody, request: Request, app: AppDep) -> dict[str, Any]:
    """Rename a workspace."""
    renamed = app.workspaces.rename(workspace, body.name)
    record(request, app, "renamed workspace", renamed.id, renamed.name)
    return workspace_payload(renamed)


@router.delete("/workspaces/{workspace}", status_code=204, tags=["workspaces"])
def delete_workspace(workspace: str, request: Request, app: AppDep) -> Response:
    """Delete a workspace with everything in it."""
    found = app.workspaces.get(workspace)
    app.workspaces.delete(found.id)
    record(request, app, "deleted workspace", found.id, found.name)
    return Response(status_code=204)


@router.get("/workspaces/{workspace}/search", tags=["search"])
def search(
    workspace: str, app: AppDep, q: Annotated[str, Query(min_length=1, max_length=2000, description="The query.")],
    method: Literal["hybrid", "dense", "sparse"] = "hybrid", top_k: Annotated[int | None, Query(ge=1, le=100)] = None,
    documents: Annotated[str | None, Query(description="Comma-separated document names or ids.")] = None,
    figures: Annotated[int, Query(ge=0, le=50, description="Figures to return beside the passages (0: none).")] = 3,
) -> dict[str, Any]:
    """Ranked passages of the workspace (as `workspace-app search --json`, each with `type` "passage"), and under
    `figures` the figures whose caption, inner text or nearby text match best (`type` "figure", with page and box)."""
    wanted = [d.strip() for d in documents.split(",") if d.strip()] if documents else None
    body = app.search.search(workspace, q, top_k, wanted, METHODS[method]).to_json()
    for result in body["results"]:
        result["type"] = "passage"
    found = app.figures.search(workspace, q, figures, wanted) if app.figures and figures else []
    body["figures"] = [hit.to_json() for hit in found]
    return body


@router.get("/workspaces/{workspace}/chats", tags=["chats"])
def list_chats(workspace: str, app: AppDep) -> list[dict[str, Any]]:
    """The workspace's chats, most recent first."""
    return [chat_payload(c) for c in app.chats.list_chats(workspace)]


@router.get("/workspaces/{workspace}/chats/{chat_id}", tags=["chats"])
def get_chat(workspace: str, chat_id: str, app: AppDep) -> dict[str, Any]:
    """A chat with its messages (each answer with its citations)."""
    chat = app.chats.get_chat(workspace, chat_id)
    return {**chat_payload(chat), "messages": [message_payload(m) for m in app.chats.chat_messages(workspace, chat_id)]}


@router.get("/workspaces/{workspace}/notes", tags=["notes"])
def list_notes(workspace: str, app: AppDep) -> list[dict[str, Any]]:
    """The workspace's notes, newest first."""
    return [note_payload(n) for n in app.notes.list_notes(workspace)]


class ChatBody(BaseModel):
    """A new chat's title."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field("New chat", min_length=1, max_length=200)


class ChatTitleBody(BaseModel):
    """A chat's new title."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=200, description="1-80 visible characters.")


class NoteBody(BaseModel):
    """A note of one's own: a title and Markdown text."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=400)
    body: str = Field("", max_length=40_000)


class NoteEditBody(BaseModel):
    """A note's new title, Markdown text, or both; what is left out stays as it is."""

    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(None, min_length=1, max_length=400)
    body: str | None = Field(None, max_length=40_000)

    @model_validator(mode="after")
    def _something_to_change(self) -> NoteEditBody:
        if self.title is None and self.body is None:
            raise ValueError("give the note's new title, body, or both")
        return self


@router.post("/workspaces/{workspace}/chats", status_code=201, tags=["chats"])
def create_chat(workspace: str, body: ChatBody, app: AppDep) -> dict[str, Any]:
    """Start a chat; `POST /ask` with its id in `chat` keeps answers in it."""
    return chat_payload(app.chats.create_chat(workspace, body.title))


@router.post("/workspaces/{workspace}/notes", status_code=201, tags=["notes"])
def add_note(workspace: str, body: NoteBody, app: AppDep) -> dict[str, Any]:
    """Add a note of one's own."""
    return note_payload(app.notes.add_note(workspace, body.title, body.body))


@router.patch("/workspaces/{workspace}/chats/{chat_id}", tags=["chats"])
def rename_chat(workspace: str, chat_id: str, body: ChatTitleBody, app: AppDep) -> dict[str, Any]:
    """Rename a chat."""
    return chat_payload(app.chats.rename_chat(workspace, chat_id, body.title))


@router.delete("/workspaces/{workspace}/chats/{chat_id}", status_code=204, tags=["chats"])
def delete_chat(workspace: str, chat_id: str, app: AppDep) -> Response:
    """Delete a chat with its messages (notes saved from it stay)."""
    app.chats.delete_chat(workspace, chat_id)
    return Response(status_code=204)


@router.get("/workspaces/{workspace}/notes/{note_id}", tags=["notes"])
def get_note(workspace: str, note_id: str, app: AppDep) -> dict[str, Any]:
    """One note."""
    return note_payload(app.notes.get_note(workspace, note_id))


@router.patch("/workspaces/{workspace}/notes/{note_id}", tags=["notes"])
def edit_note(workspace: str, note_id: str, body: NoteEditBody, app: AppDep) -> dict[str, Any]:
    """Give a note a new title and/or Markdown text (a saved answer keeps its answer and citations)."""
    note = app.notes.get_note(workspace, note_id)
    title = note.title if body.title is None else body.title
    text = note.body if body.body is None else body.body
    return note_payload(app.notes.update_note(workspace, note_id, title, text))


@router.delete("/workspaces/{workspace}/notes/{note_id}", status_code=204, tags=["notes"])
def delete_note(workspace: str, note_id: str, app: AppDep) -> Response:
    """Delete a note."""
    app.notes.delete_note(workspace, note_id)
    return Response(status_code=204)
