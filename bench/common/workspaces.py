"""Ingested workspaces the benchmarks reuse: building them with timers, caching them under bench/.cache.

Each workspace is ingested once into its own data dir `bench/.cache/<kind>-<fingerprint>/` and reused while its
fingerprint (bench/common/fingerprint.py) is unchanged. While it ingests, `IngestProbe` wraps the embedder and
pipeline stages with timers (a measurement: nothing changes in behaviour).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

from bench.common.app import BenchApp, bench_settings, open_app
from bench.common.fingerprint import embedding_fingerprint, ingest_fingerprint
from bench.common.paths import CACHE_DIR, REPO, all_inputs, log, now_iso
from bench.common.run_info import git_info

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
        from workspace_app.embedding.embedder import Embedder
        from workspace_app.ingest import pipeline
        from workspace_app.storage.sqlite.catalog import SqliteCatalog

        self._wrap(Embedder, "_encode_in_batches", "embedding_model", collect_texts=True)
        self._wrap(Embedder, "embed_passages", "embed_passages_total")
        self._wrap(Embedder, "count_tokens", "count_tokens")
        # The pipeline's reader entry point (`parse_source` before the restructure, `read_source` after).
        self._wrap(pipeline, "read_source" if hasattr(pipeline, "read_source") else "parse_source", "parse")
        self._wrap(pipeline, "build_chunks" if hasattr(pipeline, "build_chunks") else "_build_chunks", "chunking")
        self._wrap(pipeline, "index_vectors", "vector_index")
        self._wrap(SqliteCatalog, "replace_chunks", "catalog_fts_write")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)
        self._restore.clear()

    def _wrap(self, owner: Any, attr: str, key: str, collect_texts: bool = False) -> None:
        if isinstance(owner, type):  # wrapped where it is defined (a catalog inherits it from the facade)
            owner = next(klass for klass in owner.__mro__ if attr in klass.__dict__)
            original = owner.__dict__[attr]
        else:
            original = getattr(owner, attr)
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

    def __init__(self, app: BenchApp) -> None:
        self._embedder = app.embedder

    def __enter__(self) -> Self:
        original = self._embedder.embed_query
        self._embedder.embed_query = functools.lru_cache(maxsize=None)(original)
        return self

    def __exit__(self, *exc: object) -> None:
        del self._embedder.embed_query  # back to the class's method


def warm(app: BenchApp) -> float:
    """Load the embedding model and run it once; returns seconds taken."""
    started = time.perf_counter()
    app.embedder.embed_query("warm up the embedder")
    return time.perf_counter() - started


def forget_recent_queries(embedder: Any) -> bool:
    """Empty the embedder's recent-query memo, if it has one, so a repeated query pays for its embedding."""
    recent = getattr(embedder, "_recent_queries", None)
    if recent is None:
        return False
    recent.clear()
    return True


def ingest_sources(
    app: BenchApp,
    workspace: str,
    sources: Sequence[tuple[Path, str]],
    label: str,
    every: int = 1,
    measure_pure: bool = False,
) -> dict[str, Any]:
    """Ingest files into a (new) workspace with timers; returns the ingestion record."""
    app.workspaces.create(workspace)
    model_load_s = warm(app)
    reports = []
    failures = []
    wall = cpu = interleaved = interleaved_cpu = 0.0
    with IngestProbe() as probe:
        started = time.perf_counter()
        for index, (path, name) in enumerate(sources, start=1):
            already = len(probe.encoded_texts)
            t0, c0 = time.perf_counter(), time.process_time()
            report = app.documents.ingest(workspace, path, name)
            took = time.perf_counter() - t0
            wall += took
            cpu += time.process_time() - c0
            if measure_pure:
                # Right away, while the machine is in the same state: this document's texts again, one call.
                w, c = pure_embedding_seconds(app.embedder, probe.encoded_texts[already:])
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
        pure, pure_cpu = pure_embedding_seconds(app.embedder, probe.encoded_texts)
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
        self.app: Any = None
        self.built_now = False
        self.meta: dict[str, Any] = {}

    def open(self, build: Callable[[BenchApp], dict[str, Any]], fresh: bool) -> BenchApp:
        if fresh or not self.meta_path.exists():
            if self.data_dir.exists():
                shutil.rmtree(self.data_dir)
            self.app = self._open_app()
            log(f"[{self.kind}] ingesting into {self.data_dir.relative_to(REPO)} (fingerprint {self.fingerprint})")
            record = build(self.app)
            self.built_now = True
            self.meta = {"fingerprint": self.fingerprint, "fingerprint_parts": self.fingerprint_parts, "ingest": record}
            if record["failures"]:
                log(f"[{self.kind}] {len(record['failures'])} documents failed: not caching this data dir")
            else:
                self.meta_path.write_text(json.dumps(self.meta, indent=2, ensure_ascii=False))
                self._drop_stale()
        else:
            self.meta = json.loads(self.meta_path.read_text())
            self.app = self._open_app()
            log(f"[{self.kind}] reusing {self.data_dir.relative_to(REPO)} (fingerprint {self.fingerprint})")
        return self.app

    def _open_app(self) -> BenchApp:
        settings = bench_settings(self.data_dir)
        if not self.share_embedding_cache:
            return open_app(settings)
        return open_app(settings, embedding_cache=CACHE_DIR / f"embeddings-{embedding_fingerprint()}.sqlite")

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


def measure_corpus(measure: Callable[[Path, Any, Any], dict[str, Any]], only: Sequence[str] = ()) -> list[dict[str, Any]]:
    """`measure(pdf, embedder, ingest settings)` for every corpus PDF (or those named in `only`), in order: the
    benchmarks that chunk the corpus as ingestion does, without ingesting it (bench.grades, bench.quotes)."""
    from workspace_app.config import Settings
    from workspace_app.embedding.embedder import Embedder

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    embedder = Embedder(settings.embedding)
    rows = []
    for path in all_inputs():
        if only and path.name not in only:
            continue
        log(f"{path.name} ...")
        rows.append(measure(path, embedder, settings.ingest))
    return rows
