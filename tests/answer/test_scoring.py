"""The fitted scoring models: fitting, storing and the shipped files."""

from __future__ import annotations

import random
from pathlib import Path

from workspace_app.answer.scoring import (
    ANSWERABLE_FEATURES,
    SENTENCE_FEATURES,
    LogisticModel,
    ScoringModels,
    fit_logistic,
)


def _rows(n: int, seed: int = 7) -> tuple[list[dict[str, float]], list[int]]:
    """Rows whose label depends on `signal` (with noise) and not at all on `noise`."""
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        signal, noise = rng.gauss(0, 1), rng.gauss(5, 3)
        rows.append({"signal": signal, "noise": noise})
        labels.append(int(signal + rng.gauss(0, 0.5) > 0.3))
    return rows, labels


def test_fit_finds_the_signal_and_ignores_the_noise() -> None:
    rows, labels = _rows(2000)
    model = fit_logistic(rows, labels, ("signal", "noise"), l2=1.0)
    signal, noise = model.weights
    assert signal > 2.0 and abs(noise) < 0.3
    assert model.probability({"signal": 2.0, "noise": 5.0}) > 0.9
    assert model.probability({"signal": -2.0, "noise": 5.0}) < 0.1
    held, held_labels = _rows(500, seed=11)
    right = sum((model.probability(r) >= 0.5) == bool(y) for r, y in zip(held, held_labels, strict=True))
    assert right / len(held) > 0.85


def test_a_constant_feature_gets_no_weight_and_missing_features_count_as_zero() -> None:
    rows, labels = _rows(500)
    model = fit_logistic([{**r, "constant": 1.0} for r in rows], labels, ("signal", "constant"))
    assert model.weights[1] == 0.0
    assert model.probability({}) == model.probability({"signal": 0.0, "constant": 0.0})


def test_models_round_trip_through_their_files(tmp_path: Path) -> None:
    rows, labels = _rows(300)
    model = fit_logistic(rows, labels, ("signal", "noise"))
    ScoringModels(model, model, model, 0.3, 0.7).save(tmp_path)
    again = ScoringModels.load(tmp_path)
    assert isinstance(again.sentence, LogisticModel)
    assert (again.answerable_threshold, again.confident_threshold) == (0.3, 0.7)
    for row in rows[:20]:
        assert abs(again.correct.probability(row) - model.probability(row)) < 1e-4


def test_a_question_whose_best_evidence_is_in_the_other_language_is_judged_by_its_own_model(tmp_path: Path) -> None:
    rows, labels = _rows(300)
    same = fit_logistic(rows, labels, ("signal", "noise"))
    across = fit_logistic(rows, [1 - y for y in labels], ("signal", "noise"))
    ScoringModels(same, same, same, 0.6, 0.8, across, 0.3).save(tmp_path)
    models = ScoringModels.load(tmp_path)
    row = {"signal": 2.0, "noise": 5.0}
    p_same, refuse_same = models.answerability({**row, "lead_other_language": 0.0})
    p_across, refuse_across = models.answerability({**row, "lead_other_language": 1.0})
    assert (refuse_same, refuse_across) == (0.6, 0.3)
    assert p_same > 0.9 and p_across < 0.1
    # Settings override either threshold; a folder without the cross-language model judges every question alike.
    assert models.answerability({**row, "lead_other_language": 1.0}, 0.5, 0.2)[1] == 0.2
    ScoringModels(same, same, same, 0.6, 0.8).save(tmp_path)
    alone = ScoringModels.load(tmp_path)
    assert alone.across is None and alone.answerability({**row, "lead_other_language": 1.0}) == (p_same, 0.6)


def test_the_other_language_model_round_trips_and_goes_with_its_file(tmp_path: Path) -> None:
    rows, labels = _rows(300)
    model = fit_logistic(rows, labels, ("signal", "noise"))
    ScoringModels(model, model, model, 0.6, 0.8, None, 0.5, model, 0.35).save(tmp_path)
    again = ScoringModels.load(tmp_path)
    assert again.other_language is not None and again.other_language_threshold == 0.35
    assert abs(again.other_language.probability(rows[0]) - model.probability(rows[0])) < 1e-4
    ScoringModels(model, model, model, 0.6, 0.8).save(tmp_path)
    assert not (tmp_path / "other_language.json").exists()
    assert ScoringModels.load(tmp_path).other_language is None


def test_the_shipped_models_read_the_features_the_answerer_computes() -> None:
    shipped = ScoringModels.load()
    assert shipped.sentence.features == SENTENCE_FEATURES
    assert shipped.answerable.features == shipped.correct.features == ANSWERABLE_FEATURES
    assert shipped.across is not None and shipped.across.features == ANSWERABLE_FEATURES
    assert 0 < shipped.across_threshold < 1
    assert shipped.other_language is not None and shipped.other_language.features == ANSWERABLE_FEATURES
    assert 0 < shipped.other_language_threshold < 1
    assert 0 < shipped.answerable_threshold <= shipped.confident_threshold < 1
    # Fitted, not hand-set: standardised by the fit data's own spread.
    assert any(scale != 1.0 for scale in shipped.sentence.scales)
