"""bench.answers, the measured pass: one record per question, with everything the metrics are computed from.

A record holds the question's split (`bench.common.questions.split_of`), file, language, kind and `hard` flag;
whether the answer refused; whether its first / any citation is on a gold page (`first`, `any`), whether it cites
a gold page of every document (`all_docs`, cross-document rows); for recommendation rows the gradings of the
gold answer, of the answer text and of the first citation (`recommendation`); and the quote-quality counters of
`bench.common.quotes` (`quality`, answered questions only).
"""

from __future__ import annotations

import re
from typing import Any

from bench.common import CachedWorkspace
from bench.common.grading import cited_grading, find_gradings, states_all
from bench.common.questions import file_of_ids, gold_pages, on_gold_span, split_of
from bench.common.quotes import answer_quality


def on_gold_page(citation: Any, row: dict[str, Any]) -> bool:
    """The citation's document is a gold one and its pages contain a gold page of that document."""
    return on_gold_span(citation.document, citation.page_start, citation.page_end, row)


def every_document_cited(citations: Any, row: dict[str, Any]) -> bool:
    """Every gold document of a cross-document question has a citation on one of its gold pages."""
    return all(
        any(on_gold_page(c, {"doc": doc, "pages": pages}) for c in citations)
        for doc, pages in gold_pages(row)
    )


def fully_supported(answer: Any) -> bool:
    """Grounded, and every sentence (paragraph of the extractive answer) carries a citation marker."""
    return bool(answer.grounded) and all(re.search(r"\[\d+\]", part) for part in answer.text.split("\n\n"))


def recommendation_record(answer: Any, row: dict[str, Any]) -> dict[str, Any]:
    """Gradings of the gold answer, the answer text and the first citation, and whether the answer states them.

    "Stated" means every grading of the gold answer (most have one; a few two) is stated: in the answer text, by
    the first citation's class and level (its chip), or by either (the text's gradings plus the chip's).
    """
    gold = find_gradings(row["answer"])
    in_text = [] if answer.refused else find_gradings(answer.text)
    first = answer.citations[0] if answer.citations else None
    chip = cited_grading(first.recommendation_class, first.evidence_level) if first else None
    return {
        "gold": [str(g) for g in gold], "in text": [str(g) for g in in_text], "first citation": str(chip) if chip else None,
        "stated in text": states_all(gold, in_text), "stated by first citation": states_all(gold, [chip] if chip else []),
        "stated": states_all(gold, in_text + ([chip] if chip else [])),
    }


def chip_record(answer: Any) -> dict[str, int]:
    """Whether the class and level each citation carries (its chip) belong to the sentence it quotes.

    A chip's grading should be stated at the quote: in the quoted sentence or in the grading note the answer adds
    after it (the cell beside it in the source). "Not stated" counts chips whose grading the sentence does not
    state at all (the chunk's grading used as a fallback), "unlike" chips that differ from the grading it does
    state.
    """
    paragraphs = answer.text.split("\n\n")
    counts = {"citations with a grading": 0, "grading not stated at the quote": 0, "grading unlike the quote's": 0}
    for citation in answer.citations:
        chip = cited_grading(citation.recommendation_class, citation.evidence_level)
        if chip is None:
            continue
        counts["citations with a grading"] += 1
        own = [p for p in paragraphs if f"[{citation.n}]" in p]
        stated = find_gradings(citation.quote) + [g for p in own for g in find_gradings(p)]
        if not stated:
            counts["grading not stated at the quote"] += 1
        elif chip not in stated:
            counts["grading unlike the quote's"] += 1
    return counts


def evaluate(
    answers: Any, questions: list[dict[str, Any]], mode: str, question_set: str, catalog: Any = None
) -> list[dict[str, Any]]:
    """One record per question (the first, measured, pass), asked in `mode`.

    With the app's `catalog`, each record also lists the kind of every cited chunk ("body", "references",
    "contents"): a quote from a reference list or a table of contents is noise whatever its wording.
    """
    files = file_of_ids(question_set)
    rows = []
    for q in questions:
        answer = answers.ask(CachedWorkspace.WORKSPACE, q["question"], mode=mode)
        answerable = q["kind"] != "unanswerable"
        record: dict[str, Any] = {
            "id": q["id"], "split": split_of(q["id"]), "file": files.get(q["id"], "?"), "lang": q["lang"],
            "kind": q["kind"], "hard": bool(q.get("hard")), "answerable": answerable, "refused": answer.refused,
            "first": bool(answerable and answer.citations and on_gold_page(answer.citations[0], q)),
            "any": bool(answerable and any(on_gold_page(c, q) for c in answer.citations)),
            "supported": None if answer.refused else fully_supported(answer), "confidence": answer.confidence,
            "citations": [[c.document, c.page_start, c.page_end, c.recommendation_class, c.evidence_level, c.quote[:300]]
                          for c in answer.citations],
            "gold": [q["doc"], q["pages"]], "ms": answer.timings_ms.get("total", 0.0), "answer": answer.text,
        }
        if isinstance(q["doc"], list):
            record["all_docs"] = every_document_cited(answer.citations, q)
        if q["kind"] == "recommendation":
            record["recommendation"] = recommendation_record(answer, q)
        if not answer.refused:
            record["quality"] = answer_quality(answer.text, [c.quote for c in answer.citations])
            record["chips"] = chip_record(answer)
            if catalog is not None:
                chunks = catalog.get_chunks([c.chunk_id for c in answer.citations])
                record["cited_chunk_kinds"] = [getattr(chunks.get(c.chunk_id), "kind", "?") for c in answer.citations]
        rows.append(record)
    return rows


def row_ok(row: dict[str, Any]) -> bool:
    """What counts as right for one row: a refusal (unanswerable), every document cited (cross-document), else
    the first citation on a gold page."""
    if not row["answerable"]:
        return bool(row["refused"])
    if "all_docs" in row:
        return bool(row["all_docs"])
    return bool(row["first"])


def detail_line(row: dict[str, Any]) -> str:
    """One line per question for `--details`: id, split, kind, lang, refused?, first citation, gold, ok?."""
    first = row["citations"][0] if row["citations"] else None
    cited = f"{_short(first[0])} p{_pages(first[1], first[2])}" if first else "-"
    gold = "-" if not row["answerable"] else _gold(row["gold"])
    extra = []
    if "recommendation" in row:
        rec = row["recommendation"]
        extra.append(f"grading gold={'/'.join(rec['gold'])} text={'/'.join(rec['in text']) or '-'} "
                     f"chip={rec['first citation'] or '-'} {'stated' if rec['stated'] else 'NOT stated'}")
    chips = row.get("chips") or {}
    if chips.get("grading not stated at the quote") or chips.get("grading unlike the quote's"):
        extra.append("chip grading not the quote's")
    quality = row.get("quality") or {}
    flags = sorted({f for q in quality.get("flagged", []) for f in q["flags"]})
    if quality.get("source markers"):
        flags.append(f"{len(quality['source markers'])} source markers")
    if flags:
        extra.append("quotes: " + ", ".join(flags))
    kind = row["kind"] + ("*" if row["hard"] else "")
    state = "refused" if row["refused"] else "answered"
    return (f"{row['id']:10} {row['split']:9} {kind:15} {row['lang']} {state:8} first={cited:26} gold={gold:34} "
            f"{'ok' if row_ok(row) else 'MISS'}" + ("  " + "; ".join(extra) if extra else ""))


def _short(document: str) -> str:
    return document.removesuffix(".pdf")


def _pages(start: int, end: int) -> str:
    return str(start) if start == end else f"{start}-{end}"


def _gold(gold: list[Any]) -> str:
    doc, pages = gold
    if isinstance(doc, list):
        return " + ".join(f"{_short(d)} {p}" for d, p in zip(doc, pages, strict=True))
    return f"{_short(doc)} {pages}"
