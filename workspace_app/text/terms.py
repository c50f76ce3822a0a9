"""Content terms of questions and evidence, and how much of a question a piece of evidence covers.

English words are lower-cased and reduced by a light suffix stemmer (the same on both sides, so "fainters"
meets "fainting"); Chinese is segmented by jieba (through the keyword index's analyzer, `text.analyzer`) and a
Chinese term counts as covered when it occurs anywhere in the evidence, which makes coverage robust to jieba
cutting the evidence differently from the question.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

from workspace_app.text.analyzer import STOPWORDS, analyze
from workspace_app.text.cjk import has_cjk

# Words of how a question is asked rather than what it is about.
QUESTION_WORDS = frozenset(
    """about according advise advised also any aim best do does guideline guidelines give given go good i me my
    our recommend recommended recommendation recommends routinely say says should tell us use used using want
    we what which who within would year years level evidence class cor loe graded grade support supports
    he him his himself she her hers herself they them their theirs themselves
    指南 推荐 可以 一般 大概 判断 最好 各是 还要 这条""".split()
)
# The morphemes Chinese questions ask with: a word holding one (哪一年, 什么样, 多长时间, 怎么办, 是否) says how
# the question asks, never what the sources say, however jieba cuts it.
_ZH_INTERROGATIVES = ("哪", "什么", "多少", "多久", "多长", "多大", "怎", "如何", "是否", "能否", "谁", "何时", "为何",
                      "几次", "几类", "几种", "几个")
_IRREGULAR = {"women": "woman", "men": "man", "children": "child", "feet": "foot", "wk": "week", "wks": "week",
              "mo": "month", "mos": "month", "yr": "year", "yrs": "year", "min": "minute", "mins": "minute"}
_SUFFIXES = ("ational", "ations", "ation", "ments", "ment", "ness", "ings", "ing", "ers", "er", "ies", "ied", "ly",
             "ed", "es", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude English stem: strip one common suffix from words longer than four letters (remembered: every ask
    stems the words of dozens of evidence sentences)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 4 or not word.isascii() or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            if suffix == "s" and word[-2] in "sui":  # sinus, class, diagnosis keep their s
                return word
            return word[: -len(suffix)]
    return word


def normalize(text: str) -> str:
    """NFKC, lower case (ligatures such as ﬁ become fi)."""
    return unicodedata.normalize("NFKC", text).lower()


def is_cjk_term(term: str) -> bool:
    """Whether a term is Chinese."""
    return has_cjk(term)


def is_interrogative(term: str) -> bool:
    """Whether a Chinese word is how a question asks (it holds an interrogative morpheme)."""
    return is_cjk_term(term) and any(morpheme in term for morpheme in _ZH_INTERROGATIVES)


def content_terms(text: str, *, drop_question_words: bool = False) -> dict[str, str]:
    """Distinct content terms of a text in order: stemmed key -> the word as written (for the keyword index)."""
    seen: dict[str, str] = {}
    for term in analyze(normalize(text)):
        if term in STOPWORDS or (drop_question_words and (term in QUESTION_WORDS or is_interrogative(term))):
            continue
        if len(term) < 2 and not term.isdigit() and not is_cjk_term(term):
            continue
        seen.setdefault(term if is_cjk_term(term) else stem(term), term)
    return seen


@lru_cache(maxsize=8192)
def evidence_terms(text: str) -> frozenset[str]:
    """The stemmed English terms of an evidence text (Chinese is matched by substring instead).

    Remembered: an answer measures the same evidence sentences against the question and each of its parts.
    """
    return frozenset(stem(term) for term in analyze(normalize(text)) if not is_cjk_term(term))


@lru_cache(maxsize=8192)
def loose(text: str) -> str:
    """Letters, digits and CJK only, NFKC and lower case: for tolerant substring matching."""
    return "".join(ch for ch in normalize(text) if ch.isalnum())


class Coverage:
    """IDF-weighted share of a question's content terms found in a piece of evidence.

    `short_forms`: short form (stemmed, "sfsr") -> the question's terms its long form spells ("san", "francisco",
    "syncop", "rule"): a text using the short form covers them.
    """

    def __init__(
        self, terms: Iterable[str], idf: Mapping[str, float], short_forms: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.terms = list(terms)
        self.weights = {term: idf.get(term, 1.0) for term in self.terms}
        self.total = sum(self.weights.values()) or 1.0
        self.short_forms = dict(short_forms or {})

    def of(self, text: str) -> float:
        """Share of the question's weight covered by the text (0..1)."""
        if not self.terms:
            return 0.0
        words = evidence_terms(text)
        flat = loose(text)
        found = {t for t in self.weights if present(t, words, flat)}
        for short, spelled in self.short_forms.items():
            if short in words:
                found.update(t for t in spelled if t in self.weights)
        return sum(self.weights[t] for t in found) / self.total

    def missing(self, text: str) -> list[str]:
        """The question's terms the text lacks."""
        words = evidence_terms(text)
        flat = loose(text)
        return [t for t in self.terms if not present(t, words, flat)]


def present(term: str, words: frozenset[str], flat: str) -> bool:
    """Chinese terms and longer English stems also match inside the loose text (end-of-line hyphens split words)."""
    if is_cjk_term(term) or len(term) >= 6:
        return in_loose(term, flat) or term in words
    return term in words


def in_loose(key: str, flat: str) -> bool:
    """Whether a loose key ("musclestrengtheningactivity") is in a loose text, its plural too ("...activities";
    an "-s" plural contains the key already)."""
    return key in flat or key.endswith("y") and f"{key[:-1]}ies" in flat


def idf_weights(terms: Iterable[str], document_frequency: Callable[[str], int], total: int) -> dict[str, float]:
    """Smoothed inverse document frequency per term (a term absent from the workspace weighs the most)."""
    return {term: math.log((total + 1) / (document_frequency(term) + 0.5)) for term in terms}
