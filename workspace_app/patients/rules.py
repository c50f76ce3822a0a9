"""Clinical rules and the type-prior matrix for related-event search (seed 004 §6): loaded from YAML (the
shipped rules.yaml, or a user's file), validated with messages that name the file, the rule and the key, and
matched against pairs of events.

Rules with `evidence` are links learned from the record (link_mining.py writes them to mined_rules.yaml with the
cut-points of graded findings under `grades` and how they were mined under `provenance`). They are kept apart
from the hand rules (`RuleSet.links`, indexed by their `if` concepts) and scored as their own feature;
`with_links` adds them to the hand rules (or a user's file), whose rules replace a mined one with the same name or
the same if/then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from workspace_app.errors import RulesFileError
from workspace_app.patients.lexicon import Lexicon, load_lexicon

DEFAULT_RULES = Path(__file__).with_name("rules.yaml")
DEFAULT_LINKS = Path(__file__).with_name("mined_rules.yaml")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader reads the ~1,000 mined rules in ~0.1 s
EVENT_TYPES = ("history", "order", "lab", "nursing", "surgery", "admission", "exam")
# YAML key suffix -> concept kind of the values (event types are matched on the event itself).
_KINDS = {"any_disease": "disease", "any_abnormal": "abnormal", "any_drug": "drug", "any_drug_class": "class",
          "any_medication": "med", "any_order": "order", "any_lab": "lab"}
_SIDE_KEYS = {f"{side}_{kind}" for side in ("if", "then") for kind in _KINDS} | {"if_event_type", "then_any_type"}
_RULE_KEYS = _SIDE_KEYS | {"name", "window_hours", "weight", "evidence"}
_EVIDENCE_KEYS = ("support", "occurrences", "patients", "lift")
_TOP_KEYS = {"rules", "type_prior", "grades", "provenance"}
_WORDS = {"↓": ("low", "very low", "markedly low"), "↑": ("high", "very high", "markedly high")}


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
    evidence: Mapping[str, float] | None = None
    reason: str = ""


@dataclass(frozen=True)
class RuleSet:
    """The hand rules, the type-prior matrix R[query type][candidate type], the links learned from the record
    and the cut-points of graded findings ('hemoglobin↓': [a, b])."""

    rules: tuple[Rule, ...] = ()
    type_prior: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    links: tuple[Rule, ...] = ()
    grades: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def prior(self, query_type: str, candidate_type: str) -> float:
        """R[query type, candidate type] (0 when not given)."""
        return float(self.type_prior.get(query_type, {}).get(candidate_type, 0.0))

    @cached_property
    def link_index(self) -> Mapping[str, tuple[Rule, ...]]:
        """The links by each concept of their `if` side."""
        index: dict[str, list[Rule]] = {}
        for link in self.links:
            for concept in link.when.concepts:
                index.setdefault(concept, []).append(link)
        return {concept: tuple(found) for concept, found in index.items()}

    def with_links(self, mined: RuleSet) -> RuleSet:
        """These rules with the links of `mined` added, but for those one of these rules or links replaces (same
        name, or same if and then); grades of both, these first."""
        taken = {r.name for r in (*self.rules, *self.links)} | {(r.when, r.then) for r in (*self.rules, *self.links)}
        kept = tuple(r for r in mined.links if r.name not in taken and (r.when, r.then) not in taken)
        return replace(self, links=self.links + kept, grades={**mined.grades, **self.grades},
                       provenance=self.provenance or mined.provenance)


def load_rules(path: Path | None = None, links: Path | None = None) -> RuleSet:
    """The rule set in a YAML file (the shipped one by default), with the links of a mined rules file added when
    one is given. Raises RulesFileError saying what is wrong."""
    if links is not None:
        return load_rules(path).with_links(load_rules(links))
    path = path or DEFAULT_RULES
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except OSError as exc:
        raise RulesFileError(f"Cannot read the rules file {path}: {exc.strerror or exc}.") from exc
    except yaml.YAMLError as exc:
        raise RulesFileError(f"The rules file {path} is not valid YAML: {exc}".rstrip(".") + ".") from exc
    return parse_rules(data, str(path))


def parse_rules(data: Any, source: str = "rules", lexicon: Lexicon | None = None) -> RuleSet:
    """A validated rule set from parsed YAML."""
    lexicon = lexicon or load_lexicon()
    if not isinstance(data, dict) or set(data) - _TOP_KEYS:
        raise RulesFileError(f"{source}: the top level must be a mapping with 'rules' and/or 'type_prior' "
                             "(a mined file also has 'grades' and 'provenance').")
    rules_data = data.get("rules") or []
    if not isinstance(rules_data, list):
        raise RulesFileError(f"{source}: 'rules' must be a list of rules.")
    rules = tuple(_rule(item, f"{source}: rule {n}", lexicon) for n, item in enumerate(rules_data, start=1))
    names = [r.name for r in rules]
    if len(names) != len(set(names)):
        raise RulesFileError(f"{source}: rule names must be unique ({sorted({n for n in names if names.count(n) > 1})}).")
    provenance = data.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise RulesFileError(f"{source}: 'provenance' must be a mapping.")
    return RuleSet(
        tuple(r for r in rules if r.evidence is None), _type_prior(data.get("type_prior") or {}, source),
        tuple(r for r in rules if r.evidence is not None), _grades(data.get("grades") or {}, source, lexicon),
        provenance,
    )


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
    window_h, weight = _number(item, "window_hours", where), _number(item, "weight", where)
    evidence = _evidence(item.get("evidence"), where)
    reason = _reason(item["name"], when, then, window_h, evidence) if evidence else ""
    return Rule(item["name"], when, then, window_h, weight, evidence, reason)


def _evidence(value: Any, where: str) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or any(
        isinstance(value.get(k), bool) or not isinstance(value.get(k), (int, float)) for k in _EVIDENCE_KEYS
    ):
        raise RulesFileError(f"{where}: 'evidence' must map {', '.join(_EVIDENCE_KEYS)} (and more) to numbers.")
    return {str(k): float(v) for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def finding_words(concept: str) -> str:
    """'abnormal:potassium↓' -> 'low potassium', 'abnormal:inr(pt)↑↑↑' -> 'markedly high inr(pt)'."""
    finding = concept.removeprefix("abnormal:")
    name = finding.rstrip("↑↓")
    arrows = finding[len(name):]
    words = _WORDS.get(arrows[:1])
    return f"{words[min(len(arrows), 3) - 1]} {name}" if words else f"abnormal {name}"


def _treatment_words(concept: str) -> str:
    kind, name = concept.split(":", 1)
    return {"class": f"{name} (drug class)", "order": f"an order of {name}", "lab": f"a repeat {name}",
            "abnormal": finding_words(concept)}.get(kind, name)


def _reason(name: str, when: Condition, then: Condition, window_h: float, evidence: Mapping[str, float]) -> str:
    """The link in words: what follows what, how often, how much more than chance, how soon."""
    first = " or ".join(finding_words(c) if c.startswith("abnormal:") else _treatment_words(c) for c in sorted(when.concepts))
    second = " or ".join(_treatment_words(c) for c in sorted(then.concepts)) or name
    delay = evidence.get("median_delay_h")
    return (f"{second} often follows {first} in this record: {evidence['support']:.0f} of "
            f"{evidence['occurrences']:.0f} times within {window_h:g} h, {evidence['lift']:.1f}× chance"
            + (f", median {delay:g} h later" if delay is not None else "")
            + f" (in {evidence['patients']:.0f} patients)")


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
        lab = name.rstrip("↑↓")
        return lexicon.lab(lab) + name[len(lab):] if lab != name else name
    if kind == "lab":
        return lexicon.lab(name)
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


def _grades(data: Any, source: str, lexicon: Lexicon) -> dict[str, tuple[float, ...]]:
    if not isinstance(data, dict):
        raise RulesFileError(f"{source}: 'grades' must map a finding ('hemoglobin↓') to its cut-points.")
    grades = {}
    for finding, cuts in data.items():
        if not isinstance(finding, str) or finding[-1:] not in ("↑", "↓") or not isinstance(cuts, list) or any(
            isinstance(c, bool) or not isinstance(c, (int, float)) for c in cuts
        ):
            raise RulesFileError(f"{source}: grades.{finding} must be a finding ending with ↑ or ↓ and a list of numbers.")
        grades[_concept_name("abnormal", finding, lexicon)] = tuple(float(c) for c in cuts)
    return grades


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


def link_hits(rules: RuleSet, first: frozenset[str], second: frozenset[str], gap_h: float) -> list[Rule]:
    """Links that fire for an earlier event with keys `first` and a later one with keys `second`, `gap_h` hours
    apart (keys: concepts, record names, graded findings)."""
    found: dict[str, Rule] = {}
    for concept in first & rules.link_index.keys():
        for link in rules.link_index[concept]:
            if 0 <= gap_h <= link.window_h and link.then.concepts & second:
                found[link.name] = link
    return list(found.values())
