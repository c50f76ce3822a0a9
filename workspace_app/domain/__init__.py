"""Domain packs: the knowledge of one field of documents behind one seam, chosen in settings.

    DomainPack   pack.py        lexicon path, concept patterns, grade grammar, question cues, suggestion patterns,
                                warm-up questions
    clinical     clinical.py    the default: cardiology lexicon and concept patterns, COR/LOE grammar, population and
                                dose cues
    generic      generic.py     none of it

A leaf package: it imports only `workspace_app.text`. The wiring builds the chosen pack once (`pack(name)`) and
hands its parts to the services that read them.
"""

from __future__ import annotations

from workspace_app.domain.clinical import CLINICAL
from workspace_app.domain.generic import GENERIC
from workspace_app.domain.pack import DomainPack, GradeGrammar, NoGrades, QuestionCues

PACKS: dict[str, DomainPack] = {CLINICAL.name: CLINICAL, GENERIC.name: GENERIC}

__all__ = ["PACKS", "DomainPack", "GradeGrammar", "NoGrades", "QuestionCues", "pack"]


def pack(name: str) -> DomainPack:
    """The pack of that name; ValueError naming the known ones otherwise."""
    try:
        return PACKS[name]
    except KeyError:
        raise ValueError(f"unknown domain pack {name!r}; known: {', '.join(PACKS)}") from None
