"""A curated concept lexicon (the domain pack's, e.g. domain/cardiology.tsv) and the normalisation every extractor
shares.

Each lexicon row is one concept: its type, an English name (the entity's display name and key), Chinese names
and aliases (abbreviations, spelling and plural variants). Keys are normalised text: lower case, any run of
punctuation or spaces as one space, the last word singular, so "Beta-Blockers" and "beta blocker" meet.
Abbreviations (two or more capitals, e.g. "HFrEF", "LDL-C") are matched with their case, so "AS" never
matches the word "as"; two-letter ones only when the document defines them or they are unambiguous.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from workspace_app.domain.clinical import LEXICON as _LEXICON
from workspace_app.text.cjk import has_cjk

_SEPARATORS = re.compile(r"[^\w\u0370-\u03ff]+|_")
_LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl", "’": "'", "′": "'"})
# Two-letter abbreviations that mean one thing in cardiology text; others need a definition in the document.
SAFE_SHORT = frozenset({"AF", "HF", "MI", "VT", "VF", "BP", "CT", "EF", "DM", "ICD", "PCI"})
_SPLIT_LIGATURE = re.compile(r"\b(fi|fl|ff) (?=[a-z]{3,})")
_LINE_HYPHEN = re.compile(r"\b([a-z]{2,})- (?!(?:and|or|to|in|and/or)\b)([a-z]{2,})")
_SINGULAR_KEEP = ("ss", "us", "is", "ics", "sis", "xis", "ous", "as", "os")


def clean_text(text: str) -> str:
    """NFKC text with ligatures and typographic quotes replaced; "fi brillation" (a split ligature) and
    "electrocar- diographic" (a line-end hyphen kept by the PDF) joined."""
    text = _SPLIT_LIGATURE.sub(r"\1", unicodedata.normalize("NFKC", text.translate(_LIGATURES)))
    return _LINE_HYPHEN.sub(r"\1\2", text)


def singular(word: str) -> str:
    """A crude English singular of a lower-case word ("blockers" -> "blocker", "therapies" -> "therapy")."""
    if len(word) <= 3 or not word.isalpha() or word.endswith(_SINGULAR_KEEP):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes")):
        return word[:-2]
    return word.removesuffix("s")


def normalize_key(text: str) -> str:
    """The merge key of a surface form: lower case, punctuation as spaces, last word singular."""
    words = _SEPARATORS.sub(" ", clean_text(text).lower()).split()
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return " ".join(words)


def case_key(text: str) -> str:
    """The case-kept key of an abbreviation ("ICDs" -> "ICD", "LDL-C" -> "LDL C")."""
    words = _SEPARATORS.sub(" ", clean_text(text)).split()
    if words and len(words[-1]) > 2 and words[-1].endswith("s") and words[-1][:-1].isupper():
        words[-1] = words[-1][:-1]
    return " ".join(words)


def looks_like_abbreviation(form: str) -> bool:
    """True for forms written with two or more capitals and no lower-case word (HFrEF, LDL-C, CHA2DS2-VASc)."""
    letters = [ch for ch in form if ch.isalpha()]
    capitals = sum(ch.isupper() for ch in letters)
    if capitals < 2:
        return False
    return " " not in form.strip() or capitals * 2 >= len(letters)


@dataclass(frozen=True)
class Concept:
    """One lexicon concept."""

    key: str
    name: str
    type: str
    source: str = "lexicon"  # or "defined" (the document defines it), "pattern", "phrase", "llm"


@dataclass
class Lexicon:
    """Lookup tables of the lexicon: normalised forms, case-kept abbreviations and Chinese names."""

    forms: dict[str, Concept] = field(default_factory=dict)
    abbreviations: dict[str, Concept] = field(default_factory=dict)
    chinese: dict[str, Concept] = field(default_factory=dict)
    by_key: dict[str, Concept] = field(default_factory=dict)
    max_words: int = 1

    def add(self, concept: Concept, form: str) -> None:
        """Register one surface form of a concept (first registration of a form wins)."""
        form = form.strip()
        if not form:
            return
        if has_cjk(form):
            self.chinese.setdefault(clean_text(form).replace(" ", ""), concept)
        elif looks_like_abbreviation(form):
            self.abbreviations.setdefault(case_key(form), concept)
        else:
            key = normalize_key(form)
            self.forms.setdefault(key, concept)
            self.max_words = max(self.max_words, len(key.split()))

    def first_words(self) -> frozenset[str]:
        """First words of every multi-word or single-word form (to skip positions quickly)."""
        return frozenset(key.split()[0] for key in self.forms)


@lru_cache(maxsize=2)
def load_lexicon(path: Path | None = _LEXICON) -> Lexicon:
    """Read the lexicon file once; no file (a pack without a lexicon) is an empty lexicon."""
    lexicon = Lexicon()
    if path is None:
        return lexicon
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = (line.split("\t") + ["", ""])[:4]
        kind, name, chinese, aliases = (part.strip() for part in parts)
        concept = Concept(normalize_key(name) if not has_cjk(name) else name, name, kind)
        lexicon.by_key.setdefault(concept.key, concept)
        lexicon.add(concept, name)
        for form in [*chinese.split("|"), *aliases.split("|")]:
            lexicon.add(concept, form)
    return lexicon
