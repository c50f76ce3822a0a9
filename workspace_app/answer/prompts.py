"""Prompt texts for the LLM answerer and the follow-up rewriter.

SEE: ../shared/seeds/000 (strict grounding, refusal text) and 001 (guideline assistant: population, class of
recommendation, level of evidence).
"""

from __future__ import annotations

from collections.abc import Sequence

from workspace_app.answer.phrases import refusal_text
from workspace_app.models.answers import EvidenceBlock, Turn

SYSTEM = """You are a clinical guideline assistant for clinicians. Follow these rules strictly:
1. Use ONLY the numbered evidence blocks given with the question. Never use outside knowledge.
2. Put the block number in square brackets, like [2], right after EVERY sentence that states a fact.
   Cite only block numbers that exist. One sentence, one claim; cite every block the sentence relies on.
3. Keep numbers, doses, thresholds and units exactly as the block states them.
4. When a block states them, name the population, the Class of Recommendation and the Level of Evidence.
5. If the blocks do not answer the question, reply with exactly this sentence and nothing else:
   "{refusal}"
6. Answer in {language_name}, the language of the question, in at most 6 short sentences. No preamble, no
   disclaimer, no list of sources (the application adds those)."""

USER = """Question: {question}

Evidence blocks:
{blocks}"""

REWRITE = """Rewrite the last question so that it can be understood without the conversation: resolve pronouns
and implied subjects from the earlier turns. Keep its language and meaning. Reply with the rewritten question
only. If it already stands alone, repeat it unchanged."""

LANGUAGE_NAMES = {"zh": "Chinese (简体中文)", "en": "English"}


def system_prompt(language: str) -> str:
    """The answerer's system message for a question in `language`."""
    return SYSTEM.format(refusal=refusal_text(language), language_name=LANGUAGE_NAMES.get(language, "English"))


def format_block(block: EvidenceBlock) -> str:
    """One numbered evidence block: where it comes from, then its text."""
    chunk = block.chunk
    pages = f"p. {chunk.page_start}" + (f"-{chunk.page_end}" if chunk.page_end != chunk.page_start else "")
    header = f"[{block.n}] {block.document_name} | {chunk.section or 'no section'} | {pages}"
    if block.grading:
        header += f" | {block.grading}"
    return f"{header}\n{chunk.text.strip()}"


def user_prompt(question: str, blocks: Sequence[EvidenceBlock]) -> str:
    """The question with its numbered evidence blocks."""
    return USER.format(question=question, blocks="\n\n".join(format_block(b) for b in blocks))


def rewrite_messages(question: str, history: Sequence[Turn]) -> list[dict[str, str]]:
    """Messages asking to rewrite a follow-up question using the last three turns."""
    turns = "\n".join(f"Q: {t.question}\nA: {t.answer[:600]}" for t in history[-3:])
    return [
        {"role": "system", "content": REWRITE},
        {"role": "user", "content": f"Conversation:\n{turns}\n\nLast question: {question}"},
    ]
