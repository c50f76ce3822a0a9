"""Concepts of an event, found at import by lexicon and rules (seed 004 §5): drugs and their classes, diseases,
procedures, lab items and lab abnormalities with ↑/↓ ('potassium↓', 'ntprobnp↑').

Concepts are strings with a kind prefix ('drug:furosemide', 'class:diuretic', 'disease:heart failure',
'lab:potassium', 'abnormal:potassium↓', 'icd:4280'), so rules and the overlap score can tell kinds apart.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from workspace_app.models.events import Event
from workspace_app.patients.lexicon import Lexicon, load_lexicon

# "Potassium 3.1 mmol/L (low; ref 3.5–5.1)" as the importer writes it, or "钾 3.1↓" / "K+ 3.1 ↓" from other systems.
_LAB = re.compile(
    r"^(?P<label>.+?)\s+[<>]?=?\s*-?\d[\d.,]*\s*[^(↑↓]*?\s*(?:\((?P<flag>low|high|abnormal)?|(?P<arrow>[↑↓])|$)"
)
_ARROWS = {"low": "↓", "high": "↑", "abnormal": "!", "↑": "↑", "↓": "↓"}
# Weights of concept kinds in the overlap (seed 004 §4.2: drugs and abnormal findings count more).
KIND_WEIGHTS = {"class": 2.0, "abnormal": 2.0, "drug": 1.5, "disease": 1.5, "lab": 1.0, "icd": 1.0, "procedure": 1.0}


def lab_concepts(content: str, lexicon: Lexicon) -> set[str]:
    """'lab:<item>' and, when flagged, 'abnormal:<item>↑|↓|!' from a lab result's text."""
    match = _LAB.match(content)
    if not match:
        return set()
    lab = lexicon.lab(match["label"])
    found = {f"lab:{lab}"}
    flag = match["flag"] or match["arrow"]
    if flag:
        found.add(f"abnormal:{lab}{_ARROWS[flag]}")
    return found


def text_concepts(text: str, lexicon: Lexicon) -> set[str]:
    """Drugs (with their class) and diseases named in a text."""
    lowered = text.lower()
    found: set[str] = set()
    for match in lexicon.drugs.finditer(lowered):
        name = match.group(0)
        found |= {f"drug:{name}", f"class:{lexicon.drug_class[name]}"}
    for match in lexicon.diseases.finditer(lowered):
        found.add(f"disease:{lexicon.disease_words[match.group(0)]}")
    return found


def extract_concepts(event: Event, lexicon: Lexicon | None = None) -> tuple[str, ...]:
    """The sorted concepts of an event (its own coded ones, e.g. 'icd:4280', are kept)."""
    lexicon = lexicon or load_lexicon()
    found = set(event.concepts) | text_concepts(event.content, lexicon)
    if event.event_type == "lab":
        found |= lab_concepts(event.content, lexicon)
    return tuple(sorted(found))


def concept_overlap(a: Collection[str], b: Collection[str]) -> float:
    """Weighted Jaccard of two concept sets (each concept weighs by its kind); 0 when either is empty."""
    left, right = set(a), set(b)
    union = left | right
    if not left or not right:
        return 0.0
    weight = lambda concept: KIND_WEIGHTS.get(concept.split(":", 1)[0], 1.0)
    return sum(weight(c) for c in left & right) / sum(weight(c) for c in union)


# What a medication or order event names, read from the record's own fields as the MIMIC-IV importer writes them
# ('Prescription: Phytonadione 10 mg PO (main)', 'Medication administration: Insulin: Administered',
# 'Infusion: Packed Red Blood Cells 350 mL (Blood Products)', 'Order: Blood Bank / Red Cell Product Order (new)').
# No lexicon: a drug the lexicon does not know (phytonadione) is still a key the link miner can learn.
_NAMED = {
    "prescriptions": re.compile(r"^Prescription: (?P<name>.+?)(?=\s+[-<>]?\.?\d|\s+\([a-z ]+\)$|$)"),
    "emar": re.compile(r"^Medication administration: (?P<name>.+): (?P<what>[^:]*)$"),
    "inputevents": re.compile(r"^Infusion: (?P<name>.+?)(?=\s+-?\.?\d)"),
    "poe": re.compile(r"^Order: (?P<name>[^(;]+?) \("),
}
_GIVEN = re.compile(r"^(?:delayed |partial )?administered|^(?:re)?started|^applied", re.IGNORECASE)
_PARENTHESES = re.compile(r"\s*\([^)]*\)")


def record_keys(event: Event) -> set[str]:
    """'med:<name>' of a prescription, a given administration or an infusion, 'order:<type / subtype>' of a
    provider order: the names the record itself uses, lower-cased, without parentheses."""
    pattern = _NAMED.get(event.source_table)
    match = pattern.match(event.content) if pattern else None
    if match is None or (event.source_table == "emar" and not _GIVEN.match(match["what"].strip())):
        return set()
    name = " ".join(_PARENTHESES.sub("", match["name"]).lower().split()).strip(" -/")
    if not name:
        return set()
    return {f"{'order' if event.source_table == 'poe' else 'med'}:{name}"}


_VALUE = re.compile(r"^.+?\s+[<>]?=?\s*(?P<value>-?\d+(?:\.\d+)?)(?![\d.])")


def lab_value(content: str) -> float | None:
    """The number a lab result's text gives ('Hemoglobin 7.2 g/dL (low; ...)' -> 7.2); None without one."""
    match = _VALUE.match(content)
    return float(match["value"]) if match else None


def graded_findings(concepts: Collection[str], value: float | None,
                    grades: Mapping[str, Sequence[float]]) -> set[str]:
    """The grades of a lab's abnormal findings its value reaches: with cut-points [a, b] for 'hemoglobin↓',
    a value at or below a adds 'abnormal:hemoglobin↓↓' and at or below b 'abnormal:hemoglobin↓↓↓' (at or above,
    for ↑). Cut-points are learned from the record by the link miner."""
    found: set[str] = set()
    if value is None:
        return found
    for concept in concepts:
        finding = concept.removeprefix("abnormal:")
        for level, cut in enumerate(grades.get(finding, ()), start=2):
            if (value <= cut) if finding.endswith("↓") else (value >= cut):
                found.add(f"{concept}{concept[-1] * (level - 1)}")
    return found
