"""Fitted scoring: which evidence sentence answers a question, and whether the evidence answers it at all.

Small logistic models over general signals, fitted on large public QA sets ingested as workspaces (COVID-QA,
CMRC 2018, PubMedQA, XQuAD across languages, with unanswerable rows made by removing a question's source) by
`python -m bench.fit_answers`,
which writes the JSON files beside this module:

- `sentence.json`: P(a candidate sentence answers the question), fitted to rank each question's candidates
  (`fit_ranking`), from its similarity to the question (both
  embedders), the IDF-weighted share of the question it covers (alone, with its neighbours, in its heading), the
  ranks of its passage in retrieval (fused, dense, keyword), what it lacks of what the question asks for, and its
  kind (table row, other language, length);
- `answerable.json`: P(the sources answer the question) from the best candidates' probabilities and the
  evidence's coverage of the question, when the best candidate is in the question's language;
  `answerable_across.json` the same when it is in the other language (a cross-language question: its evidence
  scores lower on every signal, answerable or not, so it is judged against its own kind; fitted on XQuAD's
  parallel articles and the guideline dev cross-language rows);
- `other_language.json`: P(the best candidate in the other language than the lead's holds the answer), from the
  same signals read over those candidates alone, asked when the lead's model refuses: a question whose best
  candidates are in its own language but from the wrong source (a workspace in two languages, its source in the
  other one) is answered from the other language's evidence instead of refused; its threshold is where accepting
  gains the most right answers over wrong ones and answered unanswerable questions on the fit data, with no loss
  on any fit set;
- `correct.json`: P(the answer's first citation holds the answer), from the same signals: an answer's
  confidence, and whether it is marked confident (`confident_threshold`, chosen so that confident answers are
  right at least 90 % of the time on the fit data).

No weight here is set by hand: refitting replaces both files, and the thresholds that act on the probabilities
are Settings (`WORKSPACE_ANSWERS__*`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FITTED = Path(__file__).with_name("fitted")
SENTENCE_FEATURES = (
    "semantic_main", "semantic_multi", "coverage", "context", "heading", "fused_rank", "first_block",
    "dense_rank", "keyword_rank", "lacking", "numeric", "graded", "defining", "keyed", "table_row",
    "other_language", "short", "first_sentence",
)
ANSWERABLE_FEATURES = (
    "best", "second", "best_semantic", "best_coverage", "evidence_coverage", "lead_lacking", "fit_share",
    "unknown_terms", "zh", "other_language",
)


@dataclass(frozen=True)
class LogisticModel:
    """A logistic model over named features, standardised by the fitted means and scales."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    means: tuple[float, ...]
    scales: tuple[float, ...]

    def probability(self, values: Mapping[str, float]) -> float:
        """P(positive) for one row of named feature values (a missing feature counts as 0)."""
        z = self.bias
        for name, w, mean, scale in zip(self.features, self.weights, self.means, self.scales, strict=True):
            z += w * (float(values.get(name, 0.0)) - mean) / scale
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_json(self) -> dict[str, object]:
        """The model as stored on disk."""
        return {
            "features": list(self.features), "weights": [round(w, 6) for w in self.weights], "bias": round(self.bias, 6),
            "means": [round(m, 6) for m in self.means], "scales": [round(s, 6) for s in self.scales],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LogisticModel:
        """Rebuild a stored model."""
        def floats(key: str) -> tuple[float, ...]:
            return tuple(float(x) for x in data[key])

        return cls(tuple(str(f) for f in data["features"]), floats("weights"), float(data["bias"]),
                   floats("means"), floats("scales"))


def fit_logistic(
    rows: Sequence[Mapping[str, float]], labels: Sequence[int], features: Sequence[str], l2: float = 1.0,
    iterations: int = 50,
) -> LogisticModel:
    """Fit by Newton's method with an L2 penalty on standardised features (the intercept is not penalised)."""
    x = np.array([[float(r.get(f, 0.0)) for f in features] for r in rows], dtype=float)
    y = np.asarray(labels, dtype=float)
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - means) / scales])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -30, 30)))
        gradient = z.T @ (p - y) + penalty * beta
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return LogisticModel(tuple(features), tuple(float(b) for b in beta[1:]), float(beta[0]),
                         tuple(float(m) for m in means), tuple(float(s) for s in scales))


def fit_ranking(
    pools: Sequence[tuple[Sequence[Mapping[str, float]], Sequence[int], float]], features: Sequence[str],
    l2: float = 0.01,
) -> LogisticModel:
    """Fit a sentence model that ranks: a conditional logit over each question's pool (the probability that the
    best candidate is one of its positives, softmax over the pool), then calibrated to a probability per
    candidate by a logistic fit of the labels on its score (Platt scaling).

    `pools`: (candidates' features, their labels, the question's weight); pools without a positive are skipped.
    SEE: McFadden, "Conditional logit analysis of qualitative choice behavior" (1973); Platt (1999).
    """
    from scipy.optimize import minimize

    kept = [(rows, labels, w) for rows, labels, w in pools if rows and any(labels)]
    matrices = [np.array([[float(r.get(f, 0.0)) for f in features] for r in rows]) for rows, _, _ in kept]
    stacked = np.vstack(matrices)
    means, scales = stacked.mean(axis=0), stacked.std(axis=0)
    scales[scales < 1e-9] = 1.0
    data = [((x - means) / scales, np.asarray(labels) > 0, w) for x, (_, labels, w) in zip(matrices, kept, strict=True)]

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        total, gradient = l2 * float(beta @ beta) / 2, l2 * beta
        for x, positive, w in data:
            e = np.exp(x @ beta - (x @ beta).max())
            share, inside = e / e.sum(), e[positive] / e[positive].sum()
            total -= w * float(np.log(e[positive].sum() / e.sum()))
            gradient = gradient - w * ((x[positive] * inside[:, None]).sum(axis=0) - (x * share[:, None]).sum(axis=0))
        return total, gradient

    beta = minimize(loss, np.zeros(len(features)), jac=True, method="L-BFGS-B").x
    scores = [{"score": float(s)} for x, _, _ in data for s in x @ beta]
    labels = [int(p) for _, positive, _ in data for p in positive]
    platt = fit_logistic(scores, labels, ("score",), l2=0.0)
    a = platt.weights[0] / platt.scales[0]
    bias = platt.bias - a * platt.means[0]
    return LogisticModel(tuple(features), tuple(float(a * b) for b in beta), float(bias),
                         tuple(float(m) for m in means), tuple(float(s) for s in scales))


@dataclass(frozen=True)
class ScoringModels:
    """The sentence model and the answerability models, with the thresholds fitted beside them: refuse below
    `answerable_threshold` (`across_threshold` when the best evidence is in the other language); an answer at or
    above `confident_threshold` is marked confident."""

    sentence: LogisticModel
    answerable: LogisticModel
    correct: LogisticModel
    answerable_threshold: float = 0.5
    confident_threshold: float = 0.8
    across: LogisticModel | None = None
    across_threshold: float = 0.5
    other_language: LogisticModel | None = None
    other_language_threshold: float = 0.5

    def answerability(
        self, features: Mapping[str, float], threshold: float | None = None, across_threshold: float | None = None
    ) -> tuple[float, float]:
        """P(the sources answer the question) under the model of its kind, and the threshold to refuse below
        (the fitted one unless given): the cross-language model's when the best candidate is in the other
        language."""
        if self.across is not None and features.get("lead_other_language"):
            chosen = self.across_threshold if across_threshold is None else across_threshold
            return self.across.probability(features), chosen
        chosen = self.answerable_threshold if threshold is None else threshold
        return self.answerable.probability(features), chosen

    @classmethod
    def load(cls, folder: Path = FITTED) -> ScoringModels:
        """The fitted models in `folder` (the shipped ones by default)."""
        def read(name: str) -> dict[str, Any]:
            data: dict[str, Any] = json.loads((folder / name).read_text(encoding="utf-8"))
            return data

        answerable = read("answerable.json")
        chosen = answerable.get("thresholds", {})
        across = (folder / "answerable_across.json").exists()
        other = read("other_language.json") if (folder / "other_language.json").exists() else None
        return cls(
            LogisticModel.from_json(read("sentence.json")), LogisticModel.from_json(answerable),
            LogisticModel.from_json(read("correct.json")),
            float(chosen.get("answerable", 0.5)), float(chosen.get("confident", 0.8)),
            LogisticModel.from_json(read("answerable_across.json")) if across else None,
            float(chosen.get("answerable_across", 0.5)),
            LogisticModel.from_json(other) if other else None,
            float(other.get("threshold", 0.5)) if other else 0.5,
        )

    def save(self, folder: Path = FITTED) -> None:
        """Write the models, the thresholds beside the answerability model (`bench.fit_answers`)."""
        folder.mkdir(parents=True, exist_ok=True)
        thresholds = {"answerable": self.answerable_threshold, "confident": self.confident_threshold}
        files = [
            ("sentence.json", self.sentence.to_json()), ("correct.json", self.correct.to_json()),
        ]
        if self.across is not None:
            thresholds["answerable_across"] = self.across_threshold
            files.append(("answerable_across.json", self.across.to_json()))
        if self.other_language is not None:
            files.append(("other_language.json", {**self.other_language.to_json(), "threshold": self.other_language_threshold}))
        files.append(("answerable.json", {**self.answerable.to_json(), "thresholds": thresholds}))
        for name, data in files:
            (folder / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        if self.across is None:
            (folder / "answerable_across.json").unlink(missing_ok=True)
        if self.other_language is None:
            (folder / "other_language.json").unlink(missing_ok=True)


def question_features(
    pool: Sequence[tuple[float, Mapping[str, float]]], evidence: float, unknown_terms: int, zh: bool
) -> dict[str, float]:
    """What the answerability model reads of a question: its pool's (probability, features) pairs, best first, the
    evidence's coverage of the question, how many of its specific terms the workspace never uses, its language."""
    top = pool[:5]
    return {
        "best": pool[0][0], "second": pool[1][0] if len(pool) > 1 else 0.0,
        "best_semantic": max(_semantic(f) for _, f in top), "best_coverage": max(f.get("coverage", 0.0) for _, f in top),
        "evidence_coverage": evidence, "lead_lacking": pool[0][1].get("lacking", 0.0),
        "fit_share": sum(f.get("lacking", 0.0) == 0 for _, f in top) / len(top),
        "unknown_terms": float(min(3, unknown_terms)), "zh": float(zh),
        # Evidence in the other language covers the question only through translated names: less, when it answers.
        "other_language": sum(f.get("other_language", 0.0) for _, f in top) / len(top),
        "lead_other_language": pool[0][1].get("other_language", 0.0),  # which answerability model judges
    }


def other_language_side(
    pool: Sequence[tuple[float, Mapping[str, float]]], evidence: float, unknown_terms: int, zh: bool
) -> tuple[list[int], dict[str, float]] | None:
    """The pool's candidates in the other language than its lead's (their indices, best first) and the features the
    other-language model reads of them alone (`question_features` over them); None without such candidates."""
    lead = pool[0][1].get("other_language", 0.0)
    chosen = [i for i, (_, features) in enumerate(pool) if features.get("other_language", 0.0) != lead]
    if not chosen:
        return None
    return chosen, question_features([pool[i] for i in chosen], evidence, unknown_terms, zh)


def _semantic(features: Mapping[str, float]) -> float:
    """The main embedder's similarity where it was computed (English pairs), else the multilingual one's."""
    return features.get("semantic_main") or features.get("semantic_multi", 0.0)


def reciprocal(rank: int | None) -> float:
    """1/rank, 0 when not ranked."""
    return 1.0 / rank if rank else 0.0
