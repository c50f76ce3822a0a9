"""LINKS_TO coverage (issue 13, deliverable 5): how much of the patients lexicon maps to a graph lexicon entity, and
how many of the MIMIC-IV demo patients' coded concepts map to an entity present in a workspace of the guideline PDFs.

- lexicon: every concept of patients/lexicon/*.tsv (drug classes, drugs, diseases, lab items) through
  `workspace_app.patient_links.concept_entity_id`;
- demo: the concepts each demo patient's coded events carry (diagnoses and procedures with their ICD codes,
  prescriptions, lab results), counted once per (patient, concept), through the same mapping as the LINKS_TO edges
  (`event_entity_ids`: a concept's names, and an ICD code's title). "Present" means the graph of the corpus's 13
  guideline PDFs holds the entity: the lexicon extractor the ingestion's graph stage runs, over each PDF's pages
  as chunks (no embedding; ingestion cuts smaller chunks, which changes only phrase entities, never lexicon ones).

    python -m bench.patient_links

Writes bench/results/patient_links.json.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

import pymupdf

from bench.common import CORPUS_DIR, DEMO_DIR, RESULTS_DIR, git_info, log, now_iso
from workspace_app.graph.build import entity_id
from workspace_app.graph.entities import LexiconEntityExtractor
from workspace_app.models.documents import Chunk
from workspace_app.patients.concepts import extract_concepts
from workspace_app.patients.links import event_entity_ids, lexicon_coverage
from workspace_app.patients.mimic import MimicReader

KINDS = ("icd", "drug", "class", "disease", "lab", "abnormal")


def corpus_entity_ids() -> set[str]:
    """Entity ids the graph of the corpus's guideline PDFs holds (lexicon extractor over page chunks)."""
    extractor = LexiconEntityExtractor()
    found: set[str] = set()
    for pdf in sorted(CORPUS_DIR.glob("*.pdf")):
        with pymupdf.open(pdf) as document:
            chunks = [
                Chunk(f"{pdf.stem}:{i}", pdf.stem, i, page.get_text(), "", i + 1, i + 1, 0)
                for i, page in enumerate(document)
            ]
        for chunk in extractor.extract(chunks):
            found.update(entity_id(e.type, e.key) for e in chunk.entities)
        log(f"{pdf.name}: {len(found)} entities so far")
    return found


def demo_concepts() -> dict[tuple[str, str], set[str]]:
    """(patient, concept) -> the graph entity ids it maps to, over the demo's coded events."""
    reader = MimicReader(DEMO_DIR, None)
    pairs: dict[tuple[str, str], set[str]] = {}
    for read in (reader.diagnoses, reader.procedures, reader.prescriptions, reader.labs):
        for event in read():
            event = replace(event, concepts=extract_concepts(event))
            mapped = event_entity_ids(event)
            for concept in event.concepts:
                ids = {e for e, concepts in mapped.items() if concept in concepts}
                pairs.setdefault((event.patient_id, concept), set()).update(ids)
    return pairs


def main() -> None:
    """Measure and write the results."""
    mapped, total, unmapped = lexicon_coverage()
    present = corpus_entity_ids()
    pairs = demo_concepts()
    by_kind: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    for (_, concept), ids in pairs.items():
        counts = by_kind.setdefault(concept.split(":", 1)[0], Counter())
        counts["pairs"] += 1
        counts["graph_lexicon"] += bool(ids)
        counts["in_workspace"] += bool(ids & present)
    totals = Counter[str]()
    for counts in by_kind.values():
        totals.update(counts)
    result: dict[str, Any] = {
        "when": now_iso(), "git": git_info(),
        "lexicon": {"concepts": total, "mapped": mapped, "share": round(mapped / total, 3), "unmapped": unmapped},
        "corpus_entities": len(present),
        "demo": {
            "patients": len({p for p, _ in pairs}), "patient_concepts": totals["pairs"],
            "to_graph_lexicon": totals["graph_lexicon"], "to_workspace_entity": totals["in_workspace"],
            "share_in_workspace": round(totals["in_workspace"] / max(totals["pairs"], 1), 3),
            "by_kind": {kind: dict(counts) for kind, counts in by_kind.items() if counts},
        },
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "patient_links.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k not in {"git"}}, ensure_ascii=False, indent=1)[:3000])


if __name__ == "__main__":
    main()
