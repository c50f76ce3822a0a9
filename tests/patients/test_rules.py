"""Rules and type priors from YAML: the shipped file loads; a broken one says what and where."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_app.errors import RulesFileError
from workspace_app.patients.rules import load_rules, parse_rules, rule_hits


def test_the_shipped_rules_load_with_aliases_resolved() -> None:
    rules = load_rules()
    by_name = {r.name: r for r in rules.rules}
    assert by_name["hypokalemia_to_kcl"].when.concepts == frozenset({"abnormal:potassium↓"})
    assert by_name["high_bnp_to_diuretics"].then.concepts == frozenset({"class:diuretic"})  # 利尿剂
    assert rules.prior("history", "order") == 0.6 and rules.prior("order", "history") == 0.0
    low_k = ("lab", frozenset({"abnormal:potassium↓"}))
    kcl = ("order", frozenset({"class:potassium supplement"}))
    assert [r.name for r in rule_hits(rules, low_k, kcl, 3.0)] == ["hypokalemia_to_kcl"]
    assert rule_hits(rules, low_k, kcl, 30.0) == []  # outside its 24 h window
    assert rule_hits(rules, kcl, low_k, 3.0) == []  # the wrong way round


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [", "is not valid YAML"),
        ("rules:\n  - name: a\n    if_any_abnormal: [K+]\n    then_any_drug: [x]\n    window_hours: 1\n    weight: 1",
         "rule 1 (a): each 'if_any_abnormal' entry ends with ↑ or ↓"),
        ("rules:\n  - name: a\n    if_any_disease: [x]\n    then_any_drug: [y]\n    window_hours: 1\n    weight: high",
         "rule 1 (a): 'weight' is required and must be a number ≥ 0 (got 'high')"),
        ("rules:\n  - name: a\n    iff_any_disease: [x]", "rule 1 (a): unknown key 'iff_any_disease'"),
        ("rules:\n  - name: a\n    if_event_type: [surgery]\n    window_hours: 1\n    weight: 1",
         "needs at least one if_* key and one then_* key"),
        ("type_prior:\n  lab: {oder: 0.5}", "type_prior.lab.oder must be an event type"),
        ("rulez: []", "the top level must be a mapping with 'rules' and/or 'type_prior'"),
    ],
)
def test_a_broken_rules_file_names_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "my-rules.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RulesFileError) as caught:
        load_rules(path)
    assert str(path) in caught.value.user_message and message in caught.value.user_message


def test_rules_files_that_do_not_exist_say_so(tmp_path: Path) -> None:
    with pytest.raises(RulesFileError, match="Cannot read the rules file"):
        load_rules(tmp_path / "missing.yaml")
    assert parse_rules({"rules": []}).rules == ()
