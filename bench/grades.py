"""Grades benchmark: how many chunks of each corpus PDF carry a class of recommendation and a level of evidence,
how many of its sentences a citation would show graded, and how many key recommendations its source guide lists.

Each PDF is read and chunked as the ingestion pipeline does (`read_source`, then `build_chunks`, which tags each
chunk with the grading of its recommendation-table row or the first grading its text states); the guide's key
recommendations are `documents.guide.key_recommendations` over the body chunks. A sentence is graded when
`text.grades.grading_in` (what a citation of it reads) finds a class or a level at it; distinct sentences of the
body chunks are counted. Nothing is embedded or stored, so a run takes the parse time of the corpus (1-2 minutes),
plus ~10 s to load the tokenizer's model.

    .venv/bin/python -m bench.grades            # writes bench/results/grades.json, prints a Markdown table
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, compact_json, git_info, log, measure_corpus, now_iso

OUT = RESULTS_DIR / "grades.json"


def measure(path: Path, embedder: Any, settings: Any) -> dict[str, Any]:
    """One PDF's row: chunks, chunks with a class, with a level, graded sentences, the guide's key recommendations."""
    from workspace_app.documents.guide import key_recommendations
    from workspace_app.domain.clinical import CLINICAL
    from workspace_app.ingest.pipeline import build_chunks
    from workspace_app.ingest.readers import media_type_for, read_source
    from workspace_app.models.documents import Document
    from workspace_app.text.grades import grading_in
    from workspace_app.text.sentences import split_sentences

    started = time.perf_counter()
    media_type = media_type_for(path.name)
    parsed = read_source(path, path.name, media_type)
    document = Document(path.stem, "bench", path.name, "", path.stat().st_size, parsed.page_count, 0, "parsing",
                        "parsing", 0.0, None, now_iso(), media_type)
    chunks = build_chunks(document, parsed, embedder, settings, grades=CLINICAL.grades)
    body = [chunk for chunk in chunks if chunk.kind == "body"]
    recommendations = key_recommendations(body)
    graded = {
        span.text for chunk in body for span in split_sentences(chunk.text)
        if (found := grading_in(chunk.text, span.start, span.text)).recommendation_class or found.evidence_level
    }
    grades = Counter(f"{c.recommendation_class or '-'} {c.evidence_level or '-'}" for c in chunks
                     if c.recommendation_class or c.evidence_level)
    return {
        "pdf": path.name, "pages": parsed.page_count, "chunks": len(chunks),
        "with_class": sum(1 for c in chunks if c.recommendation_class),
        "with_level": sum(1 for c in chunks if c.evidence_level),
        "graded_sentences": len(graded), "key_recommendations": len(recommendations),
        "grades": dict(grades.most_common()),
        "recommendations": [
            {"class": r.recommendation_class, "level": r.evidence_level, "page": r.page, "text": r.text[:160]}
            for r in recommendations
        ],
        "seconds": round(time.perf_counter() - started, 1),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table of counts per PDF."""
    head = ("| PDF | chunks | with class | with level | graded sentences | key recommendations |\n"
            "|---|---|---|---|---|---|\n")
    keys = ("chunks", "with_class", "with_level", "graded_sentences", "key_recommendations")
    lines = [f"| {r['pdf']} | " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    total = "| **all** | " + " | ".join(str(sum(r[k] for r in rows)) for k in keys) + " |"
    return head + "\n".join([*lines, total])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="results file")
    parser.add_argument("--pdf", action="append", default=[], help="only these corpus PDFs (file names)")
    args = parser.parse_args(argv)
    rows = measure_corpus(measure, args.pdf)
    result = {"benchmark": "grades", "at": now_iso(), "git": git_info(), "pdfs": rows}
    args.out.write_text(compact_json(result), encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(rows))


if __name__ == "__main__":
    main()
