"""Embedder throughput per backend (torch, onnx, onnx-int8) on the dev workspace's chunks, and what it costs.

Run from the repository root, after `python -m bench.retrieval --only-dev` has ingested the dev documents:

    .venv/bin/python -m bench.embedder                 # ~10 min on 2 cores
    .venv/bin/python -m bench.embedder --rounds 3 --sample 64

Speed: a fixed sample of chunk texts (what ingestion embeds: `embedding_text(chunk)`), and one of pairs of
chunks joined (every passage fills the model's 256 word pieces), are embedded by each backend in turn, round
after round with the order rotated, so a busy machine slows all backends alike; the figures are medians over
rounds and each ratio is taken within a round. Quality: every chunk of the dev workspace is embedded by each
backend and compared with torch's vectors (cosine); the dev questions are searched by brute force over each
backend's vectors (top-10 agreement with torch, dense page-hit@k), and through the app's own search (hybrid
and dense, bench.retrieval's metrics) on a temporary copy of the dev data dir whose vectors are replaced by
the backend's. The dev data dir itself is only read. Exports go to `bench/.cache/onnx/`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from bench.common import (
    CACHE_DIR,
    EVAL_DIR,
    REPO,
    RESULTS_DIR,
    CachedWorkspace,
    bench_settings,
    load_jsonl,
    log,
    open_app,
)
from bench.common.app import new_embedder, vector_index

RESULTS = RESULTS_DIR / "embedder.json"
BACKENDS = ("torch", "onnx", "onnx-int8")


def dev_data_dir() -> Path:
    """The newest complete dev workspace of bench.retrieval (it writes bench-meta.json last)."""
    found = sorted(CACHE_DIR.glob("dev-*/bench-meta.json"), key=lambda path: path.stat().st_mtime)
    if not found:
        raise SystemExit("No dev workspace in bench/.cache: run `python -m bench.retrieval --only-dev` first.")
    return found[-1].parent


def read_chunks(data_dir: Path) -> list[dict[str, Any]]:
    """Chunks of the catalog (read-only) with the text the embedder sees."""
    from workspace_app.ingest.pipeline import embedding_text

    with sqlite3.connect(f"file:{data_dir / 'catalog.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT c.id, d.name, c.text, c.section, c.page_start, c.page_end FROM chunks c "
            "JOIN documents d ON d.id = c.document_id ORDER BY d.name, c.ordinal"
        ).fetchall()
    return [
        {
            "id": chunk_id, "doc": doc, "pages": (first, last),
            "text": embedding_text(SimpleNamespace(text=text, section=section)),  # type: ignore[arg-type]
        }
        for chunk_id, doc, text, section, first, last in rows
    ]


def load_embedders() -> dict[str, Any]:
    from workspace_app.config import EmbeddingSettings

    embedders = {}
    for backend in BACKENDS:
        started = time.perf_counter()
        embedder = new_embedder(EmbeddingSettings(backend=backend, export_dir=CACHE_DIR / "onnx"))  # type: ignore[arg-type]
        _ = embedder.dimension  # loads (and exports, the first time)
        log(f"{backend}: ready in {time.perf_counter() - started:.1f} s")
        embedders[backend] = embedder
    return embedders


def measure_speed(embedders: dict[str, Any], texts: list[str], rounds: int) -> dict[str, Any]:
    """Passages/s per backend per round (rotated order) and each round's ratio to torch."""
    names = list(embedders)
    for name in names:  # warm-up: first calls allocate
        embedders[name].embed_passages(texts[:8])
    speed: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(rounds):
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            embedders[name].embed_passages(texts)
            speed[name].append(len(texts) / (time.perf_counter() - started))
        log(f"round {round_no + 1}: " + ", ".join(f"{n} {speed[n][-1]:.1f}/s" for n in names))
    out = {}
    for name in names:
        ratios = [mine / base for mine, base in zip(speed[name], speed["torch"], strict=True)]
        out[name] = {
            "passages_per_s_median": round(statistics.median(speed[name]), 2),
            "passages_per_s_rounds": [round(value, 2) for value in speed[name]],
            "ratio_to_torch_median": round(statistics.median(ratios), 3),
            "ratio_to_torch_rounds": [round(value, 3) for value in ratios],
        }
    return out


def page_hit_rate(top: np.ndarray, chunks: list[dict[str, Any]], questions: list[dict[str, Any]], k: int) -> float:
    hits = [
        any(chunks[i]["doc"] == q["doc"] and any(chunks[i]["pages"][0] <= p <= chunks[i]["pages"][1] for p in q["pages"])
            for i in row[:k])
        for row, q in zip(top, questions, strict=True)
    ]
    return round(float(np.mean(hits)), 3)


def measure_quality(
    embedders: dict[str, Any], chunks: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Cosine to torch's vectors on every chunk and question; top-10 agreement and dense page-hit (brute force)."""
    texts = [chunk["text"] for chunk in chunks]
    vectors, queries = {}, {}
    for name, embedder in embedders.items():
        started = time.perf_counter()
        vectors[name] = embedder.embed_passages(texts)
        queries[name] = np.stack([embedder.embed_query(q["question"]) for q in questions])
        log(f"{name}: {len(texts)} chunks embedded in {time.perf_counter() - started:.1f} s")
    answerable = np.array([q["kind"] != "unanswerable" for q in questions])
    reference = np.argsort(-(queries["torch"] @ vectors["torch"].T), axis=1)[:, :10]
    out = {}
    for name in embedders:
        top = np.argsort(-(queries[name] @ vectors[name].T), axis=1)[:, :10]
        cosine = np.sum(vectors[name] * vectors["torch"], axis=1)
        query_cosine = np.sum(queries[name] * queries["torch"], axis=1)
        overlap = np.array([len(set(a) & set(b)) / 10 for a, b in zip(top, reference, strict=True)])
        out[name] = {
            "chunk_cosine_mean": round(float(cosine.mean()), 5),
            "chunk_cosine_min": round(float(cosine.min()), 5),
            "query_cosine_mean": round(float(query_cosine.mean()), 5),
            "query_cosine_min": round(float(query_cosine.min()), 5),
            "dev_top10_overlap": round(float(overlap.mean()), 3),
            "dev_top10_overlap_answerable": round(float(overlap[answerable].mean()), 3),
            "dev_top1_same": round(float(np.mean(top[:, 0] == reference[:, 0])), 3),
            **{
                f"dev_dense_page_hit@{k}": page_hit_rate(
                    top[answerable], chunks, [q for q, a in zip(questions, answerable, strict=True) if a], k
                )
                for k in (1, 5, 10)
            },
        }
    return out, vectors


def measure_retrieval(
    embedders: dict[str, Any], chunks: list[dict[str, Any]], vectors: dict[str, np.ndarray], data_dir: Path,
    questions: list[dict[str, Any]],
) -> dict[str, Any]:
    """bench.retrieval's dev metrics (hybrid and dense) with each backend's vectors, on the copy of the data dir."""
    from bench.retrieval_dev import eval_dev

    out = {}
    for name, embedder in embedders.items():
        settings = bench_settings(data_dir)
        settings.embedding.backend = name  # type: ignore[assignment]
        app = open_app(settings, embedder)
        workspace = app.workspaces.get(CachedWorkspace.WORKSPACE)
        # The copy's vectors are replaced in place (same ids and metadata); queries use the same backend.
        collection = vector_index(app)._collection(workspace.id)
        ids = [chunk["id"] for chunk in chunks]
        for start in range(0, len(ids), 2000):
            collection.update(ids=ids[start : start + 2000], embeddings=vectors[name][start : start + 2000])
        metrics = eval_dev(app, questions)["metrics"]
        app.close()
        out[name] = {
            method: {group: {k: v for k, v in values.items() if k != "n"} for group, values in groups.items()}
            for method, groups in metrics.items() if method in ("hybrid", "dense")
        }
        log(f"{name}: hybrid {out[name]['hybrid']['all']}")
    return out


def markdown(results: dict[str, Any]) -> str:
    """The README table: speed on both samples, then what the vectors change."""
    header = (
        "| backend | chunks: passages/s (× torch) | 256 word pieces: passages/s (× torch) | chunk cosine mean / min "
        "| dev top-10 overlap | dev dense page-hit@1 / @5 (brute force) | dev hybrid page-hit@1 / @5 |"
    )
    rows = [header, "|---|---|---|---|---|---|---|"]
    for name in BACKENDS:
        speeds = [results["speed"][sample]["backends"][name] for sample in ("chunks", "full_length")]
        q, hybrid = results["quality"][name], results["dev_retrieval"][name]["hybrid"]["all"]
        rows.append(
            f"| {name} | "
            + " | ".join(f"{s['passages_per_s_median']:.1f} ({s['ratio_to_torch_median']:.2f})" for s in speeds)
            + f" | {q['chunk_cosine_mean']:.4f} / {q['chunk_cosine_min']:.4f} | {q['dev_top10_overlap']:.3f} "
            f"| {q['dev_dense_page_hit@1']:.3f} / {q['dev_dense_page_hit@5']:.3f} "
            f"| {hybrid['hit@1']:.3f} / {hybrid['hit@5']:.3f} |"
        )
    return "\n".join(rows)


def speed_samples(chunks: list[dict[str, Any]], size: int) -> dict[str, list[str]]:
    """Chunk texts as ingestion embeds them, and pairs of them joined (cut at the model's 256 word pieces)."""
    texts = [chunk["text"] for chunk in chunks]
    rng = random.Random(0)
    pairs = [f"{a}\n{b}" for a, b in zip(rng.sample(texts, size), rng.sample(texts, size), strict=True)]
    return {"chunks": random.Random(0).sample(texts, size), "full_length": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="ingested dev workspace (default: newest bench/.cache/dev-*)")
    parser.add_argument("--sample", type=int, default=96, help="passages in each speed sample")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each speed measurement")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    load_start = os.getloadavg()
    data_dir = args.data_dir or dev_data_dir()
    # bench.retrieval replaces its data dirs when its fingerprint changes: work on a copy taken now.
    scratch = tempfile.TemporaryDirectory()
    copy = Path(scratch.name) / "dev"
    shutil.copytree(data_dir, copy)
    chunks = read_chunks(copy)
    questions = load_jsonl(EVAL_DIR / "guidelines_dev.jsonl")
    embedders = load_embedders()
    torch_embedder = embedders["torch"]
    speed = {}
    for name, sample in speed_samples(chunks, min(args.sample, len(chunks))).items():
        tokens = [min(n, torch_embedder.max_tokens) for n in torch_embedder.count_tokens(sample)]
        log(f"speed on {name} ({np.mean(tokens):.0f} word pieces on average)")
        speed[name] = {
            "passages": len(sample), "rounds": args.rounds,
            "word_pieces_mean": round(float(np.mean(tokens)), 1), "word_pieces_max": max(tokens),
            "backends": measure_speed(embedders, sample, args.rounds),
        }
    quality, vectors = measure_quality(embedders, chunks, questions)
    retrieval = measure_retrieval(embedders, chunks, vectors, copy, questions)
    scratch.cleanup()
    import onnxruntime
    import torch

    from workspace_app.config import EmbeddingSettings

    results = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "data_dir": str(data_dir.relative_to(REPO) if data_dir.is_relative_to(REPO) else data_dir),
        "machine": {
            "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "platform": platform.platform(),
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
        },
        "versions": {"torch": torch.__version__, "onnxruntime": onnxruntime.__version__},
        "batch_size": EmbeddingSettings().batch_size,
        "speed": speed,
        "quality_set": {"chunks": len(chunks), "dev_questions": len(questions)},
        "quality": quality,
        "dev_retrieval": retrieval,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(results))


if __name__ == "__main__":
    main()
