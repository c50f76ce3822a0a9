"""The tables of bench.retrieval: plain text for the terminal, Markdown for bench/README.md."""

from __future__ import annotations

from typing import Any

from bench.retrieval_dev import TOP_K

# Peer baselines from /work/shared/eval/PEERS.md (13 PDFs in one index; dev questions).
PEERS = [
    ("seed chunker (page chunks), Chroma dense", 0.325, 0.525, 0.675, 0.435, 0.375, 685, "37 (85%)"),
    ("BM25 (rank_bm25, jieba), page chunks", 0.675, 0.925, 0.975, 0.764, 0.875, 685, "4"),
    ("RRF(dense, BM25), page chunks", 0.475, 0.725, 0.875, 0.580, 0.500, 685, "38"),
    ("seed chunker on single newlines (~500 chars), dense", 0.500, 0.825, 0.900, 0.643, 0.500, 8058, "276 (96%)"),
    ("same chunks, BM25", 0.575, 0.825, 0.950, 0.700, 0.750, 8058, "5"),
    ("same chunks, RRF(dense, BM25)", 0.575, 0.900, 0.950, 0.695, 0.750, 8058, "256 (96%)"),
    ("LlamaIndex defaults (SentenceSplitter 1024)", 0.250, 0.575, 0.650, 0.377, 0.500, 1504, "114 (56%)"),
]


def _f(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def group_lines(dev: dict[str, Any]) -> list[str]:
    """Per file and per kind (a larger question set): hit@1 / hit@5 / MRR@10 of every method, as a Markdown table.

    Cross-document rows also show `every doc @5`: the share whose every gold document had a gold-page hit by rank 5.
    """
    methods = list(dev["metrics"])
    lines = [
        "| group | n | " + " | ".join(f"{m} hit@1 / @5 / MRR" for m in methods) + " |",
        "|---|---|" + "---|" * len(methods),
    ]
    for grouping, label in (("metrics_by_file", "file"), ("metrics_by_kind", "kind")):
        for group, by_method in dev[grouping].items():
            n = next(iter(by_method.values()))["n"]
            cells = []
            for m in methods:
                g = by_method[m]
                cell = f"{_f(g.get('hit@1'))} / {_f(g.get('hit@5'))} / {_f(g.get('mrr@10'))}"
                if "every_doc" in g:
                    cell += f" (every doc @5 {_f(g['every_doc'].get('hit@5'))})"
                cells.append(cell)
            lines.append(f"| {label}: {group} | {n} | " + " | ".join(cells) + " |")
    return lines


def print_report(results: dict[str, Any]) -> None:
    for key, where in (("dev", "workspace of the 5 DEV PDFs"), ("dev_all13", "all 13 PDFs in one workspace")):
        dev = results.get(key)
        if not dev:
            continue
        print(
            f"\nGuideline dev set: {dev['questions']} answerable questions, {where} "
            f"({dev['workspace']['chunks']} chunks), top_k={TOP_K}, page-hit"
        )
        print(
            f"{'method':<8} {'hit@1':>6} {'hit@3':>6} {'hit@5':>6} {'hit@10':>6} {'MRR10':>6} | "
            f"{'en@1':>6} {'en@5':>6} {'enMRR':>6} | {'zh@1':>6} {'zh@5':>6} {'zhMRR':>6}"
        )
        for method, groups in dev["metrics"].items():
            a, en, zh = groups["all"], groups["en"], groups["zh"]
            print(
                f"{method:<8} {_f(a['hit@1']):>6} {_f(a['hit@3']):>6} {_f(a['hit@5']):>6} {_f(a['hit@10']):>6} "
                f"{_f(a['mrr@10']):>6} | {_f(en.get('hit@1')):>6} {_f(en.get('hit@5')):>6} {_f(en.get('mrr@10')):>6} | "
                f"{_f(zh.get('hit@1')):>6} {_f(zh.get('hit@5')):>6} {_f(zh.get('mrr@10')):>6}"
            )
        print("hybrid misses @5: " + (", ".join(dev["misses_at_5"]["hybrid"]) or "none"))
        if "metrics_by_file" in dev:
            print("\n" + "\n".join(group_lines(dev)))
    pub = results.get("pubmedqa")
    if pub:
        print(
            f"\nPubMedQA: {pub['queries']} dev queries over {pub['workspace']['documents']} abstracts "
            f"({pub['workspace']['chunks']} chunks)"
        )
        print(f"{'method':<8} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR10':>6}")
        for method, m in pub["metrics"].items():
            print(
                f"{method:<8} {_f(m['recall@1']):>6} {_f(m['recall@5']):>6} {_f(m['recall@10']):>6} {_f(m['mrr@10']):>6}"
            )
    lat = results.get("latency")
    if lat:
        print(
            f"\nLatency (hybrid, 13 PDFs, {lat['workspace']['chunks']} chunks, {lat['queries']} queries x "
            f"{lat['passes']} passes, per-query medians): p50 {lat['p50_ms']:.1f} ms, p95 {lat['p95_ms']:.1f} ms, "
            f"max {lat['max_ms']:.1f} ms; stages p50 {lat['stage_p50_ms']}"
        )
        one = lat.get("what_if_torch_threads_1")
        if one:
            print(f"  what-if torch threads = 1: p50 {one['p50_ms']:.1f} ms, p95 {one['p95_ms']:.1f} ms")
    ing = results.get("ingestion")
    if ing:
        when = "this run" if ing.get("measured_this_run") else f"cached measurement from {ing.get('measured_at')}"
        print(
            f"\nIngestion of 13 PDFs ({ing['source']}, {when}): {ing['pages']} pages, {ing['chunks']} chunks, "
            f"wall {ing['wall_s']:.1f} s, {ing['pages_per_s']:.2f} pages/s, embedding model {ing['embedding_model_s']:.1f} s "
            f"({100 * ing['embedding_share']:.1f}% of wall), pure embedding {_f(ing.get('pure_embedding_s'), 1)} s, "
            f"wall/pure {_f(ing.get('wall_over_pure'))}, CPU/pure CPU {_f(ing.get('cpu_over_pure_cpu'))}, "
            f"wall/pure interleaved per document {_f(ing.get('wall_over_pure_interleaved'))} "
            f"(loadavg after {ing.get('loadavg_after')})"
        )
        print(f"  stage seconds: {ing['stage_seconds']}")
    targets = results.get("targets")
    if targets:
        print("\nTargets:")
        for name, t in targets.items():
            status = {True: "MET", False: "NOT MET", None: "not measured"}[t["met"]]
            print(f"  {name:<36} {t['value']!s:>8}  (target {t['target']})  {status}")


def markdown_report(results: dict[str, Any]) -> str:
    """The README tables, from a results JSON."""
    lines: list[str] = []
    for key, where in (("dev", "workspace = the 5 DEV PDFs"), ("dev_all13", "all 13 PDFs in one workspace")):
        dev = results.get(key)
        if not dev:
            continue
        lines += [
            (
                f"Guideline dev set ({dev['questions']} answerable questions; {where}, "
                f"{dev['workspace']['chunks']} chunks; top_k={TOP_K}; page-hit):"
            ),
            "",
            "| method | hit@1 | hit@3 | hit@5 | hit@10 | MRR@10 | EN hit@1 | EN hit@5 | EN MRR | ZH hit@1 | ZH hit@5 | ZH MRR |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for method, g in dev["metrics"].items():
            a, en, zh = g["all"], g["en"], g["zh"]
            lines.append(
                f"| {method} | {_f(a['hit@1'])} | {_f(a['hit@3'])} | {_f(a['hit@5'])} | {_f(a['hit@10'])} | "
                f"{_f(a['mrr@10'])} | {_f(en.get('hit@1'))} | {_f(en.get('hit@5'))} | {_f(en.get('mrr@10'))} | "
                f"{_f(zh.get('hit@1'))} | {_f(zh.get('hit@5'))} | {_f(zh.get('mrr@10'))} |"
            )
        lines += ["", f"hybrid misses @5: {', '.join(dev['misses_at_5']['hybrid']) or 'none'}", ""]
        if "metrics_by_file" in dev:
            lines += [*group_lines(dev), ""]
    dev13 = results.get("dev_all13")
    if dev13:
        ing = results.get("ingestion") or {}
        ingest_s = f"{ing['wall_s']:.0f} ({100 * ing['embedding_share']:.0f}%)" if ing else "-"
        lines += [
            "Side by side with the PEERS.md baselines (same setting: 13 PDFs in one index, same questions and embedder):",
            "",
            "| system | hit@1 | hit@5 | hit@10 | MRR@10 | ZH hit@5 | chunks | ingest s (embed share) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for method, g in dev13["metrics"].items():
            a, zh = g["all"], g["zh"]
            lines.append(
                f"| **this app, {method}** | {_f(a['hit@1'])} | {_f(a['hit@5'])} | {_f(a['hit@10'])} | "
                f"{_f(a['mrr@10'])} | {_f(zh.get('hit@5'))} | {dev13['workspace']['chunks']} | {ingest_s} |"
            )
        for name, h1, h5, h10, mrr, zh5, chunks, ingest in PEERS:
            lines.append(
                f"| peer: {name} | {h1:.3f} | {h5:.3f} | {h10:.3f} | {mrr:.3f} | {zh5:.3f} | {chunks} | {ingest} |"
            )
        lines.append("")
    pub = results.get("pubmedqa")
    if pub:
        lines += [
            (
                f"PubMedQA ({pub['queries']} dev queries, {pub['workspace']['documents']} abstracts, "
                f"{pub['workspace']['chunks']} chunks; top_k={TOP_K}):"
            ),
            "",
            "| method | R@1 | R@5 | R@10 | MRR@10 |",
            "|---|---|---|---|---|",
        ]
        for method, m in pub["metrics"].items():
            lines.append(
                f"| {method} | {_f(m['recall@1'])} | {_f(m['recall@5'])} | {_f(m['recall@10'])} | {_f(m['mrr@10'])} |"
            )
        lines.append("")
    lat = results.get("latency")
    if lat:
        lines += [
            "| search latency (hybrid, 13 PDFs, warm, incl. query embedding) | value |",
            "|---|---|",
            f"| chunks in the workspace | {lat['workspace']['chunks']} |",
            f"| p50 of per-query medians ({lat['queries']} queries x {lat['passes']} passes) | {lat['p50_ms']:.1f} ms |",
            f"| p95 of per-query medians | {lat['p95_ms']:.1f} ms |",
            f"| raw p95 over all samples (noisy) | {lat['raw_p95_ms_all_samples']:.1f} ms |",
            f"| stage p50 (ms) | {', '.join(f'{k} {v}' for k, v in lat['stage_p50_ms'].items())} |",
        ]
        one = lat.get("what_if_torch_threads_1")
        if one:
            lines.append(
                f"| what-if: same run with `torch.set_num_threads(1)` | p50 {one['p50_ms']:.1f} ms, "
                f"p95 {one['p95_ms']:.1f} ms (embed_query p50 {one['stage_p50_ms'].get('embed_query')} ms) |"
            )
        lines.append("")
    ing = results.get("ingestion")
    if ing:
        lines += [
            f"| ingestion of the 13 PDFs ({ing['source']}) | value |",
            "|---|---|",
            f"| documents / pages / chunks | {ing['documents']} / {ing['pages']} / {ing['chunks']} |",
            f"| wall time (model already loaded) | {ing['wall_s']:.1f} s |",
            f"| pages/s | {ing['pages_per_s']:.2f} |",
            f"| time inside the embedding model | {ing['embedding_model_s']:.1f} s ({100 * ing['embedding_share']:.1f}% of wall) |",
            f"| pure embedding of the same {ing['embedded_texts']} texts, one call | {_f(ing.get('pure_embedding_s'), 1)} s |",
            f"| wall / pure embedding | {_f(ing.get('wall_over_pure'))} |",
            f"| process CPU: ingestion / pure embedding (load-robust) | {_f(ing.get('cpu_over_pure_cpu'))} |",
            (
                f"| wall / pure, pure re-run per document right after its ingest (same load) | "
                f"{_f(ing.get('wall_over_pure_interleaved'))} "
                f"(pure {_f(ing.get('pure_embedding_interleaved_per_document_s'), 1)} s) |"
            ),
            (
                f"| load average (1/5/15 min) after ingest / after pure run | {ing.get('loadavg_after')} / "
                f"{ing.get('loadavg_after_pure')} |"
            ),
            f"| stage seconds | {', '.join(f'{k} {v}' for k, v in ing['stage_seconds'].items())} |",
            "",
        ]
    targets = results.get("targets")
    if targets:
        lines += ["| target | measured | goal | met |", "|---|---|---|---|"]
        for name, t in targets.items():
            met = {True: "yes", False: "**no**", None: "not measured"}[t["met"]]
            lines.append(f"| {name} | {t['value'] if t['value'] is not None else '-'} | {t['target']} | {met} |")
        lines.append("")
    return "\n".join(lines)
