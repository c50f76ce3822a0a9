"""An OpenAI-compatible chat endpoint: any chat client can talk to a workspace.

`model` names the workspace (`workspace:<name>`, or the bare name); the last user message is the question and the
earlier user/assistant pairs its history. The reply is the verified answer with its `[n]` citations, a "Sources:"
list and the disclaimer. Streaming sends that verified text in pieces once it is checked (citations are
renumbered by verification, so raw model tokens would not match the sources list).
"""

from __future__ import annotations

import itertools
import json
import secrets
import time
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.payloads import chat_reply_text
from workspace_app.adapters.api.routes_ask import DEFAULT_MODE, Mode
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Turn

router = APIRouter(tags=["openai"])
MODEL_PREFIX = "workspace:"
STREAM_PIECE_CHARS = 24


class ChatMessageIn(BaseModel):
    """One message of the conversation; content as text or as a list of text parts."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text (text parts joined)."""
        if isinstance(self.content, list):
            return "".join(str(part.get("text", "")) for part in self.content if part.get("type") == "text")
        return self.content or ""


class ChatCompletionRequest(BaseModel):
    """The subset of OpenAI's chat completion request that matters here; other fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, description="`workspace:<name>` (or the workspace's name or id).")
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=200)
    stream: bool = False
    mode: Mode = Field(DEFAULT_MODE, description="Our query mode (an extension of the protocol).")


def question_and_history(messages: list[ChatMessageIn]) -> tuple[str, list[Turn]]:
    """The last user message and the earlier (question, answer) pairs; system messages are ignored."""
    talk = [m for m in messages if m.role in ("user", "assistant")]
    if not talk or talk[-1].role != "user" or not talk[-1].text().strip():
        raise WorkspaceError("The last message must be the user's question.")
    history = []
    for earlier, reply in itertools.pairwise(talk[:-1]):
        if earlier.role == "user" and reply.role == "assistant":
            history.append(Turn(earlier.text(), reply.text()))
    return talk[-1].text(), history


def workspace_of(model: str) -> str:
    """The workspace a model name picks."""
    return model.removeprefix(MODEL_PREFIX)


@router.get("/v1/models")
def list_models(app: AppDep) -> dict[str, Any]:
    """Each workspace as a model, `workspace:<name>`."""
    return {"object": "list", "data": [
        {"id": f"{MODEL_PREFIX}{w.name}", "object": "model", "created": 0, "owned_by": "workspace-app"}
        for w in app.workspaces.list()
    ]}


@router.post("/v1/chat/completions", response_model=None)
def chat_completions(body: ChatCompletionRequest, app: AppDep) -> Response:
    """Answer the last user message from the workspace the model names."""
    question, history = question_and_history(body.messages)
    workspace = app.workspaces.get(workspace_of(body.model))
    answer = app.answers.ask(workspace.id, question, history, mode=body.mode)
    text = chat_reply_text(answer)
    completion_id = f"chatcmpl-{secrets.token_hex(12)}"
    if body.stream:
        return StreamingResponse(_chunks(completion_id, body.model, text), media_type="text/event-stream")
    return JSONResponse({
        "id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })


def _chunks(completion_id: str, model: str, text: str) -> Iterator[str]:
    """`chat.completion.chunk` events: the role, the text in pieces, the finish, then `[DONE]`."""
    created = int(time.time())

    def chunk(delta: dict[str, str], finish: str | None = None) -> str:
        data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for start in range(0, len(text), STREAM_PIECE_CHARS):
        yield chunk({"content": text[start:start + STREAM_PIECE_CHARS]})
    yield chunk({}, "stop")
    yield "data: [DONE]\n\n"
