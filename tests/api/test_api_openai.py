"""The OpenAI protocol as the `openai` client reads it: a model retrieved by id, `usage` counted, citations as
data, and a language model's tokens streamed as it writes them (before its last token is even produced)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from api_stack import KEY, QUESTION, WORKSPACE, Stack

pytestmark = pytest.mark.slow
MODEL = f"workspace:{WORKSPACE}"


@pytest.fixture
def model(stack: Stack) -> Iterator[openai.OpenAI]:
    """The `openai` client on the open API (the offline answerer)."""
    with openai.OpenAI(base_url=f"{stack.open_url}/v1", api_key="unused", max_retries=0) as client:
        yield client


def test_models_retrieve_a_workspace_and_404_for_an_unknown_one(
    model: openai.OpenAI, client: httpx.Client, ready: dict[str, Any]
) -> None:
    found = model.models.retrieve(MODEL)
    assert (found.id, found.object, found.owned_by) == (MODEL, "model", "workspace-app")
    assert model.models.retrieve(WORKSPACE).id == MODEL  # the bare name picks it too
    with pytest.raises(openai.NotFoundError) as raised:
        model.models.retrieve("workspace:Nowhere")
    assert "Nowhere" in raised.value.message
    response = client.get("/v1/models/workspace:Nowhere")
    assert response.status_code == 404
    error = response.json()["error"]  # ours ({code, message}) and OpenAI's (type, param) in one
    assert error["code"] == "model_not_found" and "Nowhere" in error["message"]
    assert (error["type"], error["param"]) == ("invalid_request_error", "model")


def test_usage_counts_word_pieces_of_prompt_and_reply(model: openai.OpenAI, ready: dict[str, Any]) -> None:
    short = model.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}])
    longer = model.chat.completions.create(model=MODEL, messages=[
        {"role": "system", "content": "Answer briefly and cite the guideline you quote from."},
        {"role": "user", "content": QUESTION}])
    assert short.usage and longer.usage
    assert 10 < short.usage.prompt_tokens < longer.usage.prompt_tokens
    assert short.usage.completion_tokens > len((short.choices[0].message.content or "").split()) // 2
    assert short.usage.total_tokens == short.usage.prompt_tokens + short.usage.completion_tokens


def test_citations_as_data_in_the_reply_and_the_streams_finish(model: openai.OpenAI, ready: dict[str, Any]) -> None:
    completion = model.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}])
    citations = (completion.model_extra or {})["citations"]
    assert citations and citations[0]["n"] == 1 and "mosca" in citations[0]["document"]
    assert citations[0]["page_start"] <= citations[0]["page_end"] and citations[0]["quote"]
    assert citations[0]["quote"][:40] in (completion.choices[0].message.content or "")
    chunks = list(model.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}],
                                                stream=True, stream_options={"include_usage": True}))
    finish = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finish) == 1 and (finish[0].model_extra or {})["citations"] == citations
    last = chunks[-1]
    assert not last.choices and last.usage and last.usage.completion_tokens == completion.usage.completion_tokens  # type: ignore[union-attr]
    assert all(c.usage is None for c in chunks[:-1])


def test_language_model_tokens_stream_before_the_model_has_finished(stack: Stack, ready: dict[str, Any]) -> None:
    stack.fake.piece_delay_s = 0.25  # a model writing slowly: each 7-character piece a quarter second apart
    try:
        with openai.OpenAI(base_url=f"{stack.guarded_url}/v1", api_key=KEY, max_retries=0) as model:
            stream = model.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}],
                                                   stream=True, extra_body={"mode": "naive"})
            first_at, pieces = 0.0, []
            for chunk in stream:
                text = chunk.choices[0].delta.content if chunk.choices else None
                if text and not first_at:
                    first_at = time.monotonic()
                pieces.append(text or "")
    finally:
        stack.fake.piece_delay_s = 0.0
    assert first_at and first_at < stack.fake.last_piece_at  # the first piece reached us while the model still wrote
    draft, verified = "".join(pieces).split("\n\n---\n\n", 1)
    assert draft.strip().endswith("[1]")  # the model's draft as it wrote it
    assert verified.rstrip().endswith("Check each citation against its source.")  # then the verified answer


def test_an_offline_answer_streams_line_by_line_and_says_what_the_whole_reply_says(
    model: openai.OpenAI, ready: dict[str, Any]
) -> None:
    whole = model.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}])
    reply = whole.choices[0].message.content or ""
    chunks = list(model.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}],
                                                stream=True))
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(texts) == reply  # streamed or not, the same words
    # The answer's lines come one a chunk, each as it is final (before the citations are located), then the rest
    # (sources, disclaimer): the first chunk is already a cited line of the answer, not the whole reply.
    assert len(texts) > 2 and reply.startswith(texts[0]) and "Sources:" not in texts[0]
    assert re.search(r"\[\d+\]", texts[0]), texts[0]
