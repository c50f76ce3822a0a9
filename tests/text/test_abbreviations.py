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


def test_a_tables_glossary_note_defines_its_terms() -> None:
    """ACC/AHA tables define their abbreviations only in a note under the table; the table says "SFSR (72)"."""
    note = (
        "AVB indicates atrioventricular block; BP, blood pressure; NPV, negative predictive value; SFSR, San Francisco "
        "Syncope Rule; TIA, transient ischemic attack; and VHD, valvular heart disease.\nNext paragraph; X, y."
    )
    found = find_abbreviations(note)
    assert found["AVB"] == "atrioventricular block"
    assert found["SFSR"] == "San Francisco Syncope Rule"
    assert found["VHD"] == "valvular heart disease"
    assert "X" not in found


def test_a_glossary_entry_whose_letters_do_not_spell_the_term_is_ignored() -> None:
    found = find_abbreviations("ACC indicates American College of Cardiology; FDA, see the agency's website; HF, heart failure.")
    assert found["ACC"] == "American College of Cardiology"
    assert "FDA" not in found
    assert found["HF"] == "heart failure"


def test_query_spelling_out_a_long_form_also_searches_its_short_form() -> None:
    question = "Which drug helps syncope caused by neurogenic orthostatic hypotensions?"
    terms = expand_with_abbreviations(question, query_terms(question), {"OH": "orthostatic hypotension", "VVS": "vasovagal syncope"})
    assert "oh" in terms
    assert "vvs" not in terms
