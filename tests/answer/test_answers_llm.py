"""The LLM answerer against a local server speaking the OpenAI chat-completions protocol (streaming too):
citations are checked after generation, unknown [n] removed, unsupported sentences flagged, errors explained."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, fake_openai_server

from workspace_app.answer.llm import LlmAnswerer
from workspace_app.answer.phrases import REFUSALS
from workspace_app.answer.service import AnswerService
from workspace_app.errors import LlmUnavailableError
from workspace_app.models.answers import Answer, Turn

SYNCOPE = "syncope-p8-9.pdf"
QUESTION = "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?"
SUPPORTED = (
    "Carotid sinus hypersensitivity is present when a pause of 3 s or more and/or a decrease of systolic "
    "pressure of 50 mm Hg or more occurs upon stimulation of the carotid sinus [{n}]."
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Any:
    """A workspace holding pages 8-9 of the syncope guideline (definitions, epidemiology) as pages 1-2."""
    built = build(tmp_path_factory.mktemp("llm") / "data")
    built.workspaces.create("LLM")
    report = built.documents.ingest("LLM", excerpt("shen-2017-syncope.pdf", 8, 9), SYNCOPE)
    assert report.status == "ready", report
    return built


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as server:
        yield server


def llm_answers(service: Any, url: str, blocks: int = 3, key: str = "test-key") -> AnswerService:
    """An answer service whose LLM is the fake server, seeing `blocks` evidence blocks."""
    settings = service.settings.llm.model_copy(update={"api_key": key, "base_url": url, "timeout_s": 5})
    answers = AnswerService(
        settings=service.settings, catalog=service.catalog, search=service.search, embedder=service.embedder,
        graph=service.graph, source=service.answers.source,
        llm=LlmAnswerer(settings), domain=service.domain,
    )
    answers.evidence.blocks = blocks
    assert answers.answerer_name == "llm"
    return answers


def block_number_of(request: dict[str, Any], needle: str) -> int:
    """The number of the evidence block (in the prompt the server received) whose text contains `needle`."""
    prompt = request["body"]["messages"][-1]["content"]
    for number, text in _blocks(prompt):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} is in no block")


def _blocks(prompt: str) -> list[tuple[int, str]]:
    found = []
    for part in prompt.split("Evidence blocks:\n", 1)[1].split("\n\n["):
        number, _, rest = part.lstrip("[").partition("]")
        found.append((int(number), rest))
    return found


def supported_reply(request: dict[str, Any]) -> str:
    return SUPPORTED.format(n=block_number_of({"body": request}, "Carotid sinus hypersensitivity is present"))


def test_streamed_answer_is_verified_and_renumbered(service: Any, fake: FakeOpenAI) -> None:
    fake.replies = [supported_reply]
    answers = llm_answers(service, fake.url)
    events = list(answers.ask_stream("LLM", QUESTION))
    pieces, answer = events[:-1], events[-1]
    assert isinstance(answer, Answer)
    assert len(pieces) > 3 and all(isinstance(p, str) for p in pieces), "the answer arrives in pieces"
    assert answer.answerer == "llm" and answer.grounded and not answer.refused
    assert answer.support == "confident" and answer.support_note == "", "every sentence carries a verified citation"
    assert answer.text.endswith("carotid sinus [1].")
    [citation] = answer.citations
    assert citation.n == 1 and citation.document == SYNCOPE and citation.page_start == 1
    assert "Carotid sinus hypersensitivity is present" in citation.quote
    assert citation.rects and all(r.page == 1 for r in citation.rects)
    request = fake.requests[-1]
    assert request["path"].endswith("/chat/completions") and request["body"]["stream"] is True
    assert request["authorization"] == "Bearer test-key"
    system = request["body"]["messages"][0]["content"]
    assert "ONLY" in system and REFUSALS["en"] in system
    assert request["body"]["model"] == "gpt-4.1-mini"
    # the 3 direct hits the service asked for, then graph expansion (adjacent passages), as in every mode
    assert len(_blocks(request["body"]["messages"][-1]["content"])) == 3 + answers.modes.options.expansion


def test_citation_of_a_block_that_does_not_exist_is_removed(service: Any, fake: FakeOpenAI) -> None:
    def reply(request: dict[str, Any]) -> str:
        return supported_reply(request) + " Tilt-table testing has a diagnostic yield of 90% in every patient [9]."

    fake.replies = [reply]
    answer = llm_answers(service, fake.url, blocks=3).ask("LLM", QUESTION)
    assert "[9]" not in answer.text
    assert [c.n for c in answer.citations] == [1]
    assert not answer.grounded, "the sentence that cited [9] is left without support"
    assert answer.unsupported == ["Tilt-table testing has a diagnostic yield of 90% in every patient."]
    assert "not verified" in answer.text


def test_sentence_its_block_does_not_support_is_flagged(service: Any, fake: FakeOpenAI) -> None:
    def reply(request: dict[str, Any]) -> str:
        n = block_number_of({"body": request}, "Carotid sinus hypersensitivity is present")
        return supported_reply(request) + f" Aspirin 500 mg twice daily cures carotid sinus syndrome [{n}]."

    fake.replies = [reply]
    answer = llm_answers(service, fake.url).ask("LLM", QUESTION)
    assert not answer.grounded
    assert answer.support == "partial" and "only partly cover" in answer.support_note
    assert answer.unsupported == ["Aspirin 500 mg twice daily cures carotid sinus syndrome."]
    assert len(answer.citations) == 1, "only the supported sentence keeps a citation"
    first, second = answer.text.split(". ", 1)
    assert "[1]" in first and "[1]" not in second and "not verified" in second


def test_refusal_reply_becomes_a_refusal_in_the_question_language(service: Any, fake: FakeOpenAI) -> None:
    fake.replies = [REFUSALS["zh"]]
    answer = llm_answers(service, fake.url).ask("LLM", "替奈普酶应如何按体重给药？")
    assert answer.refused and answer.language == "zh" and answer.text == REFUSALS["zh"]
    assert answer.citations == [] and "中文" in fake.requests[-1]["body"]["messages"][0]["content"]
    assert answer.disclaimer and "医疗" in answer.disclaimer


def test_follow_up_is_rewritten_with_the_last_three_turns(service: Any, fake: FakeOpenAI) -> None:
    fake.replies = [QUESTION, supported_reply]
    history = [Turn(f"old question {i}", f"old answer {i}") for i in range(5)]
    answer = llm_answers(service, fake.url).ask("LLM", "And what counts as hypersensitivity there?", history)
    rewrite, answering = fake.requests[-2:]
    assert rewrite["body"].get("stream") is not True
    conversation = rewrite["body"]["messages"][-1]["content"]
    assert "old question 4" in conversation and "old question 2" in conversation and "old question 1" not in conversation
    assert QUESTION in answering["body"]["messages"][-1]["content"]
    assert answer.standalone_question == QUESTION and answer.question == "And what counts as hypersensitivity there?"
    assert answer.grounded


def test_rejected_key_is_a_clear_error(service: Any, fake: FakeOpenAI) -> None:
    fake.status = 401
    with pytest.raises(LlmUnavailableError) as caught:
        llm_answers(service, fake.url).ask("LLM", QUESTION)
    assert "API key" in caught.value.user_message and caught.value.retryable


def test_server_down_is_a_clear_error(service: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LlmUnavailableError) as caught:
        llm_answers(service, f"http://127.0.0.1:{port}/v1").ask("LLM", QUESTION)
    assert "cannot be reached" in caught.value.user_message


def test_server_error_status_is_a_clear_error(service: Any, fake: FakeOpenAI) -> None:
    fake.status = 500
    with pytest.raises(LlmUnavailableError) as caught:
        llm_answers(service, fake.url).ask("LLM", QUESTION)
    assert "error" in caught.value.user_message
