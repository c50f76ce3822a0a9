"""Answers through the API: JSON with seed 001's fields, server-sent events (with and without a language model),
the workspace implied or asked for, chats and notes, the OpenAI protocol read by the `openai` client, and eight
asks at once."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from api_stack import KEY, QUESTION, WORKSPACE, Stack
from test_api_basics import assert_error

pytestmark = pytest.mark.slow

SEED_EVIDENCE = {"id", "guideline_id", "guideline_title", "year", "section_id", "section_title", "page_range"}


def ask(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/ask", json={"question": QUESTION, "mode": "naive", **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


def sse_events(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of a server-sent event stream, in order."""
    events = []
    for block in response.text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_answer_carries_seed_fields_and_verified_citations(client: httpx.Client, ready: dict[str, Any]) -> None:
    answer = ask(client, workspace=WORKSPACE)
    assert not answer["refused"] and answer["grounded"] and "[1]" in answer["answer"]
    assert "2.0" in answer["answer"] and "3.0" in answer["answer"]
    evidence = answer["evidences"][0]
    assert SEED_EVIDENCE <= set(evidence)
    assert evidence["guideline_id"] == ready["id"] and evidence["year"] == 2011
    assert evidence["page_range"][0] in (1, 2)
    citation = answer["citations"][0]
    assert citation["quote"] and citation["rects"] and citation["document_id"] == ready["id"]
    assert {"recommendation_class", "evidence_level"} <= set(citation)
    assert answer["disclaimer"] and answer["language"] == "en" and 0 < answer["confidence"] <= 1
    assert answer["timings_ms"]["total"] > 0 and isinstance(answer["entities"], list)
    assert answer["workspace"] == WORKSPACE


def test_the_only_workspace_is_implied_and_several_need_a_name(client: httpx.Client, ready: dict[str, Any]) -> None:
    assert ask(client)["workspace"] == WORKSPACE
    assert client.post("/workspaces", json={"name": "Second"}).status_code == 201
    try:
        message = assert_error(client.post("/ask", json={"question": QUESTION}), 400, "bad_request")
        assert "Name the workspace" in message and "Second" in message
    finally:
        client.delete("/workspaces/Second")


def test_documents_and_unknown_documents(client: httpx.Client, ready: dict[str, Any]) -> None:
    assert ask(client, documents=[ready["name"]])["citations"]
    assert_error(client.post("/ask", json={"question": QUESTION, "documents": ["missing.pdf"]}), 404)


def test_sse_sends_the_verified_answer_last(client: httpx.Client, ready: dict[str, Any]) -> None:
    response = client.post("/ask", json={"question": QUESTION, "mode": "naive"}, headers={"Accept": "text/event-stream"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response)
    assert events[-1][0] == "answer" and events[-1][1]["citations"]
    assert all(name == "token" for name, _ in events[:-1])  # the extractive answerer writes no tokens
    refused = client.post("/ask", json={"question": QUESTION, "workspace": "Nowhere"},
                          headers={"Accept": "text/event-stream"})
    assert_error(refused, 404, "workspace_not_found")  # an error before the stream is a plain error response


def test_sse_streams_model_tokens_then_the_verified_answer(guarded: httpx.Client, ready: dict[str, Any], stack: Stack) -> None:
    with guarded.stream("POST", "/ask", json={"question": QUESTION, "mode": "naive"},
                        headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        response.read()
    events = sse_events(response)
    tokens = [data["text"] for name, data in events if name == "token"]
    assert len(tokens) > 1, events  # the model's pieces, as it wrote them
    name, answer = events[-1]
    assert name == "answer" and answer["answerer"] == "llm"
    assert "".join(tokens).strip().endswith("[1]")
    assert stack.fake.requests and stack.fake.requests[-1]["body"]["stream"] is True


def test_chats_keep_asked_answers_and_notes_list(client: httpx.Client, ready: dict[str, Any]) -> None:
    chat = client.post(f"/workspaces/{WORKSPACE}/chats", json={}).json()
    ask(client, chat=chat["id"])
    follow_up = ask(client, chat=chat["id"], question="And what about aspirin?")
    assert follow_up["standalone_question"]  # made to stand alone with the chat's last question
    chats = client.get(f"/workspaces/{WORKSPACE}/chats").json()
    assert chat["id"] in [c["id"] for c in chats]
    kept = client.get(f"/workspaces/{WORKSPACE}/chats/{chat['id']}").json()
    assert [m["question"] for m in kept["messages"]] == [QUESTION, "And what about aspirin?"]
    assert kept["title"] != "New chat" and kept["messages"][0]["answer"]["citations"]
    assert_error(client.get(f"/workspaces/{WORKSPACE}/chats/nochat"), 404, "chat_not_found")
    note = client.post(f"/workspaces/{WORKSPACE}/notes", json={"title": "Mine", "body": "**INR** 2-3"})
    assert note.status_code == 201
    assert [n["title"] for n in client.get(f"/workspaces/{WORKSPACE}/notes").json()] == ["Mine"]


def test_search_ranks_passages(client: httpx.Client, ready: dict[str, Any]) -> None:
    found = client.get(f"/workspaces/{WORKSPACE}/search", params={"q": "warfarin INR", "method": "sparse"}).json()
    assert found["results"] and "warfarin" in found["results"][0]["text"].lower()
    assert found["results"][0]["ranks"]["sparse"] == 1
    assert_error(client.get(f"/workspaces/{WORKSPACE}/search", params={"q": ""}), 422)


def test_openai_client_reads_answers_with_sources(stack: Stack, ready: dict[str, Any]) -> None:
    with openai.OpenAI(base_url=f"{stack.open_url}/v1", api_key="unused", max_retries=0) as model:
        assert f"workspace:{WORKSPACE}" in [m.id for m in model.models.list()]
        completion = model.chat.completions.create(
            model=f"workspace:{WORKSPACE}", messages=[{"role": "system", "content": "Be brief."},
                                                      {"role": "user", "content": QUESTION}],
        )
        text = completion.choices[0].message.content or ""
        assert "[1]" in text and "\n\nSources:\n[1] " in text and "mosca" in text
        streamed = model.chat.completions.create(
            model=f"workspace:{WORKSPACE}", messages=[{"role": "user", "content": QUESTION}], stream=True,
        )
        pieces = [chunk.choices[0].delta.content or "" for chunk in streamed]
        assert len(pieces) > 2 and "".join(pieces) == text
        with pytest.raises(openai.NotFoundError):
            model.chat.completions.create(model="workspace:Nowhere", messages=[{"role": "user", "content": "x"}])


def test_openai_client_with_a_key(stack: Stack, ready: dict[str, Any]) -> None:
    with openai.OpenAI(base_url=f"{stack.guarded_url}/v1", api_key=KEY, max_retries=0) as model:
        assert model.models.list().data
    with openai.OpenAI(base_url=f"{stack.guarded_url}/v1", api_key="wrong", max_retries=0) as model, \
            pytest.raises(openai.AuthenticationError):
        model.models.list()


def test_eight_asks_at_once_all_succeed(client: httpx.Client, ready: dict[str, Any]) -> None:
    """Eight asks at once, each from a client that honours Retry-After (as the `openai` client does): the API admits
    what its bounds allow (2 at once, 4 waiting, each waiting at most 2 recent ask times, by default) and tells
    the others when to come back; every one is answered."""
    questions = [QUESTION, "Is aspirin recommended for women?", "warfarin", "atrial fibrillation in women"] * 2
    refusals: list[httpx.Response] = []

    def ask(question: str) -> httpx.Response:
        for _ in range(10):
            response = client.post("/ask", json={"question": question, "mode": "naive"})
            if response.status_code not in (429, 503):
                return response
            refusals.append(response)
            time.sleep(float(response.headers["retry-after"]))
        return response

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(ask, questions))
    assert [r.status_code for r in responses] == [200] * 8, [r.text[:200] for r in responses]
    assert all(r.json()["question"] == q for r, q in zip(responses, questions, strict=True))
    assert all(r.json()["error"]["code"] == "too_busy" for r in refusals), [r.text[:200] for r in refusals]


def test_a_slow_upload_does_not_hold_up_asks(stack: Stack, client: httpx.Client, ready: dict[str, Any], pdf: Any) -> None:
    """An upload whose body trickles in over seconds (a slow network) while questions are asked and answered."""
    boundary = "slowboundary"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.pdf"\r\n'
            "Content-Type: application/pdf\r\n\r\n").encode()
    data = pdf.read_bytes()
    pieces = [data[i:i + len(data) // 20 + 1] for i in range(0, len(data), len(data) // 20 + 1)]

    def body() -> Any:
        yield head
        for piece in pieces:
            time.sleep(0.4)  # ~8 s in all
            yield piece
        yield f"\r\n--{boundary}--\r\n".encode()

    def upload() -> httpx.Response:
        with httpx.Client(base_url=stack.open_url, timeout=120, trust_env=False) as uploader:
            return uploader.post(f"/workspaces/{WORKSPACE}/documents", content=body(),
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})

    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        pending = pool.submit(upload)
        answered = [ask(client)["citations"] for _ in range(2)]
        asked_in = time.monotonic() - started
        assert not pending.done(), f"the upload ended first; asks took {asked_in:.1f} s"
        uploaded = pending.result()
    assert all(answered)
    assert uploaded.status_code == 200 and uploaded.json()["status"] == "duplicate"  # the same PDF, sent slowly
