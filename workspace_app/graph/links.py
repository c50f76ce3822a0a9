"""Which graph lexicon concept a set of names from another vocabulary means (the patients lexicon's drug classes,
drugs, diseases and labs; ICD titles), so a patient's coded concepts can be LINKS_TO edges to workspace entities.

The rule is general: each name is normalised as the graph lexicon normalises document text (English forms, kept
case abbreviations, Chinese names without spaces) and looked up; names of an unwanted type are ignored; the concept
most names agree on wins (the first name's concept on a tie). A title (an ICD long title) is read by the document
matcher instead, and every concept of a wanted type it names counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from workspace_app.graph.build import entity_id
from workspace_app.graph.english import EnglishMatcher
from workspace_app.graph.lexicon import Concept, Lexicon, case_key, clean_text, load_lexicon, normalize_key
from workspace_app.text.cjk import has_cjk


def name_concept(name: str, lexicon: Lexicon | None = None) -> Concept | None:
    """The graph lexicon concept a name is a form of (None when it is none)."""
    lexicon = lexicon or load_lexicon()
    if has_cjk(name):
        return lexicon.chinese.get(clean_text(name).replace(" ", ""))
    found = lexicon.forms.get(normalize_key(name))
    if found is None and len(name.strip()) >= 2:
        # Abbreviations ("AF", "ARB") are kept in capitals; vocabularies often write them in lower case.
        found = lexicon.abbreviations.get(case_key(name.upper())) or lexicon.abbreviations.get(case_key(name))
    return found


def names_entity_id(names: Sequence[str], types: Collection[str], lexicon: Lexicon | None = None) -> str | None:
    """The entity id of the graph concept of a wanted type most of the names are forms of (None: none is)."""
    lexicon = lexicon or load_lexicon()
    found = [c for c in (name_concept(n, lexicon) for n in names) if c is not None and c.type in types]
    if not found:
        return None
    votes = Counter(found)
    best = max(votes.values())
    winner = next(c for c in found if votes[c] == best)
    return entity_id(winner.type, winner.key)


def title_entity_ids(title: str, types: Collection[str], lexicon: Lexicon | None = None) -> list[str]:
    """Entity ids of the graph concepts of a wanted type a title names ('Atrial fibrillation' -> disease AF)."""
    lexicon = lexicon or load_lexicon()
    found = EnglishMatcher(lexicon).find(clean_text(title))
    ids = [entity_id(m.concept.type, m.concept.key) for m in found if m.concept.type in types and m.concept.source == "lexicon"]
    return list(dict.fromkeys(ids))
