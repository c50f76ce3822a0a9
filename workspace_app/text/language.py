"""The language a text is written in, as answers are given in it.

Only English and Chinese are told apart (the corpus is English and Chinese guidelines); anything that is
not mostly CJK counts as English.
"""

from __future__ import annotations

from workspace_app.text.cjk import IDEOGRAPH


def detect_language(text: str) -> str:
    """'zh' when CJK characters make up at least a third of the letters, else 'en'."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if IDEOGRAPH.match(ch))
    return "zh" if cjk * 3 >= len(letters) else "en"
