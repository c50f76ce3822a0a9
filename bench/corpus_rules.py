"""What the offline rules make of the corpus PDFs, without a cached workspace: per document the
graph's entities (key, type, mentions, passages), the 30 highest-degree entities of all documents together, and
the source guide (summary by centrality over the packaged multilingual embedder's vectors, key recommendations, key
topics) with its suggestion candidates (clinical pack).

    python -m bench.corpus_rules --out FILE [--pdf NAME ...]

Run it before and after changing a rule and compare the two files (entities added and removed, top-30 list,
guide and question lines). Parsed chunks are cached under bench/.cache/corpus-chunks-*.pkl (keyed by the
PDFs' sizes and times and the chunking settings), so a second run only extracts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.common import CACHE_DIR, all_inputs, log, now_iso

TOP = 30


def corpus_chunks(pdfs: list[Path]) -> dict[str, list[Any]]:
    """Chunks of each PDF as ingestion stores them (clinical pack grades), from the cache when it is current."""
    from workspace_app.config import Settings
    from workspace_app.domain import pack
    from workspace_app.embedding.embedder import Embedder
    from workspace_app.ingest.pipeline import build_chunks
    from workspace_app.ingest.readers.pdf import parse_pdf

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    stamp = "|".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in pdfs)
    stamp += f"|{settings.ingest.chunk_tokens}:{settings.ingest.chunk_overlap_tokens}:{settings.embedding.model}"
    cache = CACHE_DIR / f"corpus-chunks-{hashlib.sha256(stamp.encode()).hexdigest()[:12]}.pkl"
    if cache.is_file():
        return pickle.loads(cache.read_bytes())
    embedder, clinical = Embedder(settings.embedding), pack("clinical")
    chunks = {}
    for pdf in pdfs:
        started = time.perf_counter()
        parsed = parse_pdf(pdf, pdf.name, grade_cells=clinical.grades.table_cells)
        document = SimpleNamespace(id=pdf.stem, name=pdf.name, workspace_id="bench")
        chunks[pdf.name] = build_chunks(document, parsed, embedder, settings.ingest, None, clinical.grades)  # type: ignore[arg-type]
        log(f"{pdf.name}: {len(chunks[pdf.name])} chunks, {time.perf_counter() - started:.1f} s")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(chunks))
    return chunks


def rule_outputs(chunks: dict[str, list[Any]]) -> dict[str, Any]:
    """Entities, top-degree entities, guides and suggestion candidates of every document."""
    from workspace_app.config import Settings
    from workspace_app.documents.guide import TOPIC_CANDIDATES, build_guide
    from workspace_app.documents.suggestions import candidate_questions
    from workspace_app.domain import pack
    from workspace_app.embedding.embedder import Embedder
    from workspace_app.graph.build import build_document_graph
    from workspace_app.graph.communities import weighted_graph
    from workspace_app.graph.entities import LexiconEntityExtractor
    from workspace_app.models.graph import Entity

    extractor, question = LexiconEntityExtractor(), pack("clinical").recommendation_question
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    use = {"model": settings.embedding.crosslingual_model, "backend": "torch", "query_prefix": "", "passage_prefix": ""}
    embed = Embedder(settings.embedding.model_copy(update=use)).embed_passages  # as the guides' (wiring.build_guides)
    names: dict[str, str] = {}
    relations: list[Any] = []
    mentions: Counter[str] = Counter()
    documents: dict[str, Any] = {}
    for name, parts in chunks.items():
        found = extractor.extract(parts)
        graph = build_document_graph(name, found, {c.id: c.page_start for c in parts})
        names.update({e.id: f"{e.name} [{e.type}]" for e in graph.entities})
        relations += graph.relations
        counts: Counter[str] = Counter()
        passages: Counter[str] = Counter()
        for m in graph.mentions:
            counts[m.entity_id] += m.count
            passages[m.entity_id] += 1
        mentions.update(counts)
        document = SimpleNamespace(id=name, name=name)
        per_chunk: dict[str, dict[str, int]] = {}
        written: dict[str, set[str]] = {}
        for m in graph.mentions:
            per_chunk.setdefault(m.entity_id, {})[m.chunk_id] = m.count
            written.setdefault(m.entity_id, set()).update(m.surfaces)
        top = [Entity(e.id, "bench", e.name, e.type, tuple(sorted(written.get(e.id, ()))))
               for e in sorted(graph.entities, key=lambda e: -counts[e.id])[:TOPIC_CANDIDATES]]
        guide = build_guide(document, parts, [(e, per_chunk.get(e.id, {})) for e in top], embed)  # type: ignore[arg-type]
        documents[name] = {
            "entities": {e.id: [counts[e.id], passages[e.id]] for e in graph.entities},
            "summary": guide.summary,
            "recommendations": [f"[{r.recommendation_class}/{r.evidence_level}] p{r.page} {r.text}" for r in guide.recommendations],
            "topics": list(guide.topics),
            "questions": [f"{q.origin}: {q.question}" for q in candidate_questions(document, guide, question)],  # type: ignore[arg-type]
        }
    graph = weighted_graph(names, relations)
    ranked = sorted(graph.nodes, key=lambda e: (-graph.degree(e), -mentions[e], e))[:TOP]
    return {
        "entities": len(names), "types": dict(Counter(n.rsplit("[", 1)[1].rstrip("]") for n in names.values())),
        "top": [f"{names[e]} {graph.degree(e)}" for e in ranked], "documents": documents,
    }


def main() -> None:
    """Write the rule outputs of the corpus PDFs to --out and print the totals and the top list."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pdf", action="append", help="only these corpus PDFs (file names)")
    args = parser.parse_args()
    pdfs = [p for p in all_inputs() if not args.pdf or p.name in args.pdf]
    outputs = {"date": now_iso(), **rule_outputs(corpus_chunks(pdfs))}
    args.out.write_text(json.dumps(outputs, indent=1, ensure_ascii=False))
    print(f"{outputs['entities']} entities {outputs['types']}")
    print("\n".join(outputs["top"]))
    for name, row in outputs["documents"].items():
        print(f"{name}: {len(row['entities'])} entities, {len(row['recommendations'])} key recommendations, "
              f"{len(row['topics'])} key topics, {len(row['questions'])} question candidates")


if __name__ == "__main__":
    main()
