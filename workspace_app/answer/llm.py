"""The LLM answerer: any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp).

It streams the answer text; the answer service verifies the citations afterwards. Client errors become
`LlmUnavailableError` with a message saying what to do, so the chat stays usable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from workspace_app.models.answers import EvidenceBlock, Turn
from workspace_app.answer.prompts import rewrite_messages, system_prompt, user_prompt
from workspace_app.config import LlmSettings
from workspace_app.errors import LlmUnavailableError


class LlmAnswerer:
    """Writes answers from numbered evidence blocks with a chat model."""

    name = "llm"

    def __init__(self, settings: LlmSettings) -> None:
        self._settings = settings
        self._client: Any = None

    @property
    def client(self) -> Any:
        """The OpenAI client, created on first use."""
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                api_key=self._settings.api_key or "not-needed", base_url=self._settings.base_url,
                timeout=self._settings.timeout_s, max_retries=1,
            )
        return self._client

    def stream(self, question: str, blocks: Sequence[EvidenceBlock], language: str) -> Iterator[str]:
        """Pieces of the answer text as the model writes them."""
        messages = [
            {"role": "system", "content": system_prompt(language)},
            {"role": "user", "content": user_prompt(question, blocks)},
        ]
        with _mapped_errors(self._settings):
            response = self.client.chat.completions.create(
                model=self._settings.model, messages=messages, temperature=0, stream=True,
            )
            for event in response:
                choices = getattr(event, "choices", None) or []
                delta = choices[0].delta.content if choices and choices[0].delta else None
                if delta:
                    yield delta

    def rewrite(self, question: str, history: Sequence[Turn]) -> str:
        """The follow-up question rewritten to stand alone (the question itself when there is no history)."""
        if not history:
            return question
        with _mapped_errors(self._settings):
            response = self.client.chat.completions.create(
                model=self._settings.model, messages=rewrite_messages(question, history), temperature=0,
            )
        text = (response.choices[0].message.content or "").strip() if response.choices else ""
        return text.strip('"“”') or question


@contextmanager
def _mapped_errors(settings: LlmSettings) -> Iterator[None]:
    """Turn the openai client's exceptions into `LlmUnavailableError` (SEE: httpx's map_httpcore_exceptions)."""
    import openai

    try:
        yield
    except openai.OpenAIError as exc:
        raise LlmUnavailableError(_message(exc, settings)) from exc


def _message(exc: Exception, settings: LlmSettings) -> str:
    import openai

    where = settings.base_url or "the OpenAI API"
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return f"The language model at {where} rejected the API key. Check OPENAI_API_KEY, then ask again."
    if isinstance(exc, openai.APITimeoutError):
        return f"The language model at {where} did not answer within {settings.timeout_s:g} s. Ask again, or raise WORKSPACE_LLM__TIMEOUT_S."
    if isinstance(exc, openai.APIConnectionError):
        return f"The language model at {where} cannot be reached. Check OPENAI_BASE_URL and that the server runs, then ask again."
    if isinstance(exc, openai.RateLimitError):
        return f"The language model at {where} is rate-limiting requests. Wait a moment and ask again."
    if isinstance(exc, openai.NotFoundError):
        return f"The language model at {where} does not know the model '{settings.model}'. Check WORKSPACE_LLM__MODEL."
    if isinstance(exc, openai.APIStatusError):
        return f"The language model at {where} answered with an error (HTTP {exc.status_code}). Ask again later."
    return f"The language model at {where} failed ({type(exc).__name__}). Ask again later."
