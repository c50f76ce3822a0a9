"""Entity graph extraction on an ingested workspace: per document entities, relations, communities, the graph
stage's seconds and share of ingestion, and the 30 highest-degree entities (name, type, degree) for review.

    python -m bench.graph_extraction [--data-dir DIR] [--workspace W] [--out FILE]

Without `--data-dir` it copies the newest cached 13-PDF workspace (bench/.cache/all13-*, made by
bench.retrieval) to a temporary folder, so the cache is never changed. The graph stage is run again on every
document in the order they were added, as the ingestion pipeline runs it (extraction, storing, refreshing
communities of the whole workspace), and timed. The share of ingestion compares it with the ingestion time of
the same documents from the cache's bench-meta.json: the pure embedding time on a quiet machine plus the other
stages, the smallest (least flattering) reference available.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx

from bench.common import CACHE_DIR, REPO, BenchApp, now_iso, open_app

TOP = 30


def extraction_stats(data_dir_or_app: Path | str | BenchApp, workspace: str, *, reindex: bool = True,
                     ingestion_seconds: float | None = None) -> dict[str, Any]:
    """Per document graph numbers and top-30 entities of a workspace; `reindex` runs and times the graph stage."""
    from workspace_app.graph.communities import MIN_WEIGHT, detect_communities, weighted_graph

    app = _app(data_dir_or_app)
    ws = app.workspaces.get(workspace)
    documents = [d for d in app.catalog.list_documents(ws.id) if d.status == "ready"]
    seconds: dict[str, dict[str, float]] = {}
    for document in documents if reindex else []:
        chunks = app.catalog.get_chunks(app.catalog.document_chunk_ids(document.id))
        ordered = sorted(chunks.values(), key=lambda c: c.ordinal)
        started = time.perf_counter()
        app.graph.index_document(document, ordered)
        seconds[document.id] = {"total_s": time.perf_counter() - started, **app.graph.timings}
    graph_s = sum(s["total_s"] for s in seconds.values())
    reference = ingestion_seconds or _reference_ingestion_s(app.settings.storage.data_dir)
    total_chunks = sum(d.chunks for d in documents) or 1
    entities = {e.id: e for e in app.graph.entities(ws.id)}
    per_document = []
    for document in documents:
        relations = app.graph.store.relations(ws.id, document_ids=[document.id])
        mentioned: Counter[str] = Counter()
        for mention in app.graph.store.mentions(ws.id, None, [document.id]):
            mentioned[mention.entity_id] += mention.count
        graph = weighted_graph(mentioned, relations)
        own = detect_communities(graph)
        share = (seconds.get(document.id, {}).get("total_s", 0.0) / (reference * document.chunks / total_chunks)) if reference else None
        per_document.append({
            "document": document.name, "chunks": document.chunks, "entities": len(mentioned),
            "relations": sum(1 for r in relations if r.weight >= MIN_WEIGHT), "relation_rows": len(relations),
            "communities": len(set(own.community.values())),
            "workspace_communities": len({entities[e].community for e in mentioned if e in entities and entities[e].community is not None}),
            "graph_s": round(seconds.get(document.id, {}).get("total_s", 0.0), 3),
            "graph_steps_s": {k: round(v, 3) for k, v in seconds.get(document.id, {}).items() if k != "total_s"},
            "share_of_ingestion": round(share, 4) if share is not None else None,
            "top": _top(graph, mentioned, entities),
        })
    return {
        "workspace": ws.name, "documents": per_document, "graph_s": round(graph_s, 3),
        "ingestion_reference_s": round(reference, 2) if reference else None,
        "share_of_ingestion": round(graph_s / reference, 4) if reference else None,
        "workspace_entities": len(entities), "workspace_relations": len(app.graph.relations(ws.id)),
        "workspace_communities": {level: len(app.graph.communities(ws.id, level)) for level in (0, 1)},
    }


def _top(graph: nx.Graph, mentioned: Counter[str], entities: dict[str, Any]) -> list[dict[str, Any]]:
    ranked = sorted(graph.nodes, key=lambda e: (-graph.degree(e), -mentioned[e], e))[:TOP]
    return [
        {"name": entities[e].name if e in entities else e, "type": entities[e].type if e in entities else "?",
         "degree": graph.degree(e), "mentions": mentioned[e]}
        for e in ranked
    ]


def _app(value: Path | str | BenchApp) -> BenchApp:
    if not isinstance(value, (str, Path)):
        return value
    from workspace_app.config import load_settings

    settings = load_settings(Path(value))
    return open_app(settings, embedding_cache=Path(value) / "embeddings.sqlite")


def _reference_ingestion_s(data_dir: Path) -> float | None:
    """Pure embedding seconds plus the other stages' seconds of the cached ingestion, if recorded."""
    meta = data_dir / "bench-meta.json"
    if not meta.is_file():
        return None
    ingest = json.loads(meta.read_text()).get("ingest", {})
    stages = ingest.get("stage_seconds", {})
    other = sum(v for k, v in stages.items() if k not in ("embed_passages_total", "embedding_model"))
    pure = ingest.get("pure_embedding_s") or stages.get("embedding_model")
    return float(pure + other) if pure else None


def _cached_workspace() -> Path:
    candidates = sorted(CACHE_DIR.glob("all13-*"), key=lambda p: p.stat().st_mtime)
    if not candidates:
        sys.exit("no cached workspace under bench/.cache/all13-*: run python -m bench.retrieval first")
    target = Path(tempfile.mkdtemp(prefix="graph-bench-")) / "data"
    shutil.copytree(candidates[-1], target)
    return target


def _machine() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    return {
        "platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
        "loadavg": [round(x, 2) for x in os.getloadavg()], "git_commit": commit.stdout.strip(),
    }


def main() -> None:
    """Run the benchmark and print the per-document table and top-30 lists."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--workspace")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    data_dir = args.data_dir or _cached_workspace()
    app = _app(data_dir)
    workspace = args.workspace or app.workspaces.list()[0].name
    stats = {"date": now_iso(), "machine": _machine(), **extraction_stats(app, workspace)}
    for row in stats["documents"]:
        print(f"\n{row['document']}: {row['entities']} entities, {row['relations']} relations, "
              f"{row['communities']} communities, {row['graph_s']} s ({row['graph_steps_s']})")
        print("  " + "; ".join(f"{t['name']} [{t['type']}] {t['degree']}" for t in row["top"]))
    print(f"\ngraph stage {stats['graph_s']} s over {len(stats['documents'])} documents; reference ingestion "
          f"{stats['ingestion_reference_s']} s; share {stats['share_of_ingestion']}")
    if args.out:
        args.out.write_text(json.dumps(stats, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
