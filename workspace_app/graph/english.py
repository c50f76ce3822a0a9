"""English concept matching: lexicon forms (longest first), abbreviations, and the domain pack's patterns (drug-name
endings, head nouns: "... stenosis", "... therapy", "... score") over word tokens of one text.

Matches never overlap: the lexicon and abbreviations claim their tokens first, patterns take what is left.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from workspace_app.domain.clinical import CONCEPTS
from workspace_app.domain.pack import ConceptPatterns
from workspace_app.graph.junk import (
    GENERIC_MODIFIERS,
    NOUNS_IN_ING,
    STOPWORDS,
    VAGUE_HEADS,
    VERBS,
    is_junk_phrase,
)
from workspace_app.graph.lexicon import SAFE_SHORT, Concept, Lexicon, case_key, normalize_key, singular

_TOKEN = re.compile(r"[^\W_]+")
_JOINER = re.compile(r"[\s\-‐‑–/]*")
_MAX_ABBREVIATION_WORDS = 4



@dataclass(frozen=True)
class Match:
    """A concept found at [start, end) of the text, as written there."""

    start: int
    end: int
    surface: str
    concept: Concept


class EnglishMatcher:
    """Finds lexicon concepts, defined abbreviations and pattern concepts in English text."""

    def __init__(
        self, lexicon: Lexicon, defined: Mapping[str, Concept] | None = None, forms: Mapping[str, Concept] | None = None,
        patterns: ConceptPatterns = CONCEPTS,
    ) -> None:
        """`patterns`: the domain pack's (the clinical pack's, as the lexicon defaults to its lexicon)."""
        self._lexicon = lexicon
        self._concepts = patterns
        self._head_types = patterns.head_types
        self._defined = dict(defined or {})
        self._forms = {**lexicon.forms, **(forms or {})}
        self._first = lexicon.first_words() | {key.split()[0] for key in forms or {}}
        self._max_words = max([lexicon.max_words, *(len(key.split()) for key in forms or {})])

    def find(self, text: str) -> list[Match]:
        """Non-overlapping matches in text order."""
        tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text) if m.group(0).isascii()]
        lower = [token[2].lower() for token in tokens]
        found: list[Match] = []
        taken = [False] * len(tokens)
        index = 0
        while index < len(tokens):
            match, width = self._lexical(text, tokens, lower, index)
            if match is None:
                index += 1
                continue
            found.append(match)
            for j in range(index, index + width):
                taken[j] = True
            index += width
        found.extend(self._patterns(text, tokens, lower, taken))
        return sorted(found, key=lambda m: m.start)

    def _lexical(
        self, text: str, tokens: list[tuple[int, int, str]], lower: list[str], index: int
    ) -> tuple[Match | None, int]:
        limit = min(max(self._max_words, _MAX_ABBREVIATION_WORDS), len(tokens) - index)
        for width in range(limit, 0, -1):
            last = index + width - 1
            if width > 1 and not _joined(text, tokens, index, last):
                continue
            concept = self._abbreviation(tokens, index, width)
            if concept is None and width <= self._max_words and (lower[index] in self._first or (width == 1 and singular(lower[index]) in self._first)):
                key = " ".join([*lower[index:last], singular(lower[last])])
                concept = self._forms.get(key)
            if concept is not None:
                start, end = tokens[index][0], tokens[last][1]
                return Match(start, end, text[start:end], concept), width
        return None, 1

    def _abbreviation(self, tokens: list[tuple[int, int, str]], index: int, width: int) -> Concept | None:
        words = [token[2] for token in tokens[index : index + width]]
        if not any(ch.isupper() for ch in words[0]):
            return None
        key = case_key(" ".join(words))
        if key in self._defined:
            return self._defined[key]
        concept = self._lexicon.abbreviations.get(key)
        if concept is None or (len(key.replace(" ", "")) <= 2 and key not in SAFE_SHORT):
            return None
        return concept

    def _patterns(
        self, text: str, tokens: list[tuple[int, int, str]], lower: list[str], taken: list[bool]
    ) -> list[Match]:
        found = []
        for index, word in enumerate(lower):
            if taken[index]:
                continue
            if _is_drug_name(tokens[index][2], word, self._concepts):
                found.append(self._make(text, tokens, index, index, "drug"))
                continue
            kind = self._head_types.get(singular(word))
            if kind is None:
                continue
            first = _modifiers_start(text, tokens, lower, taken, index)
            # A phrase starting inside a hyphenated compound ("first-line therapy") is a fragment.
            if first < index and not text[: tokens[first][0]].rstrip(" ").endswith(("-", "/")):
                match = self._make(text, tokens, first, index, kind)
                if not is_junk_phrase(match.concept.key):
                    found.append(match)
        return found

    @staticmethod
    def _make(text: str, tokens: list[tuple[int, int, str]], first: int, last: int, kind: str) -> Match:
        start, end = tokens[first][0], tokens[last][1]
        key = normalize_key(text[start:end])
        return Match(start, end, text[start:end], Concept(key, key, kind, "pattern"))


def _joined(text: str, tokens: list[tuple[int, int, str]], first: int, last: int) -> bool:
    """True when the tokens first..last are separated only by spaces, hyphens or slashes."""
    return all(
        _JOINER.fullmatch(text[tokens[j][1] : tokens[j + 1][0]]) is not None and "\n\n" not in text[tokens[j][1] : tokens[j + 1][0]]
        for j in range(first, last)
    )


def _is_drug_name(token: str, word: str, patterns: ConceptPatterns) -> bool:
    # Lower case only: capitalised words with these endings are mostly author names (Ciccarone).
    return (
        bool(patterns.drug_suffixes) and len(word) >= 7 and token.isalpha() and token.islower()
        and word.endswith(patterns.drug_suffixes) and word not in patterns.not_drugs and word not in STOPWORDS
    )


def _modifiers_start(
    text: str, tokens: list[tuple[int, int, str]], lower: list[str], taken: list[bool], head: int
) -> int:
    """Index of the first of up to three modifier words right before a head noun."""
    first = head
    while first > 0 and head - first < 3:
        previous = first - 1
        word = lower[previous]
        gap = text[tokens[previous][1] : tokens[first][0]]
        if taken[previous] or not _is_modifier(tokens[previous][2], word) or gap not in (" ", "-", "\n"):
            break
        first = previous
    while first < head and lower[first] in GENERIC_MODIFIERS:
        first += 1
    return first


def _is_modifier(token: str, word: str) -> bool:
    if word in STOPWORDS or word in VERBS or len(word) < 3 or not word.isalpha():
        return False
    if word.endswith("ing") and word not in NOUNS_IN_ING or word.endswith(("ed", "ly")):
        return False
    return token.islower() or (token.isupper() and len(token) <= 5)


def candidate_phrases(
    text: str, matches: list[Match], patterns: ConceptPatterns = CONCEPTS
) -> list[tuple[int, int, str]]:
    """Runs of 2-4 plain lower-case content words outside the matches, as (start, end, key): the noun
    phrases whose frequency in the document may make them concepts (of the pack's field, when it names one)."""
    covered = [(m.start, m.end) for m in matches]
    found = []
    run: list[tuple[int, int, str]] = []
    for match in _TOKEN.finditer(text):
        token = (match.start(), match.end(), match.group(0))
        inside = any(start <= token[0] < end for start, end in covered)
        joined = not run or text[run[-1][1] : token[0]] in (" ", "-")
        if not inside and joined and _is_phrase_word(token[2]):
            run.append(token)
            continue
        found.extend(_phrase(text, run, patterns))
        run = [token] if not inside and _is_phrase_word(token[2]) else []
    found.extend(_phrase(text, run, patterns))
    return found


def _phrase(text: str, run: list[tuple[int, int, str]], patterns: ConceptPatterns) -> list[tuple[int, int, str]]:
    while run and run[0][2] in GENERIC_MODIFIERS:
        run = run[1:]
    if not 2 <= len(run) <= 4 or run[-1][2].endswith(("al", "ar", "ic", "ous", "ive", "ary")):
        return []
    if singular(run[-1][2]) in VAGUE_HEADS:
        return []
    start, end = run[0][0], run[-1][1]
    key = normalize_key(text[start:end])
    fragment = text[:start].rstrip(" ").endswith(("-", "/"))
    return [] if fragment or is_junk_phrase(key) or not patterns.of_the_field(key) else [(start, end, key)]


def _is_phrase_word(token: str) -> bool:
    return token.islower() and token.isalpha() and _is_modifier(token, token)
