"""An OpenAI-compatible chat endpoint: any chat client can talk to a workspace.

`model` names the workspace (`workspace:<name>`, or the bare name); the last user message is the question and the
earlier user/assistant pairs its history. The reply is the verified answer with its `[n]` citations, a "Sources:"
list and the disclaimer; `citations` (an extension) lists them as data, and `usage` counts word pieces with the
embedder's tokenizer (the prompt is the request's messages, the completion the reply's text).

Streaming sends text as it is made: with a language model its tokens as it writes them (its draft: markers name
evidence blocks), then, after a `---` rule, the verified answer (citations renumbered by verification, so raw
tokens cannot be its text); the offline answerer writes no tokens: its answer's lines are sent one by one as each is
final (before its citations are located in the documents), then the rest of the reply (sources, disclaimer) sentence
by sentence. The chunk with `finish_reason` carries `citations`; `stream_options.include_usage` adds a usage chunk.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from workspace_app.accounts.policy import Action
from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.errors import error_body, log
from workspace_app.adapters.api.payloads import chat_reply_line, chat_reply_text
from workspace_app.adapters.api.roles import gate, record, visible
from workspace_app.adapters.api.routes_ask import DEFAULT_MODE, Mode, chain_events, last_answer, until_failed
from workspace_app.app import App
from workspace_app.errors import WorkspaceError, WorkspaceNotFoundError
from workspace_app.models.answers import Answer, AnswerLine, Citation, Turn

router = APIRouter(tags=["openai"])
MODEL_PREFIX = "workspace:"
VERIFIED_RULE = "\n\n---\n\n"
_SENTENCE = re.compile(r".+?(?:[.!?](?=\s|$)|[。！？]|\n|$)\s*", re.DOTALL)


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


class StreamOptions(BaseModel):
    """OpenAI's `stream_options`: `include_usage` adds a last chunk with the usage."""

    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """The subset of OpenAI's chat completion request that matters here; other fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, description="`workspace:<name>` (or the workspace's name or id).")
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=200)
    stream: bool = False
    stream_options: StreamOptions | None = None
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


def model_object(name: str) -> dict[str, Any]:
    """A workspace as an OpenAI model object."""
    return {"id": f"{MODEL_PREFIX}{name}", "object": "model", "created": 0, "owned_by": "workspace-app"}


def citations_payload(answer: Answer) -> list[dict[str, Any]]:
    """The `citations` extension: each verified citation's number, source, pages and quote."""
    return [citation_payload(c) for c in answer.citations]


def citation_payload(c: Citation) -> dict[str, Any]:
    """One citation of the `citations` extension."""
    return {"n": c.n, "document": c.document, "document_id": c.document_id, "page_start": c.page_start,
            "page_end": c.page_end, "section": c.section, "quote": c.quote}


def count_tokens(app: App, texts: list[str]) -> int:
    """Word pieces of the texts with the embedder's own tokenizer (what `usage` reports)."""
    return sum(app.embedder.count_tokens([t for t in texts if t]))


def usage_payload(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """OpenAI's `usage` object."""
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


@router.get("/v1/models")
def list_models(request: Request, app: AppDep) -> dict[str, Any]:
    """Each workspace (the caller's, with accounts on) as a model, `workspace:<name>`."""
    return {"object": "list", "data": [model_object(w.name) for w in visible(request, app)]}


@router.get("/v1/models/{model_id}", response_model=None)
def retrieve_model(model_id: str, request: Request, app: AppDep) -> Response:
    """One workspace as a model; an unknown one (or one the caller may not read) is a 404 in OpenAI's error shape (a
    superset of ours)."""
    try:
        return JSONResponse(model_object(gate(request, app, workspace_of(model_id), Action.READ).name))
    except WorkspaceNotFoundError as exc:
        body = error_body("model_not_found", exc.user_message)
        body["error"].update(type="invalid_request_error", param="model")
        return JSONResponse(body, 404)


@dataclass
class Completion:
    """One chat completion being answered: its id, creation time, model and prompt size."""

    model: str
    prompt_tokens: int
    id: str = field(default_factory=lambda: f"chatcmpl-{secrets.token_hex(12)}")
    created: int = field(default_factory=lambda: int(time.time()))

    def chunk(self, delta: dict[str, str], finish: str | None = None, **extra: Any) -> str:
        """One `chat.completion.chunk` server-sent event."""
        data = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


@router.post("/v1/chat/completions", response_model=None)
def chat_completions(body: ChatCompletionRequest, request: Request, app: AppDep) -> Response:
    """Answer the last user message from the workspace the model names."""
    question, history = question_and_history(body.messages)
    workspace = gate(request, app, workspace_of(body.model), Action.ASK)
    record(request, app, "asked", workspace.id, "openai", question)
    completion = Completion(body.model, count_tokens(app, [m.text() for m in body.messages]))
    events = app.answers.ask_stream(workspace.id, question, history, mode=body.mode, lines=True)
    first = next(events)  # errors before the first event are plain error responses
    if body.stream:
        usage = body.stream_options is not None and body.stream_options.include_usage
        return StreamingResponse(_chunks(app, completion, chain_events(first, events), usage), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    answer = first if isinstance(first, Answer) else last_answer(events)
    text = chat_reply_text(answer)
    return JSONResponse({
        "id": completion.id, "object": "chat.completion", "created": completion.created, "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "citations": citations_payload(answer),
        "usage": usage_payload(completion.prompt_tokens, count_tokens(app, [text])),
    })


def _chunks(
    app: App, completion: Completion, events: Iterator[str | AnswerLine | Answer], include_usage: bool
) -> Iterator[str]:
    """`chat.completion.chunk` events: the role, text as it is made, the finish with `citations`, the usage if asked
    for, then `[DONE]` (a sync generator: Starlette runs it in the thread pool)."""
    yield completion.chunk({"role": "assistant", "content": ""})
    sent: list[str] = []
    answer = None
    for piece in until_failed(streamed_reply(events), "streamed chat completion"):
        if isinstance(piece, Answer):
            answer = piece
        elif isinstance(piece, dict):
            yield f"data: {json.dumps(piece, ensure_ascii=False)}\n\n"
            return
        else:
            sent.append(piece)
            yield completion.chunk({"content": piece})
    assert answer is not None, "ask_stream always ends with the answer"
    yield completion.chunk({}, "stop", citations=citations_payload(answer))
    if include_usage:
        usage = usage_payload(completion.prompt_tokens, count_tokens(app, ["".join(sent)]))
        data = {"id": completion.id, "object": "chat.completion.chunk", "created": completion.created,
                "model": completion.model, "choices": [], "usage": usage}
        yield f"data: {json.dumps(data)}\n\n"
    yield "data: [DONE]\n\n"


def streamed_reply(events: Iterator[str | AnswerLine | Answer]) -> Iterator[str | Answer]:
    """The reply's text in pieces as it is made: a language model's tokens, then the verified reply (after a rule
    when a draft was sent) sentence by sentence; or a quoted answer's lines as each is final, then the rest of the
    reply; the `Answer` itself last."""
    drafted, sent = False, ""
    for event in events:
        if isinstance(event, Answer):
            reply = (VERIFIED_RULE if drafted else "") + chat_reply_text(event)
            if not reply.startswith(sent):  # never expected: the client then gets the whole reply after a rule
                log.error("streamed lines are not the start of the reply; sending it whole after a rule")
                reply, sent = VERIFIED_RULE + reply, ""
            yield from sentences(reply[len(sent):])
            yield event
        elif isinstance(event, AnswerLine):
            piece = chat_reply_line(event)
            sent += piece
            yield piece
        else:
            drafted = True
            yield event


def sentences(text: str) -> list[str]:
    """The text in sentence-sized pieces (joined they give the text back)."""
    return _SENTENCE.findall(text)
