"""English <-> Chinese names of lexicon concepts: the graph's implementation of retrieval's `Translator`.

A text is matched with the same matchers the entity extraction uses (English forms and abbreviations, jieba
words with the lexicon's Chinese names); each lexicon concept found contributes its names in the other
language: an English text gets the concepts' Chinese names, a Chinese text their English name, the other
English forms and the abbreviations. Pattern concepts ("... therapy", "…病") have no translation and add nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from workspace_app.graph.chinese import ChineseMatcher
from workspace_app.graph.english import EnglishMatcher
from workspace_app.graph.lexicon import Lexicon, load_lexicon
from workspace_app.text.cjk import has_cjk, is_cjk


@dataclass(frozen=True)
class ConceptNames:
    """The names of one concept in each language, display name first."""

    english: tuple[str, ...]
    chinese: tuple[str, ...]


@dataclass
class _Matchers:
    english: EnglishMatcher
    chinese: ChineseMatcher
    names: dict[str, ConceptNames] = field(default_factory=dict)


class LexiconTranslator:
    """Other-language names of the lexicon concepts a text mentions (built lazily, once)."""

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self._lexicon = lexicon
        self._matchers: _Matchers | None = None
        self._lock = threading.Lock()

    def other_language(self, text: str) -> list[str]:
        """Chinese names for the concepts of an English text; English names for those of a Chinese text.

        A text mixing both (a Chinese question naming "LDL-C") is matched in both languages, and each concept
        found contributes the names of the language it was not found in.
        """
        matchers = self._ready()
        found: dict[str, None] = {}
        for key, language in self._concepts(matchers, text):
            names = matchers.names.get(key)
            if names is not None:
                found.update(dict.fromkeys(names.chinese if language == "en" else names.english))
        return list(found)

    def mentions(self, text: str) -> list[str]:
        """The surfaces of the lexicon concepts a text mentions, as written, in order of mention."""
        matchers = self._ready()
        found = [(m.start, m.surface, m.concept) for m in matchers.english.find(text)]
        if has_cjk(text):
            found += [(m.start, m.surface, m.concept) for m in matchers.chinese.find(text) if is_cjk(m.surface)]
        return list(dict.fromkeys(surface for _, surface, concept in sorted(found, key=lambda item: item[0])
                                  if concept.source == "lexicon"))

    def names(self, text: str) -> list[ConceptNames]:
        """Both languages' names of each lexicon concept the text mentions, in order of mention."""
        matchers = self._ready()
        keys = dict.fromkeys(key for key, _ in self._concepts(matchers, text))
        return [matchers.names[key] for key in keys if key in matchers.names]

    def _concepts(self, matchers: _Matchers, text: str) -> Iterable[tuple[str, str]]:
        """(concept key, language it was written in) per lexicon match, in text order."""
        matches = [(m.start, m.concept, "en") for m in matchers.english.find(text)]
        if has_cjk(text):
            matches += [(m.start, m.concept, "zh") for m in matchers.chinese.find(text) if is_cjk(m.surface)]
        for _, concept, language in sorted(matches, key=lambda item: item[0]):
            if concept.source == "lexicon":
                yield concept.key, language

    def _ready(self) -> _Matchers:
        with self._lock:
            if self._matchers is None:
                lexicon = self._lexicon or load_lexicon()
                self._matchers = _Matchers(EnglishMatcher(lexicon), ChineseMatcher(lexicon), concept_names(lexicon))
            return self._matchers


def concept_names(lexicon: Lexicon) -> dict[str, ConceptNames]:
    """Concept key -> its English forms (display name, then the other forms and abbreviations) and Chinese names."""
    english: dict[str, dict[str, None]] = {}
    chinese: dict[str, dict[str, None]] = {}
    for key, concept in lexicon.by_key.items():
        if not has_cjk(concept.name):
            english.setdefault(key, {})[concept.name] = None
    for form, concept in [*lexicon.forms.items(), *lexicon.abbreviations.items()]:
        english.setdefault(concept.key, {})[form] = None
    for form, concept in lexicon.chinese.items():
        chinese.setdefault(concept.key, {})[form] = None
    keys = english.keys() & chinese.keys()
    return {key: ConceptNames(tuple(english[key]), tuple(chinese[key])) for key in keys}
