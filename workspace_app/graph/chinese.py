"""Chinese concept matching: lexicon names and terms the document pairs with English ("射血分数保留的心力衰竭
（heart failure with preserved ejection fraction，HFpEF）"), found in jieba words (with the lexicon as a user
dictionary, in a tokenizer of our own so the search index's segmentation is untouched), plus suffix patterns
(…病, …综合征, …衰竭, …术, …沙坦).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workspace_app.graph.english import Match
from workspace_app.graph.junk import ZH_BAD_PREFIXES, ZH_CUT, ZH_STOP, is_junk_chinese
from workspace_app.graph.lexicon import Concept, Lexicon
from workspace_app.text.cjk import IDEOGRAPHS, is_cjk

_RUN_CHARS = f"{IDEOGRAPHS}A-Za-z0-9\u0370-\u03ff\u2160-\u216b\\-"
# A run of Chinese text with the Latin, Greek and Roman-numeral pieces inside terms (β受体阻滞剂, P2Y12 受体);
# single spaces are kept in the run because the PDFs turn line breaks inside words into spaces.
_CJK_RUN = re.compile(rf"[{_RUN_CHARS}]*[{IDEOGRAPHS}](?:[{_RUN_CHARS}]| (?=[{_RUN_CHARS}]))*")
_PAIR = re.compile(
    rf"([{IDEOGRAPHS}A-Za-z0-9\-]{{2,30}}?)\s*[（(]\s*([A-Za-z][A-Za-z0-9 ,'\-/]{{3,120}}?)\s*"
    r"(?:[,，;；]\s*([A-Za-z][A-Za-z0-9\-/]{1,12}))?\s*[）)]"
)
_LOCK = threading.Lock()
_NOT_A_PROCEDURE = ("技术", "学术", "艺术", "战术", "算术")  # "…术" words that are not operations
ZH_SUFFIXES = (
    ("综合征", "disease"), ("心律失常", "disease"), ("衰竭", "disease"), ("梗死", "disease"), ("狭窄", "disease"),
    ("阻滞", "disease"), ("反流", "disease"), ("栓塞", "disease"), ("血症", "disease"), ("心肌病", "disease"),
    ("病", "disease"), ("症", "disease"), ("炎", "disease"), ("瘤", "disease"), ("出血", "disease"),
    ("沙坦", "drug"), ("普利", "drug"), ("洛尔", "drug"), ("地平", "drug"), ("他汀", "drug"), ("格列净", "drug"),
    ("沙班", "drug"), ("肝素", "drug"), ("单抗", "drug"), ("抑制剂", "drug class"), ("拮抗剂", "drug class"),
    ("阻滞剂", "drug class"), ("激动剂", "drug class"),
    ("消融术", "procedure"), ("植入术", "procedure"), ("置换术", "procedure"), ("修复术", "procedure"),
    ("封堵术", "procedure"), ("介入治疗", "procedure"), ("手术", "procedure"), ("术", "procedure"),
    ("造影", "test"), ("显像", "test"), ("超声", "test"), ("评分", "test"), ("心电图", "test"), ("监测", "test"),
    ("起搏器", "device"), ("除颤器", "device"), ("支架", "device"),
)


@dataclass(frozen=True)
class Pairing:
    """A Chinese term written with its English long form and, optionally, an abbreviation."""

    chinese: str
    english: str
    abbreviation: str | None


@lru_cache(maxsize=1)
def _base_tokenizer() -> Any:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    with _LOCK:
        tokenizer.initialize()
    return tokenizer


class ChineseMatcher:
    """Finds Chinese concepts with jieba words, the lexicon and the document's own pairings."""

    def __init__(self, lexicon: Lexicon, extra: Mapping[str, Concept] | None = None) -> None:
        self._terms = {**lexicon.chinese, **(extra or {})}
        self._longest = max((len(term) for term in self._terms), default=1)
        self._tokenizer = _tokenizer_with(tuple(sorted(self._terms)))

    def find(self, text: str) -> list[Match]:
        """Non-overlapping matches in text order."""
        found: list[Match] = []
        for run in _CJK_RUN.finditer(text):
            words = [word for word in self._tokenizer.tokenize(run.group(0)) if word[0].strip()]
            found.extend(self._in_words(run.start(), words))
        return found

    def _in_words(self, offset: int, words: list[tuple[str, int, int]]) -> Iterable[Match]:
        index = 0
        while index < len(words):
            match, width = self._at(offset, words, index)
            if match is not None:
                yield match
            index += width

    def _at(self, offset: int, words: list[tuple[str, int, int]], index: int) -> tuple[Match | None, int]:
        for width in range(min(4, len(words) - index), 0, -1):
            term = "".join(word for word, _, _ in words[index : index + width])
            if len(term) > self._longest and width > 1:
                continue
            concept = self._terms.get(term) or (_pattern_concept(term) if width == 1 else None)
            if concept is not None:
                start, end = offset + words[index][1], offset + words[index + width - 1][2]
                return Match(start, end, term, concept), width
        return None, 1


def _pattern_concept(term: str) -> Concept | None:
    if len(term) < 3 or len(term) > 12 or is_junk_chinese(term) or not is_cjk(term):
        return None
    if term.endswith(_NOT_A_PROCEDURE):
        return None
    for suffix, kind in ZH_SUFFIXES:
        if term.endswith(suffix) and len(term) > len(suffix):
            return Concept(term, term, kind, "pattern")
    return None


@lru_cache(maxsize=2)
def _tokenizer_with(terms: tuple[str, ...]) -> Any:
    """A jieba tokenizer knowing these terms (built from a shared base so the dictionary loads once)."""
    import copy

    base = _base_tokenizer()
    with _LOCK:
        tokenizer = copy.copy(base)
        tokenizer.FREQ = dict(base.FREQ)
        tokenizer.user_word_tag_tab = {}
        for term in terms:
            if is_cjk(term):
                tokenizer.add_word(term, freq=max(10000, len(term) * 5000))
    return tokenizer


def find_pairings(text: str) -> list[Pairing]:
    """Chinese terms written with their English long form: 中文（English long form, ABBR）."""
    found = []
    for match in _PAIR.finditer(text):
        chinese = _trailing_term(match.group(1))
        english = match.group(2).strip(" ,-")
        if chinese and len(english.split()) >= 1 and not english.isupper():
            found.append(Pairing(chinese, english, match.group(3)))
    return found


def _trailing_term(run: str) -> str | None:
    """The concept at the end of a Chinese run: its last jieba words, without leading function words."""
    words = [word for word, _, _ in _base_tokenizer().tokenize(run)]
    cuts = [index for index, word in enumerate(words) if word in ZH_CUT]
    if cuts:
        words = words[cuts[-1] + 1 :]
    while len(words) > 1 and (words[0] in ZH_STOP or words[0].startswith(ZH_BAD_PREFIXES)):
        words = words[1:]
    term = "".join(words[-6:])
    while len(term) > 16 and len(words) > 1:
        words = words[1:]
        term = "".join(words[-6:])
    return term if len(term) >= 2 and is_cjk(term) and not is_junk_chinese(term) else None
