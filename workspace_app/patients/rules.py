"""Clinical rules and the type-prior matrix for related-event search (seed 004 §6): loaded from YAML (the
shipped rules.yaml, or a user's file), validated with messages that name the file, the rule and the key, and
matched against pairs of events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from workspace_app.errors import RulesFileError
from workspace_app.patients.lexicon import Lexicon, load_lexicon

DEFAULT_RULES = Path(__file__).with_name("rules.yaml")
EVENT_TYPES = ("history", "order", "lab", "nursing", "surgery", "admission", "exam")
# YAML key suffix -> concept kind of the values (event types are matched on the event itself).
_KINDS = {"any_disease": "disease", "any_abnormal": "abnormal", "any_drug": "drug", "any_drug_class": "class"}
_SIDE_KEYS = {f"{side}_{kind}" for side in ("if", "then") for kind in _KINDS} | {"if_event_type", "then_any_type"}
_RULE_KEYS = _SIDE_KEYS | {"name", "window_hours", "weight"}


@dataclass(frozen=True)
class Condition:
    """What one side of a rule asks of an event: any of these concepts, and/or one of these types."""

    concepts: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()

    def matches(self, event_type: str, concepts: frozenset[str]) -> bool:
        """Whether an event of this type with these concepts satisfies the condition."""
        if self.types and event_type not in self.types:
            return False
        return not self.concepts or bool(self.concepts & concepts)


@dataclass(frozen=True)
class Rule:
    """An earlier event matching `when`, a later one matching `then` within `window_h` hours: +`weight`."""

    name: str
    when: Condition
    then: Condition
    window_h: float
    weight: float


@dataclass(frozen=True)
class RuleSet:
    """The rules and the type-prior matrix R[query type][candidate type]."""

    rules: tuple[Rule, ...] = ()
    type_prior: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def prior(self, query_type: str, candidate_type: str) -> float:
        """R[query type, candidate type] (0 when not given)."""
        return float(self.type_prior.get(query_type, {}).get(candidate_type, 0.0))


def load_rules(path: Path | None = None) -> RuleSet:
    """The rule set in a YAML file (the shipped one by default). Raises RulesFileError saying what is wrong."""
    path = path or DEFAULT_RULES
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RulesFileError(f"Cannot read the rules file {path}: {exc.strerror or exc}.") from exc
    except yaml.YAMLError as exc:
        raise RulesFileError(f"The rules file {path} is not valid YAML: {exc}".rstrip(".") + ".") from exc
    return parse_rules(data, str(path))


def parse_rules(data: Any, source: str = "rules", lexicon: Lexicon | None = None) -> RuleSet:
    """A validated rule set from parsed YAML."""
    lexicon = lexicon or load_lexicon()
    if not isinstance(data, dict) or set(data) - {"rules", "type_prior"}:
        raise RulesFileError(f"{source}: the top level must be a mapping with 'rules' and/or 'type_prior'.")
    rules_data = data.get("rules") or []
    if not isinstance(rules_data, list):
        raise RulesFileError(f"{source}: 'rules' must be a list of rules.")
    rules = tuple(_rule(item, f"{source}: rule {n}", lexicon) for n, item in enumerate(rules_data, start=1))
    names = [r.name for r in rules]
    if len(names) != len(set(names)):
        raise RulesFileError(f"{source}: rule names must be unique ({sorted({n for n in names if names.count(n) > 1})}).")
    return RuleSet(rules, _type_prior(data.get("type_prior") or {}, source))


def _rule(item: Any, where: str, lexicon: Lexicon) -> Rule:
    if not isinstance(item, dict):
        raise RulesFileError(f"{where}: each rule must be a mapping with name, if_*, then_*, window_hours, weight.")
    where = f"{where} ({item.get('name', 'unnamed')!s})"
    unknown = sorted(set(item) - _RULE_KEYS)
    if unknown:
        raise RulesFileError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_RULE_KEYS))}.")
    if not isinstance(item.get("name"), str) or not item["name"].strip():
        raise RulesFileError(f"{where}: 'name' is required and must be text.")
    when, then = (_condition(item, side, where, lexicon) for side in ("if", "then"))
    if when == Condition() or then == Condition():
        raise RulesFileError(f"{where}: a rule needs at least one if_* key and one then_* key.")
    return Rule(item["name"], when, then, _number(item, "window_hours", where), _number(item, "weight", where))


def _condition(item: dict[str, Any], side: str, where: str, lexicon: Lexicon) -> Condition:
    concepts: set[str] = set()
    for suffix, kind in _KINDS.items():
        for value in _names(item, f"{side}_{suffix}", where):
            concepts.add(f"{kind}:{_concept_name(kind, value, lexicon)}")
    type_key = "if_event_type" if side == "if" else "then_any_type"
    types = set(_names(item, type_key, where))
    bad = sorted(types - set(EVENT_TYPES))
    if bad:
        raise RulesFileError(f"{where}: {type_key} has unknown event type {bad[0]!r}; use {', '.join(EVENT_TYPES)}.")
    return Condition(frozenset(concepts), frozenset(types))


def _concept_name(kind: str, value: str, lexicon: Lexicon) -> str:
    name = value.strip().lower()
    if kind == "class":
        return lexicon.class_names.get(name, name)
    if kind == "abnormal":
        return lexicon.lab(name.rstrip("↑↓")) + name[-1] if name[-1:] in ("↑", "↓") else name
    return name


def _names(item: dict[str, Any], key: str, where: str) -> list[str]:
    value = item.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise RulesFileError(f"{where}: {key!r} must be a list of names.")
    if key.endswith("any_abnormal") and any(v.strip()[-1] not in "↑↓" for v in value):
        raise RulesFileError(f"{where}: each {key!r} entry ends with ↑ or ↓ (e.g. 'K+↓').")
    return list(value)


def _number(item: dict[str, Any], key: str, where: str) -> float:
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise RulesFileError(f"{where}: {key!r} is required and must be a number ≥ 0 (got {value!r}).")
    return float(value)


def _type_prior(data: Any, source: str) -> dict[str, dict[str, float]]:
    if not isinstance(data, dict):
        raise RulesFileError(f"{source}: 'type_prior' must map an event type to {{event type: weight}}.")
    prior: dict[str, dict[str, float]] = {}
    for query_type, row in data.items():
        if query_type not in EVENT_TYPES or not isinstance(row, dict):
            raise RulesFileError(f"{source}: type_prior.{query_type} must be one of {', '.join(EVENT_TYPES)} "
                                 "mapping to {event type: weight}.")
        for target, weight in row.items():
            if target not in EVENT_TYPES or isinstance(weight, bool) or not isinstance(weight, (int, float)):
                raise RulesFileError(f"{source}: type_prior.{query_type}.{target} must be an event type "
                                     f"({', '.join(EVENT_TYPES)}) with a number (got {weight!r}).")
        prior[str(query_type)] = {str(t): float(w) for t, w in row.items()}
    return prior


def rule_hits(
    rules: RuleSet, first: tuple[str, frozenset[str]], second: tuple[str, frozenset[str]], gap_h: float
) -> list[Rule]:
    """Rules that fire for an earlier event `first` (type, concepts) and a later `second`, `gap_h` hours apart."""
    return [
        rule for rule in rules.rules
        if 0 <= gap_h <= rule.window_h and rule.when.matches(*first) and rule.then.matches(*second)
    ]
