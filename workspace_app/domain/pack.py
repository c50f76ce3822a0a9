"""What a domain pack is: the knowledge of one field of documents that the neutral engine reads through a seam.

The engine (ingestion, graph, answers, suggestions) works on any PDF. A pack adds what only one kind of document
needs: the concept lexicon the graph matches, the grammar of graded recommendations, the question cues that a
question about a special population or an amount with a unit needs, the questions its recommendations suggest
and the questions that warm the answerer up. A pack with none of it (`generic`) leaves the engine as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

from workspace_app.text.grades import Recommendation

NO_GRADE = Recommendation(None, None)


class GradeGrammar(Protocol):
    """How a field grades its recommendations (a class and a level), where its documents print them."""

    table_cells: bool  # whether grades stand in table cells the reader should join to their rows

    def find_recommendation(self, text: str) -> Recommendation:
        """The first class/level stated in a passage (a chunk's grading)."""
        ...

    def grading_in(self, text: str, start: int, quote: str) -> Recommendation:
        """The grading stated at a quoted sentence of a passage (a citation's grading)."""
        ...

    def states_grading(self, text: str) -> bool:
        """Whether a line is the grading itself (not a heading, not a statement)."""
        ...

    def describe_class(self, value: str) -> str:
        """A class as a reader reads it ("Class I", "Strong recommendation")."""
        ...


class NoGrades:
    """The grammar of documents that grade nothing: every passage is ungraded."""

    table_cells = False

    def find_recommendation(self, text: str) -> Recommendation:
        """Nothing is graded."""
        return NO_GRADE

    def grading_in(self, text: str, start: int, quote: str) -> Recommendation:
        """Nothing is graded."""
        return NO_GRADE

    def states_grading(self, text: str) -> bool:
        """No line states a grading."""
        return False

    def describe_class(self, value: str) -> str:
        """The value as it is."""
        return value


@dataclass(frozen=True)
class QuestionCues:
    """What a question asks for that the engine cannot tell from its words alone.

    `populations`: special populations (name -> pattern) whose care differs from everyone else's; a question about
    one is answered only by evidence that names it. `amount_question`: a question that wants an amount with a unit
    (a dose); `amount` is what such an amount looks like (a number with one of the field's units). `grading`: a
    question asking how strongly something is recommended (the field's grades; `GradeGrammar` reads them).
    """

    populations: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    amount_question: re.Pattern[str] | None = None
    amount: re.Pattern[str] | None = None
    grading: re.Pattern[str] | None = None


def no_question(statement: str, section: str = "") -> str | None:
    """A pack without recommendation patterns suggests no question from a statement."""
    return None


@dataclass(frozen=True)
class ConceptPatterns:
    """How a field names its concepts where its lexicon does not list them (the graph's patterns).

    `drug_suffixes`: word endings that make a word a drug name (`not_drugs`: words with such an ending that are
    not); `heads`: head nouns that make a phrase a concept of a kind ("… failure" a disease, "… therapy" a
    procedure); `stems`: word stems one of which a frequent noun phrase must hold to be a concept of the field
    (None: any frequent noun phrase can be one, as in a pack of no field).
    """

    drug_suffixes: tuple[str, ...] = ()
    not_drugs: frozenset[str] = frozenset()
    heads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    stems: re.Pattern[str] | None = None

    @cached_property
    def head_types(self) -> dict[str, str]:
        """Each head noun's kind (made once per pack)."""
        return {head: kind for kind, heads in self.heads.items() for head in heads}

    def of_the_field(self, phrase: str) -> bool:
        """Whether a noun phrase (lower case) can be one of the field's concepts."""
        return self.stems is None or self.stems.search(phrase) is not None


@dataclass(frozen=True)
class DomainPack:
    """The knowledge of one field of documents, chosen in settings (`WORKSPACE_DOMAIN__PACK`)."""

    name: str
    lexicon: Path | None = None  # the concept lexicon the graph and the translator match (a TSV); None: patterns only
    concepts: ConceptPatterns = field(default_factory=ConceptPatterns)  # the graph's patterns beside the lexicon
    grades: GradeGrammar = field(default_factory=NoGrades)
    cues: QuestionCues = field(default_factory=QuestionCues)
    # A question a graded recommendation answers (statement, its section) -> question, for suggested questions.
    recommendation_question: Callable[[str, str], str | None] = no_question
    # Asked once per workspace when the app warms up, one per language the answerer reads (answers not kept).
    warm_questions: tuple[str, ...] = ("What is this document about?", "这份资料讲了什么？")
