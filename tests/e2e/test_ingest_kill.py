"""Ingestion killed with SIGKILL mid-way and run again ends exactly like an undisturbed ingestion."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from keyword_index import keyword_rows

pytestmark = pytest.mark.slow

NAME = "mosca-2011-women-cvd.pdf"  # 20 pages


def document_state(data_dir: Path) -> tuple[str, str, float] | None:
    """(status, stage, progress) of the only document, read straight from the catalog file."""
    catalog = data_dir / "catalog.sqlite"
    if not catalog.exists():
        return None
    try:
        with sqlite3.connect(catalog, timeout=1) as db:
            row = db.execute("SELECT status, stage, progress FROM documents").fetchone()
    except sqlite3.OperationalError:  # the tables are being created
        return None
    return (row[0], row[1], float(row[2])) if row else None


def wait_for(condition: Callable[[], bool], timeout: float, process: Any, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            pytest.fail(f"ingest ended (exit {process.returncode}) before it could be killed: {log.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"ingest did not reach the embedding stage in {timeout} s")
        time.sleep(0.05)


def test_killed_ingest_rerun_matches_an_undisturbed_ingest(
    tmp_path: Path, guidelines: Path, cli: Callable[..., Any], cli_popen: Callable[..., Any],
    build: Callable[..., Any], embedding_cache_file: Path,
) -> None:
    data_dir = tmp_path / "killed" / "data"
    assert cli(data_dir, "workspace", "create", "W", timeout=120).returncode == 0

    # Small embedding batches make the embedding stage report progress often enough to be caught.
    process = cli_popen(data_dir, "ingest", "-w", "W", guidelines / NAME, WORKSPACE_EMBEDDING__BATCH_SIZE="4")
    try:
        def embedding_under_way() -> bool:
            state = document_state(data_dir)
            return state is not None and state[0] == "running" and state[1] == "embedding" and state[2] > 0.3

        wait_for(embedding_under_way, timeout=240, process=process, log=data_dir.parent / "cli-stderr.log")
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        process.stdout.close()
    assert process.returncode == -signal.SIGKILL
    status, stage, _ = document_state(data_dir) or ("?", "?", 0.0)
    assert (status, stage) == ("running", "embedding")  # left behind mid-way

    undisturbed = build(tmp_path / "undisturbed" / "data")
    undisturbed.workspaces.create("W")
    expected = undisturbed.documents.ingest("W", guidelines / NAME)
    assert expected.status == "ready"
    # The killed run cached no vectors (they are cached when all are done). To keep the suite fast, give the
    # re-run the vectors the undisturbed ingestion just cached, in the app's own cache format: the re-run then
    # parses, chunks and rewrites the catalog and Chroma as usual but skips the model's encoding time.
    with closing(sqlite3.connect(data_dir / "embeddings.sqlite")) as cache:
        cache.execute("ATTACH DATABASE ? AS session", (str(embedding_cache_file),))
        cache.execute("INSERT OR IGNORE INTO embeddings SELECT * FROM session.embeddings")
        cache.commit()
        cache.execute("DETACH DATABASE session")

    rerun = cli(data_dir, "ingest", "-w", "W", guidelines / NAME, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    report = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert report["status"] == "ready" and report["document"] == NAME

    listed = cli(data_dir, "documents", "-w", "W", "--json", timeout=120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    documents = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    assert [(d["name"], d["status"], d["chunks"]) for d in documents] == [(NAME, "ready", report["chunks"])]

    expected_ids = undisturbed.catalog.document_chunk_ids(expected.document_id)
    expected_found = undisturbed.catalog.get_chunks(expected_ids)
    expected_chunks = [expected_found[chunk_id] for chunk_id in expected_ids]

    resumed = build(data_dir)
    document = resumed.documents.get("W", NAME)
    workspace = resumed.workspaces.get("W")
    ids = resumed.catalog.document_chunk_ids(document.id)
    found = resumed.catalog.get_chunks(ids)
    chunks = [found[chunk_id] for chunk_id in ids]
    assert document.status == "ready" and document.progress == 1.0 and document.error is None
    assert document.chunks == len(ids) == expected.chunks == report["chunks"]
    assert resumed.vectors.count(workspace.id, document.id) == expected.chunks
    assert resumed.vectors.count(workspace.id) == expected.chunks
    assert undisturbed.vectors.count(undisturbed.workspaces.get("W").id) == expected.chunks
    assert len(set(ids)) == len(ids)
    with sqlite3.connect(data_dir / "catalog.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM chunks").fetchone() == (len(ids), len(ids))
        assert keyword_rows(db) == len(ids)
    assert [(c.text, c.section, c.page_start, c.page_end) for c in chunks] == [
        (c.text, c.section, c.page_start, c.page_end) for c in expected_chunks
    ]
    assert [c.ordinal for c in chunks] == list(range(len(ids)))
    hits = resumed.search.search("W", "aspirin for women at high risk", top_k=5)
    want = undisturbed.search.search("W", "aspirin for women at high risk", top_k=5)
    assert [hit.chunk.text for hit in hits.hits] == [hit.chunk.text for hit in want.hits]
