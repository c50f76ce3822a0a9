"""`POST /ask`: a grounded answer with verified citations, as JSON or as server-sent events.

With `Accept: text/event-stream` the reply is a stream of `token` events (`{"text"}`, while a language model
writes; the extractive answerer sends none) and one `answer` event with the verified answer, always last (its
citations are renumbered after verification, so clients replace the streamed text with it); an error after the
stream started is an `error` event with the usual error shape. Errors found before the first event (an unknown
workspace, a bad mode) are ordinary error responses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from workspace_app.accounts.policy import Action
from workspace_app.adapters.api.context import AppDep, implied_workspace
from workspace_app.adapters.api.errors import error_body, error_code, log
from workspace_app.adapters.api.payloads import answer_payload
from workspace_app.adapters.api.roles import gate, record, visible
from workspace_app.app import App
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Answer, AnswerLine, Turn

router = APIRouter(tags=["answers"])
Mode = Literal["naive", "local", "global", "hybrid"]
DEFAULT_MODE: Mode = "hybrid"  # the Chat page's recommended way ("Balanced")
Event = TypeVar("Event")  # what an answer's stream yields (text, answer lines, the answer)


class HistoryTurn(BaseModel):
    """An earlier question and the answer given (follow-ups are made to stand alone with them)."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=2000)
    answer: str = Field("", max_length=20_000)


class AskRequest(BaseModel):
    """Seed 001's request (`question`) and our options."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=2000, description="The question, in English or Chinese.")
    workspace: str | None = Field(None, description="Name or id; may be left out when there is one workspace.")
    documents: list[str] | None = Field(None, description="Names or ids of the sources to use (default: the ticked).")
    mode: Mode = Field(DEFAULT_MODE, description="naive (text search), local, global or hybrid (with the graph).")
    history: list[HistoryTurn] = Field(default_factory=list, max_length=50, description="Earlier turns, oldest first.")
    chat: str | None = Field(None, description="A chat id: its history is used and the answer is kept in it.")


def _prepared(request: Request, app: App, body: AskRequest) -> tuple[str, list[Turn]]:
    named = implied_workspace(app, body.workspace, visible(request, app))
    # Keeping the answer in a chat edits the workspace: a viewer may ask, but not into a chat.
    workspace = gate(request, app, named, Action.EDIT if body.chat else Action.ASK).id
    record(request, app, "asked", workspace, body.chat or "", body.question)
    history = [Turn(t.question, t.answer) for t in body.history]
    if body.chat and not history:
        history = app.chats.chat_history(workspace, body.chat)
    return workspace, history


def _kept(app: App, workspace: str, body: AskRequest, answer: Answer) -> dict[str, Any]:
    if body.chat:
        app.chats.record_answer(workspace, body.chat, answer)
    return answer_payload(answer, app.workspaces.get(workspace).name)


@router.post("/ask", response_model=None)
async def ask(body: AskRequest, request: Request, app: AppDep) -> Response:
    """Answer from the workspace's sources; `Accept: text/event-stream` streams it."""
    workspace, history = await run_in_threadpool(_prepared, request, app, body)
    events = app.answers.ask_stream(workspace, body.question, history, body.documents, body.mode)
    first = await run_in_threadpool(next, events)  # errors before the stream starts are plain error responses
    if "text/event-stream" not in request.headers.get("accept", ""):
        answer = first if isinstance(first, Answer) else await run_in_threadpool(last_answer, events)
        return JSONResponse(await run_in_threadpool(_kept, app, workspace, body, answer))
    return StreamingResponse(
        _sse(app, workspace, body, first, events), media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def last_answer(events: Iterator[Event]) -> Answer:
    """The answer that ends the answer service's events."""
    answer = None
    for event in events:
        if isinstance(event, Answer):
            answer = event
    assert answer is not None, "ask_stream always ends with the answer"
    return answer


def until_failed(events: Iterator[Event], what: str) -> Iterator[Event | dict[str, Any]]:
    """The events of a reply whose stream has started, then, if it fails, the error body the client gets instead
    of a status (the log gets the rest): every streaming route writes it in its own protocol."""
    try:
        yield from events
    except WorkspaceError as exc:
        yield error_body(error_code(exc), exc.user_message)
    except Exception:  # noqa: BLE001 - the stream has started: the client gets an error event, the log the rest
        log.exception("%s failed", what)
        yield error_body("internal_error", "Something went wrong; the API's log has the details.")


def _sse(
    app: App, workspace: str, body: AskRequest, first: str | AnswerLine | Answer, events: Iterator[str | AnswerLine | Answer]
) -> Iterator[str]:
    """Server-sent events of one ask (a sync generator: Starlette runs it in the thread pool)."""
    for event in until_failed(chain_events(first, events), "streamed ask"):
        if isinstance(event, Answer):
            yield sse_event("answer", _kept(app, workspace, body, event))
        elif isinstance(event, dict):
            yield sse_event("error", event)
        elif isinstance(event, str):  # answer lines are not asked for here: the answer event has the text
            yield sse_event("token", {"text": event})


def chain_events(first: Event, events: Iterator[Event]) -> Iterator[Event]:
    """The first event (read before the response started) and the rest."""
    yield first
    yield from events


def sse_event(name: str, data: dict[str, Any]) -> str:
    """One server-sent event (JSON data on one line)."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
