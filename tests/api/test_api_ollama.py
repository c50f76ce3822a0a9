"""Ollama's API as the `ollama` client library reads it: workspaces as models, chat and generate, whole and
streamed as NDJSON, behind the keys."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import ollama
import pytest
from api_stack import KEY, QUESTION, WORKSPACE, Stack

from workspace_app.adapters.api.admission import is_ask

pytestmark = pytest.mark.slow
MODEL = f"workspace:{WORKSPACE}"


def test_tags_list_workspaces_and_chat_answers_with_citations(stack: Stack, ready: dict[str, Any]) -> None:
    client = ollama.Client(host=stack.open_url, trust_env=False)
    assert MODEL in [m.model for m in client.list().models]
    reply = client.chat(model=MODEL, messages=[{"role": "user", "content": QUESTION}])
    assert reply.done and reply.done_reason == "stop" and reply.message.role == "assistant"
    text = reply.message.content or ""
    assert "[1]" in text and "\n\nSources:\n[1] " in text and "2.0" in text
    assert reply.prompt_eval_count and reply.eval_count and reply.eval_count > 10 and reply.total_duration
    raw = httpx.post(f"{stack.open_url}/api/chat", json={"model": MODEL, "stream": False, "messages": [
        {"role": "user", "content": QUESTION}]}, timeout=120, trust_env=False).json()  # the library drops extensions
    citations = raw["citations"]
    assert raw["message"]["content"] == text and citations[0]["n"] == 1 and citations[0]["quote"][:40] in text
    pieces = list(client.chat(model=MODEL, messages=[{"role": "user", "content": QUESTION}], stream=True))
    assert len(pieces) > 2 and [p.done for p in pieces] == [False] * (len(pieces) - 1) + [True]
    assert "".join(p.message.content or "" for p in pieces) == text
    with pytest.raises(ollama.ResponseError) as raised:
        client.chat(model="workspace:Nowhere", messages=[{"role": "user", "content": QUESTION}])
    assert raised.value.status_code == 404


def test_ndjson_ends_with_citations(client: httpx.Client, ready: dict[str, Any]) -> None:
    response = client.post("/api/chat", json={"model": MODEL, "messages": [{"role": "user", "content": QUESTION}]})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]  # streamed unless "stream": false, as Ollama
    assert len(lines) > 2 and lines[-1]["done"] and lines[-1]["citations"][0]["n"] == 1
    assert all(not line["done"] and line["message"]["content"] for line in lines[:-1])


def test_generate_whole_and_streamed(stack: Stack, ready: dict[str, Any]) -> None:
    client = ollama.Client(host=stack.open_url, trust_env=False)
    whole = client.generate(model=MODEL, prompt=QUESTION, system="Be brief.")
    assert whole.done and "[1]" in whole.response and whole.eval_count
    streamed = list(client.generate(model=MODEL, prompt=QUESTION, stream=True))
    assert len(streamed) > 2 and streamed[-1].done and "".join(p.response for p in streamed) == whole.response


def test_chat_and_generate_are_admitted_as_asks() -> None:
    for path in ("/api/chat", "/api/generate"):
        assert is_ask({"type": "http", "method": "POST", "path": path})
    assert not is_ask({"type": "http", "method": "GET", "path": "/api/tags"})


def test_ndjson_lines_arrive_while_the_model_writes_and_need_the_key(stack: Stack, ready: dict[str, Any]) -> None:
    refused = httpx.post(f"{stack.guarded_url}/api/chat", json={"model": MODEL, "messages": []}, trust_env=False)
    assert refused.status_code == 401
    client = ollama.Client(host=stack.guarded_url, headers={"Authorization": f"Bearer {KEY}"}, trust_env=False)
    assert MODEL in [m.model for m in client.list().models]
    stack.fake.piece_delay_s = 0.25  # a model writing slowly
    try:
        first_at, pieces = 0.0, []
        for piece in client.chat(model=MODEL, messages=[{"role": "user", "content": QUESTION}], stream=True):
            if piece.message.content and not first_at:
                first_at = time.monotonic()
            pieces.append(piece.message.content or "")
    finally:
        stack.fake.piece_delay_s = 0.0
    assert first_at and first_at < stack.fake.last_piece_at  # a line reached us before the model's last piece
    assert "\n\n---\n\n" in "".join(pieces)
