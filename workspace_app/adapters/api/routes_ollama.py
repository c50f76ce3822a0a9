"""An Ollama-compatible API: clients made for Ollama (its Python library, chat front ends) talk to a workspace.

    GET  /api/tags       each workspace as a model, `workspace:<name>`
    POST /api/chat       `{"model", "messages", "stream"?}`: the last user message answered (as /v1/chat/completions)
    POST /api/generate   `{"model", "prompt", "system"?, "stream"?}`: the prompt answered

As in Ollama, `stream` is true unless set to false: the reply is then NDJSON, one object a line, each with a piece
of text (`message.content` or `response`) and `done: false`, made as the answer is (see routes_openai), and a last
object with `done: true`, `done_reason`, the counts (`prompt_eval_count`, `eval_count`: word pieces of the
embedder's tokenizer), `total_duration` in nanoseconds and `citations` (an extension). Errors have our one error
shape; an error after the stream started is a last line `{"error": ...}`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from workspace_app.accounts.policy import Action
from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.roles import gate, record, visible
from workspace_app.adapters.api.routes_ask import DEFAULT_MODE, Mode, chain_events, until_failed
from workspace_app.adapters.api.routes_openai import (
    MODEL_PREFIX,
    ChatMessageIn,
    citations_payload,
    count_tokens,
    question_and_history,
    streamed_reply,
    workspace_of,
)
from workspace_app.app import App
from workspace_app.models.answers import Answer, AnswerLine, Turn

router = APIRouter(tags=["ollama"])


class OllamaChatRequest(BaseModel):
    """Ollama's chat request (options and the like are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, description="`workspace:<name>` (or the workspace's name or id).")
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=200)
    stream: bool = True
    mode: Mode = Field(DEFAULT_MODE, description="Our query mode (an extension of the protocol).")


class OllamaGenerateRequest(BaseModel):
    """Ollama's generate request: one prompt, no history."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, description="`workspace:<name>` (or the workspace's name or id).")
    prompt: str = Field(min_length=1, max_length=2000)
    system: str = ""
    stream: bool = True
    mode: Mode = Field(DEFAULT_MODE, description="Our query mode (an extension of the protocol).")


@router.get("/api/tags")
def list_tags(request: Request, app: AppDep) -> dict[str, Any]:
    """Each workspace (the caller's, with accounts on) as an Ollama model."""
    return {"models": [
        {"name": f"{MODEL_PREFIX}{w.name}", "model": f"{MODEL_PREFIX}{w.name}", "modified_at": w.created_at,
         "size": 0, "digest": w.id, "details": {"format": "workspace", "family": "workspace-app"}}
        for w in visible(request, app)
    ]}


@router.post("/api/chat", response_model=None)
def chat(body: OllamaChatRequest, request: Request, app: AppDep) -> Response:
    """Answer the last user message from the workspace the model names."""
    question, history = question_and_history(body.messages)
    prompt = [m.text() for m in body.messages]
    return _answered(request, app, body.model, question, history, prompt, body.mode, body.stream, "message")


@router.post("/api/generate", response_model=None)
def generate(body: OllamaGenerateRequest, request: Request, app: AppDep) -> Response:
    """Answer the prompt from the workspace the model names."""
    return _answered(request, app, body.model, body.prompt, [], [body.system, body.prompt], body.mode, body.stream, "response")


def _answered(
    request: Request, app: App, model: str, question: str, history: list[Turn], prompt: list[str], mode: str, stream: bool, field: str
) -> Response:
    """The reply of a chat (`field` "message") or a generate (`field` "response"), whole or as NDJSON."""
    started = time.perf_counter_ns()
    workspace = gate(request, app, workspace_of(model), Action.ASK)
    record(request, app, "asked", workspace.id, "ollama", question)
    events = app.answers.ask_stream(workspace.id, question, history, mode=mode, lines=True)
    first = next(events)  # errors before the first event are plain error responses
    lines = _lines(app, model, field, chain_events(first, events), count_tokens(app, prompt), started)
    if stream:
        return StreamingResponse(lines, media_type="application/x-ndjson")
    pieces = [json.loads(line) for line in lines]
    if "error" in pieces[-1]:
        return JSONResponse(pieces[-1], 500)
    text = "".join(_text(p, field) for p in pieces)
    return JSONResponse({**pieces[-1], field: _content(field, text)})


def _lines(
    app: App, model: str, field: str, events: Iterator[str | AnswerLine | Answer], prompt_tokens: int, started: int
) -> Iterator[str]:
    """NDJSON objects: a piece of text each, then the last with `done: true`, the counts and `citations`."""
    sent: list[str] = []
    answer = None
    for piece in until_failed(streamed_reply(events), "Ollama-style answer"):
        if isinstance(piece, Answer):
            answer = piece
        elif isinstance(piece, dict):
            yield _line(piece)
            return
        else:
            sent.append(piece)
            yield _line({"model": model, "created_at": _now(), field: _content(field, piece), "done": False})
    assert answer is not None, "ask_stream always ends with the answer"
    yield _line({
        "model": model, "created_at": _now(), field: _content(field, ""), "done": True, "done_reason": "stop",
        "total_duration": time.perf_counter_ns() - started, "prompt_eval_count": prompt_tokens,
        "eval_count": count_tokens(app, ["".join(sent)]), "citations": citations_payload(answer),
    })


def _content(field: str, text: str) -> str | dict[str, str]:
    return {"role": "assistant", "content": text} if field == "message" else text


def _text(line: dict[str, Any], field: str) -> str:
    value = line[field]
    return str(value["content"] if isinstance(value, dict) else value)


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False) + "\n"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
