"""Term matching in evidence: a question's terms found in a sentence, however the sentence inflects them."""

from __future__ import annotations

from workspace_app.text.terms import Coverage, in_loose, loose


def test_a_loose_key_matches_its_plural() -> None:
    text = loose("engage in muscle-strengthening activities that involve all major muscle groups")
    assert in_loose(loose("muscle-strengthening activity"), text)
    assert in_loose(loose("muscle group"), text)  # "-s" plurals contain the key
    assert not in_loose(loose("muscle-strengthening therapy"), text)


def test_coverage_counts_a_name_written_in_the_plural() -> None:
    names = Coverage([loose("muscle-strengthening activity")], {})
    assert names.of("Women should do muscle-strengthening activities twice a week.") == 1.0
    assert names.of("Women should walk.") == 0.0
