"""Abbreviation definitions found in guideline text, and the query expansion built on them."""

from __future__ import annotations

from workspace_app.text.abbreviations import find_abbreviations
from workspace_app.text.analyzer import expand_with_abbreviations, query_terms


def test_definitions_are_paired_with_their_long_forms() -> None:
    text = (
        "Droxidopa can be beneficial in patients with syncope due to neurogenic orthostatic hypotension (OH). "
        "Patients with heart failure with reduced ejection fraction (HFrEF) and quality of life (QoL) scores "
        "were studied in randomized controlled trials (RCTs) sponsored by Roche (Roche)."
    )
    found = find_abbreviations(text)
    assert found["OH"] == "orthostatic hypotension"
    assert found["HFrEF"] == "heart failure with reduced ejection fraction"
    assert found["QoL"] == "quality of life"
    assert found["RCTs"] == "randomized controlled trials"
    assert "Roche" not in found


def test_parentheses_that_do_not_spell_the_term_are_ignored() -> None:
    assert find_abbreviations("blood pressure was lowered (see Table 4) in 12 trials (n=340)") == {}


def test_query_spelling_out_a_long_form_also_searches_its_short_form() -> None:
    question = "Which drug helps syncope caused by neurogenic orthostatic hypotensions?"
    terms = expand_with_abbreviations(question, query_terms(question), {"OH": "orthostatic hypotension", "VVS": "vasovagal syncope"})
    assert "oh" in terms
    assert "vvs" not in terms
