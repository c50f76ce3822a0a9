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


def test_a_short_form_covers_the_terms_its_long_form_spells() -> None:
    terms = ["san", "francisco", "syncop", "rule", "npv"]
    plain = Coverage(terms, {})
    read = Coverage(terms, {}, {"sfsr": ("san", "francisco", "syncop", "rule")})
    row = "SFSR (72) 2004 684 79 (12%) 7-d serious events Yes 99"
    assert plain.of(row) == 0.0
    assert read.of(row) == 0.8
    assert read.of("OESIL (67) 2003 270 31 (11%) 1-y death") == 0.0
