"""The figures of an evaluation run, from its results alone: each a share of rows with the counts behind it,
overall, by language and (optionally) by split."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workspace_app.evaluation.results import EvalResult

CONFIDENT = "confident"


@dataclass(frozen=True)
class Figure:
    """`right` rows of the `of` rows a figure counts."""

    right: int
    of: int

    @property
    def value(self) -> float | None:
        """The share, or None when no row counts."""
        return self.right / self.of if self.of else None

    def to_json(self) -> dict[str, Any]:
        """{"value", "right", "of"}."""
        return {"value": None if self.value is None else round(self.value, 4), "right": self.right, "of": self.of}


def first_citation_accuracy(results: Sequence[EvalResult]) -> Figure:
    """Answerable rows whose first citation is right (a refusal is a miss)."""
    rows = _answerable(results)
    return Figure(sum(1 for r in rows if r.first_right and not r.refused), len(rows))


def any_citation_accuracy(results: Sequence[EvalResult]) -> Figure:
    """Answerable rows with a right citation anywhere in the answer (a refusal is a miss)."""
    rows = _answerable(results)
    return Figure(sum(1 for r in rows if r.any_right and not r.refused), len(rows))


def refusal_recall(results: Sequence[EvalResult]) -> Figure:
    """Unanswerable rows the answer refused."""
    rows = [r for r in results if not r.answerable]
    return Figure(sum(1 for r in rows if r.refused), len(rows))


def false_refusals(results: Sequence[EvalResult]) -> Figure:
    """Answerable rows the answer refused (lower is better)."""
    rows = _answerable(results)
    return Figure(sum(1 for r in rows if r.refused), len(rows))


def search_hit_at_1(results: Sequence[EvalResult]) -> Figure:
    """Answerable rows whose top search hit is right."""
    rows = _answerable(results)
    return Figure(sum(1 for r in rows if r.search_hit1), len(rows))


def search_hit_at_5(results: Sequence[EvalResult]) -> Figure:
    """Answerable rows with a right hit among the search's top five."""
    rows = _answerable(results)
    return Figure(sum(1 for r in rows if r.search_hit5), len(rows))


def cross_document_all_cited(results: Sequence[EvalResult]) -> Figure:
    """Cross-document rows whose answer cites every gold document on a gold page."""
    rows = [r for r in results if r.answerable and r.all_cited is not None]
    return Figure(sum(1 for r in rows if r.all_cited and not r.refused), len(rows))


def confident_answers_right(results: Sequence[EvalResult]) -> Figure | None:
    """Answers given with support "confident" that are right (see `EvalResult.right`); None when no answer
    carries a support level."""
    if all(r.support is None for r in results):
        return None
    return _confident_right(results)


FIGURES: dict[str, Callable[[Sequence[EvalResult]], Figure]] = {
    "first_citation": first_citation_accuracy,
    "any_citation": any_citation_accuracy,
    "refusal_recall": refusal_recall,
    "false_refusals": false_refusals,
    "search_hit@1": search_hit_at_1,
    "search_hit@5": search_hit_at_5,
    "cross_doc_all_cited": cross_document_all_cited,
}
CONFIDENT_RIGHT = "confident_right"


@dataclass(frozen=True)
class GroupFigures:
    """The figures of one group of rows (all, one language, one split) and how many rows it has."""

    questions: int
    answerable: int
    figures: dict[str, Figure]

    def to_json(self) -> dict[str, Any]:
        """{"questions", "answerable", "unanswerable", <figure>: {"value", "right", "of"}, ...}."""
        counts = {"questions": self.questions, "answerable": self.answerable,
                  "unanswerable": self.questions - self.answerable}
        return {**counts, **{name: figure.to_json() for name, figure in self.figures.items()}}


@dataclass(frozen=True)
class Summary:
    """An evaluation's figures overall, by language and by split (empty unless asked for)."""

    overall: GroupFigures
    by_lang: dict[str, GroupFigures]
    by_split: dict[str, GroupFigures] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of `workspace-app eval --json`."""
        return {
            "overall": self.overall.to_json(),
            "by_lang": {lang: group.to_json() for lang, group in self.by_lang.items()},
            "by_split": {split: group.to_json() for split, group in self.by_split.items()},
        }


def group_figures(results: Sequence[EvalResult], with_support: bool) -> GroupFigures:
    """Every figure over these rows; "confident_right" too when `with_support`."""
    figures = {name: measure(results) for name, measure in FIGURES.items()}
    if with_support:
        figures[CONFIDENT_RIGHT] = _confident_right(results)
    return GroupFigures(len(results), len(_answerable(results)), figures)


def summarize(results: Sequence[EvalResult], by_split: bool = False) -> Summary:
    """The figures overall and by language; with `by_split`, also per value of the rows' `split` (rows without
    one are in no split)."""
    with_support = confident_answers_right(results) is not None  # the same figures in every group

    def figures_of(rows: Sequence[EvalResult]) -> GroupFigures:
        return group_figures(rows, with_support)

    languages = sorted({r.lang for r in results})
    splits = sorted({r.split for r in results if r.split is not None}) if by_split else []
    return Summary(
        overall=figures_of(results),
        by_lang={lang: figures_of([r for r in results if r.lang == lang]) for lang in languages},
        by_split={split: figures_of([r for r in results if r.split == split]) for split in splits},
    )


def _answerable(results: Sequence[EvalResult]) -> list[EvalResult]:
    return [r for r in results if r.answerable]


def _confident_right(results: Sequence[EvalResult]) -> Figure:
    rows = [r for r in results if not r.refused and r.support == CONFIDENT]
    return Figure(sum(1 for r in rows if r.right), len(rows))
