"""Concepts a question or a passage names (seed 002 QUERY-003: the words that link a question about a patient to
the patient's events and to the guidelines), with their English and Chinese names.

Beyond the concepts found in events (concepts.py: drug names, disease words), a question speaks of drug classes
("anticoagulation", "抗凝"), abbreviations ("AF", "HF") and lab names ("INR"): lexicon/questions.tsv lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from workspace_app.models.events import ConceptName
from workspace_app.patients.concepts import text_concepts
from workspace_app.patients.lexicon import Lexicon, load_lexicon, phrase_pattern

_FILE = Path(__file__).with_name("lexicon") / "questions.tsv"
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class QuestionLexicon:
    """Words -> concept keys, and each key's English and Chinese names."""

    words: dict[str, str]
    pattern: re.Pattern[str]
    names: dict[str, tuple[str, str]]


def _first(words: list[str], chinese: bool) -> str:
    return next((w for w in words if bool(_CJK.search(w)) == chinese), "")


@cache
def load_question_lexicon() -> QuestionLexicon:
    """The shipped question words, with the lexicon's class names and disease words added (read once)."""
    lexicon = load_lexicon()
    words: dict[str, str] = {}
    names: dict[str, tuple[str, str]] = {}
    for line in _FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, field = line.split("\t", 1)
        aliases = [w.strip().lower() for w in field.split("|") if w.strip()]
        words.update(dict.fromkeys(aliases, key))
        names[key] = (_first(aliases, False) or key.split(":", 1)[1], _first(aliases, True))
    for name, klass in lexicon.class_names.items():
        words.setdefault(name, f"class:{klass}")
    for word, disease in lexicon.disease_words.items():
        words.setdefault(word, f"disease:{disease}")
    _add_default_names(names, lexicon)
    return QuestionLexicon(words, phrase_pattern(list(words)), names)


def _add_default_names(names: dict[str, tuple[str, str]], lexicon: Lexicon) -> None:
    """Names of the lexicon's classes and diseases that questions.tsv does not name."""
    for klass in set(lexicon.class_names.values()):
        chinese = [n for n, k in lexicon.class_names.items() if k == klass and _CJK.search(n)]
        names.setdefault(f"class:{klass}", (klass, chinese[0] if chinese else ""))
    for disease in set(lexicon.disease_words.values()):
        chinese = [w for w, d in lexicon.disease_words.items() if d == disease and _CJK.search(w)]
        names.setdefault(f"disease:{disease}", (disease, chinese[0] if chinese else ""))


def concept_names(text: str) -> list[ConceptName]:
    """The concepts a text names (drug classes, drugs, diseases, labs), in order of first mention."""
    table = load_question_lexicon()
    lowered = text.lower()
    found: dict[str, int] = {}
    for match in table.pattern.finditer(lowered):
        found.setdefault(table.words[match.group(0)], match.start())
    for key in text_concepts(text, load_lexicon()):
        found.setdefault(key, len(text))
    ordered = sorted(found, key=lambda k: (found[k], k))
    return [ConceptName(key, *table.names.get(key, (key.split(":", 1)[1], ""))) for key in ordered]


def concept_synonyms(key: str) -> tuple[str, ...]:
    """Every name the lexicon knows for a concept ('class:anticoagulant' -> anticoagulant, 抗凝药, anticoagulation...),
    its own name first; an abnormal finding ('abnormal:potassium↓') is named as its lab item."""
    kind, _, value = key.partition(":")
    if kind == "abnormal":
        kind, value = "lab", value.rstrip("↑↓!")
    key = f"{kind}:{value}"
    lexicon, table = load_lexicon(), load_question_lexicon()
    tables = {"class": lexicon.class_names, "disease": lexicon.disease_words, "lab": lexicon.lab_names}
    names = [value, *(n for n, c in tables.get(kind, {}).items() if c == value)]
    names += [w for w, k in table.words.items() if k == key]
    return tuple(dict.fromkeys(names))


def lexicon_concepts() -> list[str]:
    """Every concept key of the lexicon: drug classes, drugs, diseases and lab items."""
    lexicon = load_lexicon()
    keys = [f"class:{c}" for c in dict.fromkeys(lexicon.class_names.values())]
    keys += [f"drug:{d}" for d in lexicon.drug_class]
    keys += [f"disease:{d}" for d in dict.fromkeys(lexicon.disease_words.values())]
    keys += [f"lab:{lab}" for lab in dict.fromkeys(lexicon.lab_names.values())]
    return keys
