"""The LLM answerer: answers and follow-up rewrites written by a chat model from numbered evidence blocks.

It streams the answer text through the one OpenAI-compatible client (`workspace_app.llm`); the answer service
verifies the citations afterwards. Client errors arrive as `LlmUnavailableError` with a message saying what to
do, so the chat stays usable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from workspace_app.answer.prompts import rewrite_messages, system_prompt, user_prompt
from workspace_app.config import LlmSettings
from workspace_app.llm import LlmClient
from workspace_app.models.answers import EvidenceBlock, Turn


class LlmAnswerer:
    """Writes answers from numbered evidence blocks with a chat model."""

    name = "llm"

    def __init__(self, settings: LlmSettings) -> None:
        self._llm = LlmClient(settings)

    def stream(self, question: str, blocks: Sequence[EvidenceBlock], language: str) -> Iterator[str]:
        """Pieces of the answer text as the model writes them."""
        messages = [
            {"role": "system", "content": system_prompt(language)},
            {"role": "user", "content": user_prompt(question, blocks)},
        ]
        yield from self._llm.stream(messages)

    def rewrite(self, question: str, history: Sequence[Turn]) -> str:
        """The follow-up question rewritten to stand alone (the question itself when there is no history)."""
        if not history:
            return question
        text = self._llm.complete(rewrite_messages(question, history)).strip()
        return text.strip('"“”') or question
