"""The translation seam of cross-language retrieval: the other-language names of what a text mentions.

Retrieval only knows this protocol; the lexicon-backed implementation lives in the graph package (it owns the
cardiology lexicon) and the wiring hands it in. An English question then also searches the keyword index with
the Chinese names of the concepts it names, and a Chinese question with their English names and
abbreviations. The answer package uses the same object to match question terms against quoted sentences in
the other language.
"""

from __future__ import annotations

from typing import Protocol


class Translator(Protocol):
    """Names, in the other language (English <-> Chinese), of the concepts a text mentions."""

    def other_language(self, text: str) -> list[str]:
        """The other-language names of the concepts mentioned in `text`, distinct, in order of mention."""
        ...

    def mentions(self, text: str) -> list[str]:
        """The words of `text` that name a concept, as written there ("屈昔多巴", "orthostatic hypotension")."""
        ...


class NoTranslator:
    """A translator that knows no names: retrieval stays within the question's language."""

    def other_language(self, text: str) -> list[str]:
        """Always empty."""
        return []

    def mentions(self, text: str) -> list[str]:
        """Always empty."""
        return []
