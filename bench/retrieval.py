"""Retrieval benchmark: guideline dev set, PubMedQA, search latency and ingestion cost in one run.

Run from the repository root:

    .venv/bin/python -m bench.retrieval                 # everything (first run ~20 min, later ~2 min)
    .venv/bin/python -m bench.retrieval --only-dev      # guideline dev set only (seconds with a cached ingest)
    .venv/bin/python -m bench.retrieval --only-dev --misses   # + the questions hybrid misses at @5

Ingested workspaces live in `bench/.cache/<kind>-<fingerprint>/` (one data dir each). The fingerprint hashes
the ingestion-relevant code (AST of workspace_app/ingest/*, embedding.py, the index side of lexical.py,
the chunk/document models, the ingest path of service.py, storage/*), the ingest and embedding settings,
library versions and the input files. A re-run with unchanged ingestion reuses the data dir; `--fresh`
rebuilds it. This is a measurement tool: it monkeypatches the embedder and pipeline stages with timers
while it ingests (nothing is changed in behaviour).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import hashlib
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS_DIR = SHARED / "corpus" / "guidelines"
EVAL_DIR = SHARED / "eval"
CACHE_DIR = REPO / "bench" / ".cache"
RESULTS_DIR = REPO / "bench" / "results"
CACHE_VERSION = 1

DEV_DOCS = (
    "shen-2017-syncope.pdf",
    "eckel-2013-lifestyle.pdf",
    "mosca-2011-women-cvd.pdf",
    "arnett-2014-guideline-strategies.pdf",
    "zh-acute-af-ed-2024.pdf",
)
METHODS: dict[str, tuple[str, ...]] = {
    "hybrid": ("dense", "sparse"), "dense": ("dense",), "bm25": ("sparse",), "hybrid-rrf": ("dense", "sparse"),
}
# Rows that fuse differently from the configured default (z-score fusion): RRF k=60 side by side.
FUSION_OF_METHOD = {"hybrid-rrf": "rrf"}
TOP_K = 10
LATENCY_PASSES = 3

TARGETS = {
    "dev hybrid page-hit@5": (">=", 0.95),
    "dev hybrid page-hit@1": (">=", 0.75),
    "dev hybrid zh page-hit@5": (">=", 0.875),
    "pubmedqa hybrid R@1": (">=", 0.98),
    "search p95 ms (hybrid, 13 PDFs)": ("<", 50.0),
    "ingestion wall / pure embedding": ("<=", 1.25),
}

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

# What decides the content of an ingested data dir. (path glob, names to keep or None for all, names to drop).
# Names are top-level definitions or `Class.member`; query-time-only code is dropped so tuning it does not
# force a re-ingest.
FINGERPRINT_SOURCES: tuple[tuple[str, tuple[str, ...] | None, tuple[str, ...]], ...] = (
    ("workspace_app/ingest/*.py", None, ()),
    ("workspace_app/embedding/embedder.py", None, ("Embedder.embed_query",)),
    ("workspace_app/retrieval/lexical.py", None, ("STOPWORDS", "query_terms")),
    ("workspace_app/models/documents.py", ("Rect", "Document", "Chunk"), ()),
    (
        "workspace_app/service.py",
        (
            "MEDIA_TYPES",
            "_MAX_NAME",
            "clean_display_name",
            "_media_type",
            "_suffix",
            "WorkspaceService.add_document",
            "WorkspaceService.ingest_file",
            "WorkspaceService.run_ingestion",
        ),
        (),
    ),
    ("storage/sqlite/catalog.py", None, ("SqliteCatalog.keyword_search",)),
    ("storage/sqlite/migrations.py", None, ()),
    ("storage/chroma.py", None, ("ChromaVectorIndex.query",)),
    ("storage/sqlite/embedding_cache.py", None, ()),
    ("workspace_app/adapters/wiring.py", None, ()),
)
FINGERPRINT_LIBS = ("pymupdf", "chromadb", "sentence-transformers", "transformers", "torch", "jieba")


def log(message: str) -> None:
    """Progress goes to stderr so stdout holds only the tables."""
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------
# Fingerprints and the cache


def _node_name(node: ast.stmt) -> str:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return ""


def _ast_entries(body: Iterable[ast.stmt], prefix: str = "") -> Iterator[tuple[str, str]]:
    for node in body:
        name = _node_name(node)
        qualified = f"{prefix}{name}" if name else ""
        if isinstance(node, ast.ClassDef):
            header = [ast.dump(x) for x in (*node.bases, *node.keywords, *node.decorator_list)]
            yield qualified, f"class {node.name} {header}"
            yield from _ast_entries(node.body, qualified + ".")
        else:
            yield qualified, ast.dump(node)


def source_digest(path: Path, keep: tuple[str, ...] | None, drop: tuple[str, ...]) -> str:
    """Digest of a module's AST (comments and formatting ignored), restricted to the named definitions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def matches(name: str, names: tuple[str, ...]) -> bool:
        return any(name == n or name.startswith(n + ".") for n in names)

    parts = []
    for name, dumped in _ast_entries(tree.body):
        if keep is not None and not (name and matches(name, keep)):
            continue
        if name and matches(name, drop):
            continue
        parts.append(f"{name}\n{dumped}")
    return hashlib.sha256("\n\n".join(parts).encode()).hexdigest()


def code_fingerprint() -> dict[str, str]:
    """Per-file digests of the ingestion code."""
    digests = {}
    for pattern, keep, drop in FINGERPRINT_SOURCES:
        for path in sorted(REPO.glob(pattern)):
            digests[str(path.relative_to(REPO))] = source_digest(path, keep, drop)[:16]
    return digests


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in FINGERPRINT_LIBS:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bench_settings(data_dir: Path) -> Any:
    """App settings for a bench data dir (never a remote Chroma: the bench owns its stores)."""
    from workspace_app.config import load_settings

    settings = load_settings(data_dir)
    settings.storage.chroma_url = None
    return settings


@functools.lru_cache(maxsize=1)
def embedding_fingerprint() -> str:
    """Fingerprint of what a cached vector depends on: embedder code, embedding settings, libraries."""
    settings = bench_settings(CACHE_DIR)
    parts = {
        "cache_version": CACHE_VERSION,
        "embedding.py": source_digest(REPO / "workspace_app/embedding/embedder.py", None, ("Embedder.embed_query",)),
        "cache.py": source_digest(REPO / "storage/sqlite/embedding_cache.py", None, ()),
        "settings": settings.embedding.model_dump(mode="json"),
        "libraries": {
            k: v for k, v in library_versions().items() if k in ("sentence-transformers", "transformers", "torch")
        },
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def ingest_fingerprint(kind: str, inputs: Sequence[Path]) -> tuple[str, dict[str, Any]]:
    """Fingerprint of an ingested workspace, and what went into it."""
    settings = bench_settings(CACHE_DIR)
    parts = {
        "cache_version": CACHE_VERSION,
        "kind": kind,
        "code": code_fingerprint(),
        "ingest_settings": settings.ingest.model_dump(mode="json"),
        "embedding_settings": settings.embedding.model_dump(mode="json"),
        "libraries": library_versions(),
        "inputs": {p.name: file_sha256(p)[:16] for p in inputs},
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12], parts


# ---------------------------------------------------------------------------------------------------------
# Timing probes around ingestion


class IngestProbe:
    """Wraps the embedder and pipeline stages with timers for the duration of a `with` block."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self.encoded_texts: list[str] = []
        self._restore: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> Self:
        from storage.sqlite.catalog import SqliteCatalog
        from workspace_app.embedding.embedder import Embedder
        from workspace_app.ingest import pipeline

        self._wrap(Embedder, "_encode_in_batches", "embedding_model", collect_texts=True)
        self._wrap(Embedder, "embed_passages", "embed_passages_total")
        self._wrap(Embedder, "count_tokens", "count_tokens")
        self._wrap(pipeline, "parse_source", "parse")
        self._wrap(pipeline, "_build_chunks", "chunking")
        self._wrap(pipeline, "_index_vectors", "vector_index")
        self._wrap(SqliteCatalog, "replace_chunks", "catalog_fts_write")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)
        self._restore.clear()

    def _wrap(self, owner: Any, attr: str, key: str, collect_texts: bool = False) -> None:
        original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        seconds, cpu_seconds = self.seconds, self.cpu_seconds
        texts = self.encoded_texts

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if collect_texts:
                texts.extend(args[1])  # (self, texts, done, total, on_progress)
            started, cpu_started = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[key] += time.perf_counter() - started
                cpu_seconds[key] += time.process_time() - cpu_started

        setattr(owner, attr, timed)
        self._restore.append((owner, attr, original))


def pure_embedding_seconds(embedder: Any, texts: list[str]) -> tuple[float, float]:
    """(wall, process CPU) seconds to embed the same texts again with the model in one call (no cache, no pipeline)."""
    if not texts:
        return 0.0, 0.0
    model = embedder.model
    started, cpu_started = time.perf_counter(), time.process_time()
    model.encode(
        texts,
        batch_size=embedder._settings.batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return time.perf_counter() - started, time.process_time() - cpu_started


# ---------------------------------------------------------------------------------------------------------
# Building (or reusing) ingested workspaces


class MemoizedQueries:
    """Embed each distinct query once while measuring quality (hybrid and dense-only ask for the same vector).

    Not used for latency, where every search pays for its query embedding.
    """

    def __init__(self, service: Any) -> None:
        self._embedder = service.embedder

    def __enter__(self) -> Self:
        original = self._embedder.embed_query
        self._embedder.embed_query = functools.lru_cache(maxsize=None)(original)
        return self

    def __exit__(self, *exc: object) -> None:
        del self._embedder.embed_query  # back to the class's method


def warm(service: Any) -> float:
    """Load the embedding model and run it once; returns seconds taken."""
    started = time.perf_counter()
    service.embedder.embed_query("warm up the embedder")
    return time.perf_counter() - started


def ingest_sources(
    service: Any,
    workspace: str,
    sources: Sequence[tuple[Path, str]],
    label: str,
    every: int = 1,
    measure_pure: bool = False,
) -> dict[str, Any]:
    """Ingest files into a (new) workspace with timers; returns the ingestion record."""
    service.create_workspace(workspace)
    model_load_s = warm(service)
    reports = []
    failures = []
    wall = cpu = interleaved = interleaved_cpu = 0.0
    with IngestProbe() as probe:
        started = time.perf_counter()
        for index, (path, name) in enumerate(sources, start=1):
            already = len(probe.encoded_texts)
            t0, c0 = time.perf_counter(), time.process_time()
            report = service.ingest_file(workspace, path, name)
            took = time.perf_counter() - t0
            wall += took
            cpu += time.process_time() - c0
            if measure_pure:
                # Right away, while the machine is in the same state: this document's texts again, one call.
                w, c = pure_embedding_seconds(service.embedder, probe.encoded_texts[already:])
                interleaved += w
                interleaved_cpu += c
            reports.append(report)
            if report.status != "ready":
                failures.append({"document": name, "status": report.status, "error": report.error})
                log(f"  !! {label}: {name} -> {report.status}: {report.error}")
            if every == 1:
                log(f"  {label}: {name}: {report.pages} pages, {report.chunks} chunks, {took:.1f} s")
            elif index % every == 0 or index == len(sources):
                log(f"  {label}: {index}/{len(sources)} documents, {time.perf_counter() - started:.0f} s")
    pages = sum(r.pages for r in reports)
    chunks = sum(r.chunks for r in reports)
    stages = {k: round(v, 3) for k, v in sorted(probe.seconds.items())}
    record: dict[str, Any] = {
        "documents": len(reports),
        "pages": pages,
        "chunks": chunks,
        "failures": failures,
        "wall_s": round(wall, 2),
        "pages_per_s": round(pages / wall, 2) if wall else None,
        "model_load_and_warmup_s_excluded": round(model_load_s, 2),
        "embedded_texts": len(probe.encoded_texts),
        "chunks_not_embedded_cached_or_duplicate": chunks - len(probe.encoded_texts),
        "embedding_model_s": round(probe.seconds["embedding_model"], 2),
        "embedding_share": round(probe.seconds["embedding_model"] / wall, 4) if wall else None,
        "stage_seconds": stages,
        "cpu_s": round(cpu, 2),
        "embedding_model_cpu_s": round(probe.cpu_seconds["embedding_model"], 2),
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "measured_at": now_iso(),
        "git_commit": git_info()["commit"],
    }
    if measure_pure:
        log(f"  {label}: embedding the same {len(probe.encoded_texts)} texts again in one model call ...")
        pure, pure_cpu = pure_embedding_seconds(service.embedder, probe.encoded_texts)
        record["pure_embedding_s"] = round(pure, 2)
        record["pure_embedding_cpu_s"] = round(pure_cpu, 2)
        record["wall_over_pure"] = round(wall / pure, 3) if pure else None
        record["model_over_pure"] = round(probe.seconds["embedding_model"] / pure, 3) if pure else None
        # Process CPU time barely moves when other processes compete for the cores; wall time does.
        record["cpu_over_pure_cpu"] = round(cpu / pure_cpu, 3) if pure_cpu else None
        record["loadavg_after_pure"] = [round(x, 2) for x in os.getloadavg()]
        # The same, with each document's texts re-embedded right after it was ingested: both sides of the
        # ratio see the same machine load (the one-call figure above may run under a different load).
        record["pure_embedding_interleaved_per_document_s"] = round(interleaved, 2)
        record["wall_over_pure_interleaved"] = round(wall / interleaved, 3) if interleaved else None
        record["cpu_over_pure_cpu_interleaved"] = round(cpu / interleaved_cpu, 3) if interleaved_cpu else None
    return record


class CachedWorkspace:
    """A data dir under bench/.cache holding one ingested workspace, rebuilt when its fingerprint changes."""

    WORKSPACE = "bench"

    def __init__(self, kind: str, inputs: Sequence[Path], share_embedding_cache: bool = True) -> None:
        self.kind = kind
        # Dev and PubMedQA reuse vectors of unchanged chunk texts across fingerprints (fast chunking
        # iteration); the 13-PDF workspace never does, so its ingestion timing always embeds everything.
        self.share_embedding_cache = share_embedding_cache
        self.fingerprint, self.fingerprint_parts = ingest_fingerprint(kind, inputs)
        self.data_dir = CACHE_DIR / f"{kind}-{self.fingerprint}"
        self.meta_path = self.data_dir / "bench-meta.json"
        self.service: Any = None
        self.built_now = False
        self.meta: dict[str, Any] = {}

    def open(self, build: Callable[[Any], dict[str, Any]], fresh: bool) -> Any:
        if fresh or not self.meta_path.exists():
            if self.data_dir.exists():
                shutil.rmtree(self.data_dir)
            self.service = self._service()
            log(f"[{self.kind}] ingesting into {self.data_dir.relative_to(REPO)} (fingerprint {self.fingerprint})")
            record = build(self.service)
            self.built_now = True
            self.meta = {"fingerprint": self.fingerprint, "fingerprint_parts": self.fingerprint_parts, "ingest": record}
            if record["failures"]:
                log(f"[{self.kind}] {len(record['failures'])} documents failed: not caching this data dir")
            else:
                self.meta_path.write_text(json.dumps(self.meta, indent=2, ensure_ascii=False))
                self._drop_stale()
        else:
            self.meta = json.loads(self.meta_path.read_text())
            self.service = self._service()
            log(f"[{self.kind}] reusing {self.data_dir.relative_to(REPO)} (fingerprint {self.fingerprint})")
        return self.service

    def _service(self) -> Any:
        from storage.sqlite.embedding_cache import SqliteEmbeddingCache
        from workspace_app.adapters.wiring import build_service
        from workspace_app.embedding.embedder import Embedder

        settings = bench_settings(self.data_dir)
        if not self.share_embedding_cache:
            return build_service(settings)
        path = CACHE_DIR / f"embeddings-{embedding_fingerprint()}.sqlite"
        return build_service(settings, Embedder(settings.embedding, SqliteEmbeddingCache(path)))

    def _drop_stale(self) -> None:
        for other in CACHE_DIR.glob(f"{self.kind}-*"):
            if other != self.data_dir and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)

    def summary(self) -> dict[str, Any]:
        ingest = self.meta.get("ingest", {})
        return {
            "data_dir": str(self.data_dir.relative_to(REPO)),
            "fingerprint": self.fingerprint,
            "ingested_this_run": self.built_now,
            "documents": ingest.get("documents"),
            "pages": ingest.get("pages"),
            "chunks": ingest.get("chunks"),
            "ingest_wall_s": ingest.get("wall_s"),
        }


# ---------------------------------------------------------------------------------------------------------
# Metrics


def method_search(service: Any, query: str, method: str, top_k: int) -> list[Any]:
    """Hits of one benchmark method (its retrieval methods, and its fusion where it names one)."""
    settings = service.settings.retrieval
    default = settings.fusion
    settings.fusion = FUSION_OF_METHOD.get(method, default)
    try:
        return list(service.search(CachedWorkspace.WORKSPACE, query, top_k=top_k, methods=METHODS[method]).hits)
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


def page_hit(gold_doc: str, gold_pages: Sequence[int]) -> Callable[[Any], bool]:
    def check(hit: Any) -> bool:
        chunk = hit.chunk
        return hit.document_name == gold_doc and any(chunk.page_start <= p <= chunk.page_end for p in gold_pages)

    return check


def document_hit(name: str) -> Callable[[Any], bool]:
    def check(hit: Any) -> bool:
        return bool(hit.document_name == name)

    return check


def compact_json(data: Any) -> str:
    """Indented JSON with every list of scalars on one line (keeps the per-query details readable)."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r",\s*\n\s*", ", ", m.group(1)) + "]", text)
    return text + "\n"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ---------------------------------------------------------------------------------------------------------
# 1. Guideline dev set


def dev_inputs() -> list[Path]:
    return [CORPUS_DIR / name for name in DEV_DOCS]


def build_dev(service: Any) -> dict[str, Any]:
    return ingest_sources(service, CachedWorkspace.WORKSPACE, [(p, p.name) for p in dev_inputs()], "dev")


def eval_dev(service: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Page-hit@k and MRR@10 per method, overall / en / zh, with per-question details."""
    answerable = [q for q in questions if q["kind"] != "unanswerable"]
    details = []
    started = time.perf_counter()
    for q in answerable:
        check = page_hit(q["doc"], q["pages"])
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
        for method in METHODS:
            hits = method_search(service, q["question"], method, TOP_K)
            row["rank"][method] = first_rank(hits, check)
            row["doc_rank"][method] = first_rank(hits, document_hit(q["doc"]))
            row["top3"][method] = [[h.document_name, h.chunk.page_start, h.chunk.page_end] for h in hits[:3]]
        details.append(row)
    metrics: dict[str, Any] = {}
    for method in METHODS:
        metrics[method] = {
            group: rank_metrics(
                [d["rank"][method] for d in details if group == "all" or d["lang"] == group], (1, 3, 5, 10), "hit"
            )
            for group in ("all", "en", "zh")
        }
    misses = {m: [d["id"] for d in details if d["rank"][m] is None or d["rank"][m] > 5] for m in METHODS}
    return {
        "questions": len(details),
        "eval_s": round(time.perf_counter() - started, 2),
        "metrics": metrics,
        "misses_at_5": misses,
        "details": details,
    }


def _loose(text: str) -> str:
    """Tolerant comparison key: NFKC, lower case, letters/digits/CJK only (drops hyphens, $, spaces)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


def _snippet(text: str, limit: int = 240) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def print_misses(service: Any, questions: list[dict[str, Any]], dev: dict[str, Any], method: str, k: int) -> None:
    """The questions `method` misses at @k: gold quote, where the quote's chunks rank, and the top-3 hits."""
    by_id = {q["id"]: q for q in questions}
    missed = [d for d in dev["details"] if d["rank"][method] is None or d["rank"][method] > k]
    workspace = service.get_workspace(CachedWorkspace.WORKSPACE)
    documents = {d.name: d for d in service.catalog.list_documents(workspace.id)}
    print(f"\n=== {len(missed)} dev questions missed by {method} at @{k} ===")
    for row in missed:
        q = by_id[row["id"]]
        check = page_hit(q["doc"], q["pages"])
        print(f"\n--- {q['id']} [{q['lang']}, {q['kind']}] {q['doc']} p{q['pages']}")
        print(f"Q: {q['question']}")
        print(f"gold quote (p{q['quote_page']}): {_snippet(q['quote'], 400)}")
        print("first page-hit rank @10: " + ", ".join(f"{m}={row['rank'][m]}" for m in METHODS))
        # Where the quote lives in the chunking, and how deep those chunks rank (top 50 per method).
        gold_chunks: list[Any] = []
        document = documents.get(q["doc"])
        if document is not None:
            chunk_map = service.catalog.get_chunks(service.catalog.document_chunk_ids(document.id))
            key = _loose(q["quote"])
            halves = [key[: len(key) // 2], key[len(key) // 2 :]]
            for chunk in sorted(chunk_map.values(), key=lambda c: c.ordinal):
                loose = _loose(chunk.text)
                if key in loose or any(len(h) >= 12 and h in loose for h in halves):
                    gold_chunks.append(chunk)
        if not gold_chunks:
            print("quote chunk: NOT FOUND in any chunk of the gold document (text lost or mangled at ingest?)")
        deep = {
            m: method_search(service, q["question"], m, 50)
            for m in METHODS
        }
        for chunk in gold_chunks:
            ranks = {m: next((h.rank for h in hits if h.chunk.id == chunk.id), None) for m, hits in deep.items()}
            pages_ok = any(chunk.page_start <= p <= chunk.page_end for p in q["pages"])
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


# ---------------------------------------------------------------------------------------------------------
# 2. PubMedQA


def pubmedqa_inputs() -> list[Path]:
    return [EVAL_DIR / "pubmedqa_corpus.jsonl"]


def build_pubmedqa(service: Any) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-pubmedqa-"))
    try:
        sources = []
        for doc in load_jsonl(EVAL_DIR / "pubmedqa_corpus.jsonl"):
            path = folder / f"{doc['id']}.txt"
            path.write_text(doc["text"], encoding="utf-8")
            sources.append((path, path.name))
        return ingest_sources(service, CachedWorkspace.WORKSPACE, sources, "pubmedqa", every=100)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def eval_pubmedqa(service: Any) -> dict[str, Any]:
    queries = load_jsonl(EVAL_DIR / "pubmedqa_dev_queries.jsonl")
    ranks: dict[str, list[int | None]] = {m: [] for m in METHODS}
    per_query: dict[str, list[int | None]] = {}
    started = time.perf_counter()
    for index, q in enumerate(queries, start=1):
        gold = f"{q['gold_id']}.txt"
        row = []
        for method in METHODS:
            hits = method_search(service, q["question"], method, TOP_K)
            rank = first_rank(hits, document_hit(gold))
            ranks[method].append(rank)
            row.append(rank)
        per_query[q["id"]] = row
        if index % 100 == 0:
            log(f"  pubmedqa: {index}/{len(queries)} queries, {time.perf_counter() - started:.0f} s")
    return {
        "queries": len(queries),
        "eval_s": round(time.perf_counter() - started, 2),
        "metrics": {m: rank_metrics(r, (1, 5, 10), "recall") for m, r in ranks.items()},
        "misses_at_1": {m: [qid for qid, row in per_query.items() if row[i] != 1] for i, m in enumerate(METHODS)},
        "ranks_by_query": {"order": list(METHODS), "ranks": per_query},
    }


# ---------------------------------------------------------------------------------------------------------
# 3. Latency and 4. ingestion


def all_inputs() -> list[Path]:
    return sorted(CORPUS_DIR.glob("*.pdf"))


def build_all(service: Any) -> dict[str, Any]:
    return ingest_sources(
        service, CachedWorkspace.WORKSPACE, [(p, p.name) for p in all_inputs()], "all13", measure_pure=True
    )


def percentile(values: Sequence[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), q))


def forget_recent_queries(embedder: Any) -> bool:
    """Empty the embedder's recent-query memo, if it has one, so a repeated query pays for its embedding."""
    recent = getattr(embedder, "_recent_queries", None)
    if recent is None:
        return False
    recent.clear()
    return True


def eval_latency(service: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Hybrid search latency over the 13-PDF workspace: per-query median of 3 passes, then p50/p95.

    Every pass repeats the same 50 questions, so the embedder's recent-query memo (workspace_app.embedding.embedder)
    is emptied before each timed search: the figure includes embedding the query, as a new question would.
    """
    warm(service)
    for q in questions[:5]:
        service.search(CachedWorkspace.WORKSPACE, q["question"], top_k=TOP_K)
    samples: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    cleared = False
    for _ in range(LATENCY_PASSES):
        for q in questions:
            cleared = forget_recent_queries(service.embedder)
            started = time.perf_counter()
            result = service.search(CachedWorkspace.WORKSPACE, q["question"], top_k=TOP_K)
            samples[q["id"]].append((time.perf_counter() - started) * 1000)
            for stage, ms in result.timings_ms.items():
                stages[q["id"]][stage].append(ms)
    medians = [statistics.median(v) for v in samples.values()]
    embed_p50 = statistics.median(
        statistics.median(per["embed_query"]) for per in stages.values() if "embed_query" in per
    )
    if embed_p50 < 1.0:
        log(f"  !! latency: query embedding took {embed_p50:.2f} ms at p50: it looks cached, the figures understate")
    every = [ms for v in samples.values() for ms in v]
    stage_names = sorted({s for per in stages.values() for s in per})
    stage_p50 = {
        s: round(statistics.median([statistics.median(per[s]) for per in stages.values() if s in per]), 2)
        for s in stage_names
    }
    return {
        "method": "hybrid",
        "top_k": TOP_K,
        "queries": len(medians),
        "passes": LATENCY_PASSES,
        "p50_ms": round(statistics.median(medians), 2),
        "p95_ms": round(percentile(medians, 95), 2),
        "max_ms": round(max(medians), 2),
        "raw_p95_ms_all_samples": round(percentile(every, 95), 2),
        "stage_p50_ms": stage_p50,
        "recent_query_memo_cleared": cleared,
        "per_query_median_ms": {qid: round(statistics.median(v), 2) for qid, v in samples.items()},
    }


def latency_with_one_thread(service: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The same latency run with torch limited to one thread (not what the app does today: a what-if).

    On a small shared machine, two intra-op threads for a single short query stall whenever another process
    takes one of the cores; one thread does not wait for a partner.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        found = eval_latency(service, questions)
    finally:
        torch.set_num_threads(before)
    return {k: found[k] for k in ("p50_ms", "p95_ms", "max_ms", "stage_p50_ms")}


def fresh_ingest_timing() -> dict[str, Any]:
    """Ingest the 13 PDFs into a brand-new temporary data dir (empty embedding cache)."""
    from workspace_app.adapters.wiring import build_service

    folder = Path(tempfile.mkdtemp(prefix="bench-fresh-ingest-"))
    try:
        service = build_service(bench_settings(folder))
        log(f"[fresh-ingest] ingesting the 13 PDFs into {folder}")
        record = build_all(service)
        service.catalog.close()
        return record
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------
# Run info, report


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@functools.lru_cache(maxsize=1)
def git_info() -> dict[str, Any]:
    def run(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    dirty = run("status", "--porcelain", "--", "workspace_app", "storage")
    return {"commit": run("rev-parse", "HEAD") or None, "core_dirty": bool(dirty)}


def machine_info() -> dict[str, Any]:
    import torch

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def check_targets(results: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, float | None] = {}
    dev = results.get("dev", {}).get("metrics", {}).get("hybrid")
    if dev:
        values["dev hybrid page-hit@5"] = dev["all"]["hit@5"]
        values["dev hybrid page-hit@1"] = dev["all"]["hit@1"]
        values["dev hybrid zh page-hit@5"] = dev["zh"].get("hit@5")
    pub = results.get("pubmedqa", {}).get("metrics", {}).get("hybrid")
    if pub:
        values["pubmedqa hybrid R@1"] = pub["recall@1"]
    if results.get("latency"):
        values["search p95 ms (hybrid, 13 PDFs)"] = results["latency"]["p95_ms"]
    ingestion = results.get("ingestion") or {}
    if ingestion.get("wall_over_pure") is not None:
        values["ingestion wall / pure embedding"] = ingestion["wall_over_pure"]
    out = {}
    for name, (op, target) in TARGETS.items():
        value = values.get(name)
        ok = None if value is None else {">=": value >= target, "<": value < target, "<=": value <= target}[op]
        out[name] = {"value": value, "target": f"{op} {target}", "met": ok}
    return out


def _f(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


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


# ---------------------------------------------------------------------------------------------------------
# Main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", action="store_true", help="re-ingest every workspace this run uses")
    parser.add_argument(
        "--fresh-ingest-timing",
        action="store_true",
        help="time ingestion of the 13 PDFs into a new temporary data dir (empty embedding cache)",
    )
    parser.add_argument("--skip-pubmedqa", action="store_true", help="skip the PubMedQA benchmark")
    parser.add_argument("--skip-latency", action="store_true", help="skip the 13-PDF latency benchmark")
    parser.add_argument("--only-dev", action="store_true", help="only the guideline dev set (fast iteration)")
    parser.add_argument("--misses", action="store_true", help="print the dev questions missed (with snippets)")
    parser.add_argument("--misses-method", choices=sorted(METHODS), default="hybrid")
    parser.add_argument("--misses-k", type=int, default=5)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results JSON (default bench/results/retrieval.json for a full run, "
        "bench/results/retrieval.partial.json when something is skipped)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        nargs="?",
        const=RESULTS_DIR / "retrieval.json",
        default=None,
        metavar="RESULTS_JSON",
        help="print the README tables from a results JSON and exit (no run)",
    )
    args = parser.parse_args(argv)
    if args.only_dev:
        args.skip_pubmedqa = args.skip_latency = True
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.chdir(REPO)
    if args.markdown:
        print(markdown_report(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return 0
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    run_started = time.perf_counter()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    questions = load_jsonl(EVAL_DIR / "guidelines_dev.jsonl")
    misses_text = ""
    full = not (args.skip_pubmedqa or args.skip_latency)
    results: dict[str, Any] = {
        "timestamp": now_iso(),
        "command": "python -m bench.retrieval " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine_info(),
        "git": git_info(),
    }

    # Fingerprint every workspace now, right after the app modules are imported: the code in memory is the
    # code the fingerprints describe, even if someone edits the core while this run is going.
    import workspace_app.adapters.wiring  # noqa: F401

    dev_ws = CachedWorkspace("dev", dev_inputs())
    pub_ws = None if args.skip_pubmedqa else CachedWorkspace("pubmedqa", pubmedqa_inputs())
    all_ws = None if args.skip_latency else CachedWorkspace("all13", all_inputs(), share_embedding_cache=False)
    current = f"embeddings-{embedding_fingerprint()}.sqlite"
    for stale in CACHE_DIR.glob("embeddings-*.sqlite*"):
        if not stale.name.startswith(current):  # also its -wal / -shm files
            stale.unlink(missing_ok=True)
    service = dev_ws.open(build_dev, args.fresh)
    results["settings"] = service.settings.model_dump(mode="json", exclude={"llm", "storage"})
    results["ingest_fingerprint"] = dev_ws.fingerprint_parts["code"]
    warm(service)
    log("[dev] evaluating")
    with MemoizedQueries(service):
        dev = eval_dev(service, questions)
        results["dev"] = {"workspace": dev_ws.summary(), **dev}
        if args.misses:
            with contextlib.redirect_stdout(io.StringIO()) as buffer:
                print_misses(service, questions, dev, args.misses_method, args.misses_k)
            misses_text = buffer.getvalue()

    if pub_ws is not None:
        service = pub_ws.open(build_pubmedqa, args.fresh)
        warm(service)
        log("[pubmedqa] evaluating")
        with MemoizedQueries(service):
            results["pubmedqa"] = {"workspace": pub_ws.summary(), **eval_pubmedqa(service)}

    ingestion: dict[str, Any] | None = None
    if all_ws is not None:
        service = all_ws.open(build_all, args.fresh)
        log("[latency] measuring")
        results["latency"] = {"workspace": all_ws.summary(), **eval_latency(service, questions)}
        results["latency"]["what_if_torch_threads_1"] = latency_with_one_thread(service, questions)
        log("[dev on all 13 PDFs] evaluating (comparable with the PEERS.md baselines)")
        with MemoizedQueries(service):
            results["dev_all13"] = {"workspace": all_ws.summary(), **eval_dev(service, questions)}
        ingestion = {
            **all_ws.meta["ingest"],
            "source": "cached-workspace build (fresh data dir, empty embedding cache)",
            "measured_this_run": all_ws.built_now,
        }
    if args.fresh_ingest_timing:
        ingestion = {
            **fresh_ingest_timing(),
            "source": "--fresh-ingest-timing (temporary data dir)",
            "measured_this_run": True,
        }
    if ingestion is not None:
        results["ingestion"] = ingestion

    results["targets"] = check_targets(results)
    results["run_s"] = round(time.perf_counter() - run_started, 1)
    results["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out = args.out or RESULTS_DIR / ("retrieval.json" if full else "retrieval.partial.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(compact_json(results), encoding="utf-8")
    print_report(results)
    print(misses_text, end="")
    print(f"\nresults: {out.relative_to(REPO) if out.is_relative_to(REPO) else out} ({results['run_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
