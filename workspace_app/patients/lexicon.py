"""The patient-records lexicon (lexicon/*.tsv): drug classes with their drugs, lab names with their aliases,
diseases with the words that name them, in English and Chinese.

Kept apart from the guideline lexicon (domain/cardiology.tsv, the clinical pack's): that one names cardiology
concepts for documents and has no drug -> class mapping or ICU drugs (electrolyte replacement, antibiotics, sedation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_FOLDER = Path(__file__).with_name("lexicon")


def _rows(name: str) -> list[list[str]]:
    lines = (_FOLDER / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def _names(field: str) -> list[str]:
    return [n.strip().lower() for n in re.split(r"[|/]", field) if n.strip()]


def phrase_pattern(names: list[str]) -> re.Pattern[str]:
    """One regex finding any of the names as whole words (CJK names anywhere), longest first."""
    parts = []
    for name in sorted(set(names), key=len, reverse=True):
        escaped = re.escape(name)
        parts.append(escaped if re.search(r"[\u4e00-\u9fff]", name) else rf"(?<![a-z0-9]){escaped}(?![a-z0-9])")
    return re.compile("|".join(parts))


@dataclass(frozen=True)
class Lexicon:
    """Lookups from a lower-case name to its concept."""

    drug_class: dict[str, str]
    class_names: dict[str, str]
    drugs: re.Pattern[str]
    lab_names: dict[str, str]
    disease_words: dict[str, str]
    diseases: re.Pattern[str]

    def lab(self, name: str) -> str:
        """The lab concept of a name or alias ('K+' -> 'potassium'); the lower-cased name when unknown."""
        key = name.strip().lower()
        return self.lab_names.get(key, key)


@cache
def load_lexicon() -> Lexicon:
    """The shipped lexicon (read once)."""
    drug_class: dict[str, str] = {}
    class_names: dict[str, str] = {}
    for row in _rows("drugs.tsv"):
        klass = row[0].strip().lower()
        class_names[klass] = klass
        class_names.update(dict.fromkeys(_names(row[1]), klass))
        drug_class.update(dict.fromkeys(_names(row[2]), klass))
    lab_names: dict[str, str] = {}
    for row in _rows("labs.tsv"):
        lab = row[0].strip().lower()
        lab_names[lab] = lab
        lab_names.update(dict.fromkeys(_names(row[1]) if len(row) > 1 else [], lab))
    disease_words: dict[str, str] = {}
    for row in _rows("diseases.tsv"):
        disease_words.update(dict.fromkeys(_names(row[1]), row[0].strip().lower()))
    return Lexicon(
        drug_class, class_names, phrase_pattern(list(drug_class)), lab_names, disease_words,
        phrase_pattern(list(disease_words)),
    )
