"""Which characters are Chinese: the CJK ranges, defined once, and the predicates every module asks them through.

`IDEOGRAPHS` is the one definition of a Chinese character: the CJK Unified Ideographs, Extension A and the
Compatibility Ideographs. `WIDE_CHARS` adds the CJK punctuation (、。「」) and the fullwidth forms (，：（）) that
Chinese text is set with: layout never puts a space next to one of them when it joins lines. `WIDE_PUNCTUATION` is
those marks alone (a mark set half-width keeps a full-width box: the reader joins pieces of a line overlapping there).

The ranges are character-class bodies, for building patterns: `re.compile(f"[{IDEOGRAPHS}A-Za-z]")`.

SEE: https://www.unicode.org/charts/ (CJK Unified Ideographs, Extension A, Compatibility Ideographs,
CJK Symbols and Punctuation, Halfwidth and Fullwidth Forms)
"""

from __future__ import annotations

import re

IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_PUNCTUATION = "\u3000-\u303f"
FULLWIDTH_FORMS = "\uff00-\uffef"
FULLWIDTH_PUNCTUATION = "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"  # fullwidth, not letters/digits
WIDE_CHARS = CJK_PUNCTUATION + IDEOGRAPHS + FULLWIDTH_FORMS

IDEOGRAPH = re.compile(f"[{IDEOGRAPHS}]")
IDEOGRAPH_RUN = re.compile(f"[{IDEOGRAPHS}]+")
WIDE_CHAR = re.compile(f"[{WIDE_CHARS}]")
WIDE_PUNCTUATION = re.compile(f"[{CJK_PUNCTUATION}{FULLWIDTH_PUNCTUATION}]")  # 、。「」，：（）


def is_cjk(text: str) -> bool:
    """Whether the text is Chinese ideographs only (and not empty)."""
    return bool(IDEOGRAPH_RUN.fullmatch(text))


def has_cjk(text: str) -> bool:
    """True when the text holds a Chinese character."""
    return bool(IDEOGRAPH.search(text))


def is_mostly_cjk(text: str) -> bool:
    """Whether most letters of the text are CJK characters.

    Counts the wide set, as query routing always has: fullwidth Latin letters (ＬＤＬ, typed with a Chinese
    input method) count as Chinese here, unlike in `workspace_app.text.language.detect_language`.
    """
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(1 for ch in letters if WIDE_CHAR.match(ch)) * 2 > len(letters)
