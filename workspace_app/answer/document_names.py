"""Which document a part of a question names: "the 2011 women's prevention guideline", "the syncope guideline",
"the 2021 European valve disease guideline".

A question that needs two sources often names each ("What does the syncope guideline suggest …, and what does
the 2011 women's guideline say …?"). A part names a document when a phrase in it refers to a source (the words
before guideline, paper, statement, 指南, 共识 …) and shares more of the words no other file name has (its year,
its topic) with that document's file name than with any other's; the phrase's words in the other language (the
translator's names of its concepts) count too, so "房颤指南" names `zh-acute-af-ed-2024.pdf` through "AF". The
question's other words name nothing: they are what it asks. The part is then searched in that document, and its
answer must come from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from workspace_app.text.analyzer import expand_with_abbreviations
from workspace_app.text.terms import content_terms, evidence_terms

# How a question refers to a source by its name: "the 2021 European valve disease guideline", "the lifestyle
# guideline's", "中国急诊房颤指南" (the words before 指南 back to a particle or punctuation).
_FUNCTION_WORDS = r"(?:the|a|an|in|of|for|on|to|about|and|or|with|by|from|what|which|how|does|do|is|are|says?|that|this)"
_REFERENCE = re.compile(
    rf"\b(?:the|this|that)\s+(?:(?!{_FUNCTION_WORDS}\b)[\w/&'’.-]+\s+){{0,5}}"
    r"(?:guidelines?|papers?|statements?|consensus|report|document|updates?)(?:['’]s)?\b"
    r"|[\u4e00-\u9fffA-Za-z0-9]{0,10}?(?<![的在时对])(?:指南|共识|声明)",
    re.IGNORECASE,
)
# A Chinese title before 指南/共识/声明 back to the punctuation before it ("射血分数保留的心力衰竭中国专家共识"): longer than
# the phrase `_REFERENCE` drops from a part, which stops at a particle.
_ZH_TITLE = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]{1,30}(?=指南|共识|声明)")
# Words of a referring phrase that can pick out one title: its acronyms ("HHS", "ESC"). (A first page's other
# words, from its abstract and affiliations, are too many: "emergency" is on the syncope guideline's.)
_DISTINCTIVE = re.compile(r"\b[A-Z]{2,}[A-Za-z]*\b")
_CJK_STOP = re.compile(r".*[的在时对和与及]")
# Words that say a document is meant, and file suffixes: they name no document in particular.
_FILE_WORDS = evidence_terms(
    "pdf txt md guideline guidelines paper statement consensus report document update recommendation recommendations"
)
_YEAR = re.compile(r"(?:19|20)\d\d")



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
    """The ids of every document (`names`: id -> file name) a phrase of the text referring to a source names: the
    one whose file name shares the most words with the phrase that no other file name has (none on a tie), or
    (with `openings`: id -> the text opening its first page, where its title is) the one whose opening alone has the
    phrase's acronyms ("the AHA/ACC/HHS comorbidity paper"). A name spelled out in the phrase counts as its short
    form (`abbreviations`: short -> long, the workspace's): "the adult congenital heart disease guideline" names
    `…-achd.pdf`; so do the phrase's concepts' names in the other language (`translate`): "房颤指南" names
    `zh-acute-af-ed-2024.pdf` through "AF"."""
    # Only a phrase referring to a source ("the 2011 women's prevention guideline", "中国急诊房颤指南") names one. The
    # question's other words are what it asks about: "What therapy does the guideline recommend …" names no
    # device-therapy guideline, and it is searched in every source.
    # A Chinese phrase is read whole from its title (`_ZH_TITLE`), not again as the shorter one `_REFERENCE` drops.
    english = [match.group(0) for match in _REFERENCE.finditer(text) if match.group(0)[:1].isascii()]
    phrases = english + _ZH_TITLE.findall(text)
    if len(names) < 2 or not phrases:
        return []
    own = {document_id: evidence_terms(name) - _FILE_WORDS for document_id, name in names.items()}
    distinctive = {
        document_id: terms - set().union(*(t for d, t in own.items() if d != document_id))
        for document_id, terms in own.items()
    }
    named: list[str] = []
    for phrase in phrases:
        words = set(evidence_terms(phrase))
        if abbreviations:
            words |= set(expand_with_abbreviations(phrase, [], abbreviations))
        if translate is not None:
            words |= evidence_terms(" ".join(translate(phrase)))
        shared = {document_id: len(words & terms) for document_id, terms in distinctive.items()}
        most = max(shared.values())
        best = [d for d, count in shared.items() if most and count == most]
        if len(best) == 1 and best[0] not in named and not _by_year_alone(phrase, words & distinctive[best[0]],
                                                                         own[best[0]]):
            named.append(best[0])  # a phrase names one source; on a tie it names none
    if openings:
        named += [d for d in _named_by_title(text, names, openings) if d not in named]
    return named


def _by_year_alone(phrase: str, shared: set[str], name_terms: frozenset[str] | set[str]) -> bool:
    """Whether a phrase would name a source by a year alone while its own topic words are not in that source's file
    name: "the 2021 ESC heart failure guideline" is not `zh-dapt-chd-consensus-2021.pdf` (a source of the workspace
    from that year), though "the 2021 guideline" is."""
    if not shared or not all(_YEAR.fullmatch(term) for term in shared):
        return False
    topic = {term for term in content_terms(phrase) if term.isascii() and term.isalpha()} - _FILE_WORDS
    return bool(topic - name_terms)


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
