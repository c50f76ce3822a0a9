"""Fusion: RRF (the k=60 arithmetic, one-sided ids, weights, tie order) and z-score fusion."""

from __future__ import annotations

import statistics

import pytest

from workspace_app.retrieval.fusion import fuse_rankings, fuse_scores


def test_scores_are_reciprocal_ranks_with_k_60() -> None:
    fused = fuse_rankings({"dense": ["a", "b", "c"], "sparse": ["c", "a"]})
    scores = {item: score for item, score, _ in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [item for item, _, _ in fused] == ["a", "c", "b"]


def test_ranks_name_every_method_and_none_where_an_id_is_missing() -> None:
    fused = fuse_rankings({"dense": ["a", "b"], "sparse": ["c", "a"]})
    ranks = {item: item_ranks for item, _, item_ranks in fused}
    assert ranks == {
        "a": {"dense": 1, "sparse": 2},
        "b": {"dense": 2, "sparse": None},
        "c": {"dense": None, "sparse": 1},
    }


def test_an_id_in_one_list_only_keeps_its_single_contribution() -> None:
    fused = fuse_rankings({"dense": ["x"], "sparse": []}, k=10)
    assert fused == [("x", pytest.approx(1 / 11), {"dense": 1, "sparse": None})]


def test_custom_k_changes_the_scores() -> None:
    fused = {item: score for item, score, _ in fuse_rankings({"dense": ["a", "b"]}, k=1)}
    assert fused == {"a": pytest.approx(1 / 2), "b": pytest.approx(1 / 3)}


def test_weights_scale_each_methods_contribution() -> None:
    rankings = {"dense": ["d1", "shared"], "sparse": ["s1", "shared"]}
    fused = fuse_rankings(rankings, weights={"dense": 2.0, "sparse": 0.5})
    scores = {item: score for item, score, _ in fused}
    assert scores["d1"] == pytest.approx(2.0 / 61)
    assert scores["s1"] == pytest.approx(0.5 / 61)
    assert scores["shared"] == pytest.approx(2.0 / 62 + 0.5 / 62)
    assert [item for item, _, _ in fused] == ["shared", "d1", "s1"]


def test_zero_weight_keeps_the_rank_but_adds_nothing() -> None:
    fused = fuse_rankings({"dense": ["a", "b"], "sparse": ["b"]}, weights={"dense": 1.0, "sparse": 0.0})
    scores = {item: score for item, score, _ in fused}
    ranks = {item: item_ranks for item, _, item_ranks in fused}
    assert scores["b"] == pytest.approx(1 / 62)
    assert ranks["b"] == {"dense": 2, "sparse": 1}
    assert [item for item, _, _ in fused] == ["a", "b"]


def test_methods_missing_from_weights_count_fully() -> None:
    fused = fuse_rankings({"dense": ["a"], "sparse": ["b"]}, weights={"dense": 0.5})
    scores = {item: score for item, score, _ in fused}
    assert scores == {"a": pytest.approx(0.5 / 61), "b": pytest.approx(1 / 61)}


def test_equal_scores_are_ordered_by_best_single_rank() -> None:
    # "top" is first in one list and absent from the other; "mid" is second in both: 1/61 < 2/62,
    # so "mid" wins on score. With k large the scores approach a tie and the best single rank decides.
    fused = fuse_rankings({"dense": ["top", "mid"], "sparse": ["other", "mid"]})
    assert [item for item, _, _ in fused] == ["mid", "top", "other"]
    tied = fuse_rankings({"dense": ["c", "d"], "sparse": ["d", "c"]})
    assert tied[0][1] == pytest.approx(tied[1][1])
    assert {tied[0][0], tied[1][0]} == {"c", "d"}


def test_empty_rankings_give_nothing() -> None:
    assert fuse_rankings({}) == []
    assert fuse_rankings({"dense": [], "sparse": []}) == []


def test_fused_scores_are_sorted_best_first() -> None:
    dense = [f"d{i}" for i in range(30)]
    sparse = [f"d{i}" for i in range(29, -1, -3)] + ["only-sparse"]
    scores = [score for _, score, _ in fuse_rankings({"dense": dense, "sparse": sparse})]
    assert scores == sorted(scores, reverse=True)
    assert len(scores) == 31


def test_score_fusion_sums_per_list_z_scores() -> None:
    dense = [("a", 0.9), ("b", 0.5), ("c", 0.4)]
    sparse = [("c", 12.0), ("a", 3.0)]
    fused = {item: score for item, score, _ in fuse_scores({"dense": dense, "sparse": sparse})}

    def z(items: list[tuple[str, float]]) -> dict[str, float]:
        values = [v for _, v in items]
        return {k: (v - statistics.fmean(values)) / statistics.pstdev(values) for k, v in items}

    zd, zs = z(dense), z(sparse)
    assert fused["a"] == pytest.approx(zd["a"] + zs["a"])
    assert fused["c"] == pytest.approx(zd["c"] + zs["c"])
    # b is missing from the BM25 list: it counts as that list's weakest candidate
    assert fused["b"] == pytest.approx(zd["b"] + min(zs.values()))


def test_score_fusion_keeps_a_clear_winner_of_one_list_on_top() -> None:
    """RRF ranks an id found by both lists above a far-ahead hit of one list; score fusion does not."""
    dense = [("clear", 0.95)] + [(f"d{i}", 0.30 - i * 0.001) for i in range(20)] + [("both", 0.29)]
    sparse = [(f"s{i}", 5.0 - i * 0.01) for i in range(20)] + [("both", 4.7)]
    by_rrf = [item for item, _, _ in fuse_rankings({m: [i for i, _ in v] for m, v in (("dense", dense), ("sparse", sparse))})]
    by_score = [item for item, _, _ in fuse_scores({"dense": dense, "sparse": sparse})]
    assert by_rrf[0] == "both"
    assert by_score[0] == "clear"


def test_score_fusion_reports_ranks_and_honours_zero_weight() -> None:
    fused = fuse_scores({"dense": [("a", 0.9), ("b", 0.1)], "sparse": [("b", 2.0), ("a", 1.0)]}, {"dense": 0.0})
    assert [item for item, _, _ in fused] == ["b", "a"]
    assert fused[0][2] == {"dense": 2, "sparse": 1}


def test_score_fusion_of_single_and_empty_lists() -> None:
    assert fuse_scores({"dense": [("x", 0.5)], "sparse": []}) == [("x", 0.0, {"dense": 1, "sparse": None})]
    assert fuse_scores({"dense": [], "sparse": []}) == []
