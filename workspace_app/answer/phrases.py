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


def refusal_text(language: str) -> str:
    """The refusal in the question's language."""
    return REFUSALS.get(language, REFUSALS["en"])


def disclaimer_text(language: str) -> str:
    """The short medical disclaimer shown under every answer."""
    return DISCLAIMERS.get(language, DISCLAIMERS["en"])


def is_refusal(text: str) -> bool:
    """Whether a generated answer is (only) one of our refusals."""
    stripped = re.sub(r"\s+", " ", text).strip()
    return any(stripped.startswith(refusal) for refusal in REFUSALS.values())
