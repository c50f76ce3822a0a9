"""Which document a part of a question names: "the 2011 women's prevention guideline", "the syncope guideline",
"the 2021 European valve disease guideline".

A question that needs two sources often names each ("What does the syncope guideline suggest …, and what does
the 2011 women's guideline say …?"). A part names a document when it refers to a document at all (guideline,
paper, statement, 指南, 共识 …) and uses words of exactly one document's file name that no other document's name
has (its year, its topic); the part's words in the other language (the translator's names of its concepts)
count too, so "房颤指南" names `zh-acute-af-ed-2024.pdf` through "AF". The part is then searched in that
document, and its answer must come from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from workspace_app.text.analyzer import expand_with_abbreviations
from workspace_app.text.terms import evidence_terms

# How a question refers to a source by its name: "the 2021 European valve disease guideline", "the lifestyle
# guideline's", "中国急诊房颤指南" (the words before 指南 back to a particle or punctuation).
_FUNCTION_WORDS = r"(?:the|a|an|in|of|for|on|to|about|and|or|with|by|from|what|which|how|does|do|is|are|says?|that|this)"
_REFERENCE = re.compile(
    rf"\b(?:the|this|that)\s+(?:(?!{_FUNCTION_WORDS}\b)[\w/&'’.-]+\s+){{0,5}}"
    r"(?:guidelines?|papers?|statements?|consensus|report|document)(?:['’]s)?\b"
    r"|[\u4e00-\u9fffA-Za-z0-9]{0,10}?(?<![的在时对])(?:指南|共识|声明)",
    re.IGNORECASE,
)
# Words of a referring phrase that can pick out one title: its acronyms ("HHS", "ESC"). (A first page's other
# words, from its abstract and affiliations, are too many: "emergency" is on the syncope guideline's.)
_DISTINCTIVE = re.compile(r"\b[A-Z]{2,}[A-Za-z]*\b")
_CJK_STOP = re.compile(r".*[的在时对和与及]")
# Words that say a document is meant, and file suffixes: they name no document in particular.
_FILE_WORDS = evidence_terms(
    "pdf txt md guideline guidelines paper statement consensus report document recommendation recommendations"
)
_ZH_FILE_WORDS = ("指南", "共识", "声明", "建议")



def without_document_names(text: str) -> str:
    """The text without the phrases naming a source ("the 2011 women's prevention guideline", "急诊房颤指南"): what a
    part of a question asks of the source it names."""

    def drop(match: re.Match[str]) -> str:
        phrase = match.group(0)
        if phrase[:1].isascii() and phrase[:1].isalpha() and " " in phrase:
            return " "
        kept = _CJK_STOP.match(phrase[:-2])  # keep the words up to the last particle: "房颤患者用华法林时"
        return (kept.group(0) if kept else "") + " "

    return re.sub(r"\s+", " ", _REFERENCE.sub(drop, text)).strip()


def named_document(
    part: str, names: Mapping[str, str], translate: Callable[[str], Sequence[str]] | None = None,
    openings: Mapping[str, str] | None = None,
) -> str | None:
    """The id of the one document (`names`: id -> file name) the part names, or None."""
    named = named_documents(part, names, translate, openings)
    return named[0] if len(named) == 1 else None


def named_documents(
    text: str, names: Mapping[str, str], translate: Callable[[str], Sequence[str]] | None = None,
    openings: Mapping[str, str] | None = None, abbreviations: Mapping[str, str] | None = None,
) -> list[str]:
    """The ids of every document (`names`: id -> file name) the text names by words no other name has, or (with
    `openings`: id -> the text opening its first page, where its title is) by a phrase referring to a source
    ("the AHA/ACC/HHS comorbidity paper") whose distinctive words only one document's opening has. A name spelled
    out in a phrase referring to a source counts as its short form (`abbreviations`: short -> long, the
    workspace's): "the adult congenital heart disease guideline" names `…-achd.pdf`."""
    words = set(evidence_terms(text))
    # Only a text that speaks of a document at all ("the guideline", "this paper", "指南") names one.
    if len(names) < 2 or not (words & _FILE_WORDS or any(word in text for word in _ZH_FILE_WORDS)):
        return []
    for phrase in _REFERENCE.finditer(text) if abbreviations else ():
        words |= set(expand_with_abbreviations(phrase.group(0), [], abbreviations or {}))
    if translate is not None:
        words |= evidence_terms(" ".join(translate(text)))
    own = {document_id: evidence_terms(name) - _FILE_WORDS for document_id, name in names.items()}
    named = []
    for document_id, terms in own.items():
        others = set().union(*(t for d, t in own.items() if d != document_id))
        if words & (terms - others):
            named.append(document_id)
    if openings:
        named += [d for d in _named_by_title(text, names, openings) if d not in named]
    return named


def _named_by_title(text: str, names: Mapping[str, str], openings: Mapping[str, str]) -> list[str]:
    """Documents a referring phrase that names none by its file name names by an acronym found in that document's
    opening (title, organisations) and in no other's opening or name."""
    phrases = [m.group(0) for m in _REFERENCE.finditer(text) if m.group(0)[:1].isascii()]
    if not phrases:
        return []
    own = {
        d: evidence_terms(openings.get(d, "")) | evidence_terms(name) for d, name in names.items()
    }
    found = []
    for phrase in phrases:
        if named_documents(phrase, names):
            continue  # named by its file name already ("the 2021 European valve disease guideline")
        wanted = {
            term for term in evidence_terms(" ".join(_DISTINCTIVE.findall(phrase))) if term not in _FILE_WORDS
        }
        for document_id, terms in own.items():
            others = set().union(*(t for d, t in own.items() if d != document_id))
            if wanted & (terms - others) and document_id not in found:
                found.append(document_id)
    return found
