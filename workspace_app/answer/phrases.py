"""The fixed texts an answer says in the question's language: refusal, disclaimer, answer lead-ins, notes.

Only English and Chinese are told apart (`workspace_app.text.language.detect_language`; the corpus is English
and Chinese guidelines); any other language gets the English texts.
"""

from __future__ import annotations

import re

REFUSALS = {
    "zh": "根据提供的资料，我无法回答这个问题。",
    "en": "The provided sources do not answer this question.",
}
DISCLAIMERS = {
    "zh": "仅供临床参考，不能替代专业医疗判断；请对照原文核实每条引用。",
    "en": "For clinical reference only; not a substitute for professional judgement. Check each citation against its source.",
}
LEADS = {
    "zh": "资料中的相关原文：",
    "en": "The sources say:",
}
UNSUPPORTED_NOTES = {
    "zh": "（此句未能在所引资料中得到验证）",
    "en": "(not verified against the cited source)",
}
PARTIAL_NOTES = {
    "zh": "资料只部分涵盖这个问题：请对照所引原文核实。",
    "en": "The sources only partly cover this question: check the cited passages before relying on the answer.",
}


QUOTED_IN = {
    "zh": "以下为{source}原文引用（未翻译）：",
    "en": "Quoted from the {source} source, in its own language (not translated):",
}
LANGUAGE_NAMES = {"zh": {"zh": "中文", "en": "英文"}, "en": {"zh": "Chinese", "en": "English"}}


def quoted_in_text(language: str, source_language: str) -> str:
    """The line before quotes in another language than the question's: which language, and that it is verbatim."""
    names = LANGUAGE_NAMES.get(language, LANGUAGE_NAMES["en"])
    lead = QUOTED_IN.get(language, QUOTED_IN["en"])
    return lead.format(source=names.get(source_language, source_language))


def refusal_text(language: str) -> str:
    """The refusal in the question's language."""
    return REFUSALS.get(language, REFUSALS["en"])


def disclaimer_text(language: str) -> str:
    """The short medical disclaimer shown under every answer."""
    return DISCLAIMERS.get(language, DISCLAIMERS["en"])


def partial_text(language: str) -> str:
    """What an answer the sources only partly support says before its sentences."""
    return PARTIAL_NOTES.get(language, PARTIAL_NOTES["en"])


def is_refusal(text: str) -> bool:
    """Whether a generated answer is (only) one of our refusals."""
    stripped = re.sub(r"\s+", " ", text).strip()
    return any(stripped.startswith(refusal) for refusal in REFUSALS.values())
