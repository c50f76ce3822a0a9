"""The one client of an OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp).

Built from `LlmSettings`; the openai client is created on first use. It sends messages and returns the reply's
text, whole or streamed, and turns every openai client exception into `LlmUnavailableError` with a message
saying what to do. The prompts belong to its users: the answerer (`answer/llm.py`) and graph extraction
(`graph/llm.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from workspace_app.config import LlmSettings
from workspace_app.errors import LlmUnavailableError

Messages = Sequence[Mapping[str, str]]


class LlmClient:
    """Chat completions at temperature 0 with the configured model, errors mapped to ours."""

    def __init__(self, settings: LlmSettings) -> None:
        self._settings = settings
        self._client: Any = None

    @property
    def client(self) -> Any:
        """The openai client, created on first use."""
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                api_key=self._settings.api_key or "not-needed", base_url=self._settings.base_url,
                timeout=self._settings.timeout_s, max_retries=1,
            )
        return self._client

    def complete(self, messages: Messages) -> str:
        """The reply's text ("" when the server returns no choice)."""
        with _mapped_errors(self._settings):
            response = self.client.chat.completions.create(model=self._settings.model, messages=messages, temperature=0)
        return (response.choices[0].message.content or "") if response.choices else ""

    def stream(self, messages: Messages) -> Iterator[str]:
        """Pieces of the reply's text as the model writes them."""
        with _mapped_errors(self._settings):
            response = self.client.chat.completions.create(
                model=self._settings.model, messages=messages, temperature=0, stream=True,
            )
            for event in response:
                choices = getattr(event, "choices", None) or []
                delta = choices[0].delta.content if choices and choices[0].delta else None
                if delta:
                    yield delta


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
