"""Retrieval on the guideline dev set (part 1 of bench.retrieval), and the search methods and rank metrics.

Page-hit@k and MRR@10 per method (hybrid, dense, BM25, hybrid with RRF), overall / English / Chinese, in a
workspace holding exactly the 5 dev PDFs; a hit is a top-k chunk of a gold document whose pages contain one of
that document's gold pages. Unanswerable questions have no gold page and are skipped. For a question set other
than the first 50 the same metrics are also given per file and per kind (`metrics_by_file`, `metrics_by_kind`).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from bench.common import BenchApp, CachedWorkspace, dev_inputs, ingest_sources
from bench.common.questions import gold_documents, gold_pages, grouped_metrics, on_gold_span
from workspace_app.retrieval.search import METHODS as SEARCH_METHODS

# hybrid searches as search does by default (also the other-language names of the question's concepts and the
# multilingual index); bm25 is the question's own terms alone.
HYBRID = SEARCH_METHODS
METHODS: dict[str, tuple[str, ...]] = {
    "hybrid": HYBRID, "dense": ("dense",), "bm25": ("sparse",), "multilingual": ("crosslingual",),
    "hybrid-rrf": HYBRID,
}
# Rows that fuse differently from the configured default (z-score fusion): RRF k=60 side by side.
FUSION_OF_METHOD = {"hybrid-rrf": "rrf"}
TOP_K = 10
KS = (1, 3, 5, 10)


# ---------------------------------------------------------------------------------------------------------
# Search methods and rank metrics (PubMedQA uses them too)


def method_search(app: BenchApp, query: str, method: str, top_k: int) -> list[Any]:
    """Hits of one benchmark method (its retrieval methods, and its fusion where it names one)."""
    settings = app.settings.retrieval
    default = settings.fusion
    settings.fusion = FUSION_OF_METHOD.get(method, default)
    try:
        return list(app.search.search(CachedWorkspace.WORKSPACE, query, top_k=top_k, methods=METHODS[method]).hits)
    finally:
        settings.fusion = default


def rank_metrics(ranks: Sequence[int | None], ks: Sequence[int], prefix: str) -> dict[str, Any]:
    n = len(ranks)
    out: dict[str, Any] = {"n": n}
    if not n:
        return out
    for k in ks:
        out[f"{prefix}@{k}"] = round(sum(1 for r in ranks if r is not None and r <= k) / n, 4)
    out["mrr@10"] = round(sum(1.0 / r for r in ranks if r is not None and r <= 10) / n, 4)
    return out


def first_rank(hits: Sequence[Any], is_hit: Callable[[Any], bool]) -> int | None:
    return next((hit.rank for hit in hits if is_hit(hit)), None)


def page_hit(row: dict[str, Any]) -> Callable[[Any], bool]:
    """A hit on a gold page of a gold document of the question."""

    def check(hit: Any) -> bool:
        return on_gold_span(hit.document_name, hit.chunk.page_start, hit.chunk.page_end, row)

    return check


def document_hit(*names: str) -> Callable[[Any], bool]:
    def check(hit: Any) -> bool:
        return bool(hit.document_name in names)

    return check


# ---------------------------------------------------------------------------------------------------------
# The dev set


def build_dev(app: BenchApp) -> dict[str, Any]:
    return ingest_sources(app, CachedWorkspace.WORKSPACE, [(p, p.name) for p in dev_inputs()], "dev")


def eval_dev(
    app: BenchApp, questions: list[dict[str, Any]], groups: dict[str, dict[str, list[str]]] | None = None
) -> dict[str, Any]:
    """Page-hit@k and MRR@10 per method, overall / en / zh, with per-question details (and per group if given)."""
    answerable = [q for q in questions if q["kind"] != "unanswerable"]
    details = []
    started = time.perf_counter()
    for q in answerable:
        details.append(_dev_row(app, q))
    metrics: dict[str, Any] = {}
    for method in METHODS:
        metrics[method] = {
            group: rank_metrics(
                [d["rank"][method] for d in details if group == "all" or d["lang"] == group], KS, "hit"
            )
            for group in ("all", "en", "zh")
        }
    misses = {m: [d["id"] for d in details if d["rank"][m] is None or d["rank"][m] > 5] for m in METHODS}
    result = {
        "questions": len(details),
        "eval_s": round(time.perf_counter() - started, 2),
        "metrics": metrics,
        "misses_at_5": misses,
        "details": details,
    }
    if groups is not None:
        by_group = grouped_metrics(details, groups, _group_metrics)
        result["metrics_by_file"] = by_group["by_file"]
        result["metrics_by_kind"] = by_group["by_kind"]
    return result


def _dev_row(app: BenchApp, q: dict[str, Any]) -> dict[str, Any]:
    """Ranks of the first gold-page hit and of the first gold-document hit per method, and the top 3."""
    check = page_hit(q)
    gold = gold_pages(q)
    row: dict[str, Any] = {
        "id": q["id"],
        "lang": q["lang"],
        "kind": q["kind"],
        "doc": q["doc"],
        "pages": q["pages"],
        "rank": {},
        "doc_rank": {},
        "top3": {},
    }
    if len(gold) > 1:
        row["rank_every_doc"] = {}  # the rank by which every gold document has had a gold-page hit
    for method in METHODS:
        hits = method_search(app, q["question"], method, TOP_K)
        row["rank"][method] = first_rank(hits, check)
        row["doc_rank"][method] = first_rank(hits, document_hit(*gold_documents(q)))
        row["top3"][method] = [[h.document_name, h.chunk.page_start, h.chunk.page_end] for h in hits[:3]]
        if len(gold) > 1:
            ranks = [first_rank(hits, page_hit({"doc": doc, "pages": pages})) for doc, pages in gold]
            row["rank_every_doc"][method] = None if None in ranks else max(r for r in ranks if r is not None)
    return row


def _group_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per method: page-hit metrics of these rows (and, for cross-document rows, every document hit)."""
    out = {}
    for method in METHODS:
        out[method] = rank_metrics([r["rank"][method] for r in rows], KS, "hit")
        every = [r["rank_every_doc"][method] for r in rows if "rank_every_doc" in r]
        if every:
            out[method]["every_doc"] = rank_metrics(every, KS, "hit")
    return out


# ---------------------------------------------------------------------------------------------------------
# --misses


def _loose(text: str) -> str:
    """Tolerant comparison key: NFKC, lower case, letters/digits/CJK only (drops hyphens, $, spaces)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


def _snippet(text: str, limit: int = 240) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _gold_quotes(q: dict[str, Any]) -> list[tuple[str, int, str]]:
    """(document, quote page, quote) per gold document."""
    if isinstance(q["doc"], list):
        return [(doc, q["quote_page_by_doc"][doc], q["quote_by_doc"][doc]) for doc in q["doc"]]
    return [(q["doc"], q["quote_page"], q["quote"])]


def _quote_chunks(app: BenchApp, document: Any, quote: str) -> list[Any]:
    """The chunks of a document holding the quote (or either half of it), in reading order."""
    chunk_map = app.catalog.get_chunks(app.catalog.document_chunk_ids(document.id))
    key = _loose(quote)
    halves = [key[: len(key) // 2], key[len(key) // 2 :]]
    found = []
    for chunk in sorted(chunk_map.values(), key=lambda c: c.ordinal):
        loose = _loose(chunk.text)
        if key in loose or any(len(h) >= 12 and h in loose for h in halves):
            found.append(chunk)
    return found


def print_misses(app: BenchApp, questions: list[dict[str, Any]], dev: dict[str, Any], method: str, k: int) -> None:
    """The questions `method` misses at @k: gold quote, where the quote's chunks rank, and the top-3 hits."""
    by_id = {q["id"]: q for q in questions}
    missed = [d for d in dev["details"] if d["rank"][method] is None or d["rank"][method] > k]
    workspace = app.workspaces.get(CachedWorkspace.WORKSPACE)
    documents = {d.name: d for d in app.catalog.list_documents(workspace.id)}
    print(f"\n=== {len(missed)} dev questions missed by {method} at @{k} ===")
    for row in missed:
        q = by_id[row["id"]]
        check = page_hit(q)
        pages_of = dict(gold_pages(q))
        print(f"\n--- {q['id']} [{q['lang']}, {q['kind']}] {q['doc']} p{q['pages']}")
        print(f"Q: {q['question']}")
        # Where the quote lives in the chunking, and how deep those chunks rank (top 50 per method).
        gold_chunks: list[Any] = []
        for doc, quote_page, quote in _gold_quotes(q):
            where = f"p{quote_page}" if len(pages_of) == 1 else f"{doc} p{quote_page}"
            print(f"gold quote ({where}): {_snippet(quote, 400)}")
            document = documents.get(doc)
            if document is not None:
                gold_chunks += [(doc, chunk) for chunk in _quote_chunks(app, document, quote)]
        print("first page-hit rank @10: " + ", ".join(f"{m}={row['rank'][m]}" for m in METHODS))
        if not gold_chunks:
            print("quote chunk: NOT FOUND in any chunk of the gold document (text lost or mangled at ingest?)")
        deep = {
            m: method_search(app, q["question"], m, 50)
            for m in METHODS
        }
        for doc, chunk in gold_chunks:
            ranks = {m: next((h.rank for h in hits if h.chunk.id == chunk.id), None) for m, hits in deep.items()}
            pages_ok = any(chunk.page_start <= p <= chunk.page_end for p in pages_of[doc])
            print(
                f"quote chunk #{chunk.ordinal} p{chunk.page_start}-{chunk.page_end}"
                f"{'' if pages_ok else ' (outside the gold pages)'} section='{_snippet(chunk.section, 80)}' "
                f"{chunk.token_count} tok; rank@50: " + ", ".join(f"{m}={r}" for m, r in ranks.items())
            )
        print("first page-hit rank @50: " + ", ".join(f"{m}={first_rank(h, check)}" for m, h in deep.items()))
        for hit in deep[method][:3]:
            mark = "*" if check(hit) else " "
            print(
                f" {mark}{hit.rank}. {hit.document_name} p{hit.chunk.page_start}-{hit.chunk.page_end} "
                f"ranks={hit.ranks} [{_snippet(hit.chunk.section, 60)}] {_snippet(hit.chunk.text)}"
            )
