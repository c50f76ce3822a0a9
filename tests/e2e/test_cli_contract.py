"""The CLI's contract on both catalogs: what a user does through `workspace-app`, in real processes, on a SQLite
catalog (catalog.sqlite in the data dir) and on a PostgreSQL database (`WORKSPACE_CATALOG__URL`, one database of the
session's throwaway cluster for the module; marked `postgres`).

One data dir per catalog, walked through in order as a user would: create a workspace and ingest a note and a PDF
(waiting), ask (the JSON shape of the issue, several questions from a file, refusals, modes, errors), keyword
search, list, queue a file for a worker and let it finish, keep a studio output as a note, export the graph,
evaluate, remove a document, rename and delete the workspace. Each step starts its own `workspace-app` process, as
a user's does (the model loads in each that needs it: search is keyword-only to spare one load).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from catalogs import CatalogStore

pytestmark = pytest.mark.slow

KEYS = [
    "question", "answer", "refused", "grounded", "confidence", "support", "support_note", "language", "citations", "mode",
    "entities", "figures", "timings_ms",
]
CITATION_KEYS = [
    "n", "chunk_id", "document", "document_id", "page_start", "page_end", "section", "quote", "rects", "score",
    "recommendation_class", "evidence_level", "level", "patient_id", "event_id",
]
TILT = (
    "# Tilt-table testing\n\nThere is general consensus that a tilt-table angle of 70 degrees for 30 to 40 "
    "minutes gives the best diagnostic yield in suspected vasovagal syncope.\n"
)
SODIUM = (
    "# Lifestyle advice\n\nAdults who would benefit from blood pressure lowering should consume no more than "
    "2,400 mg of sodium per day.\n"
)
PDF = ("mosca-2011-women-cvd.pdf", 10, 11)
EVAL_QUESTIONS = [
    {"id": "tilt", "question": "What tilt angle gives the best yield on tilt-table testing?", "doc": "tilt.md",
     "pages": [1]},
    {"id": "nope", "question": "What ivabradine dose is recommended for postural orthostatic tachycardia syndrome?",
     "kind": "unanswerable"},
]


@dataclass
class World:
    """The module's data dir on one catalog, and `workspace-app` on it."""

    folder: Path
    data: Path
    environ: dict[str, str]
    pdf: Path
    run: Callable[..., subprocess.CompletedProcess[str]]

    @property
    def catalog(self) -> CatalogStore:
        return CatalogStore.of_process(self.data, self.environ)

    def json_lines(self, *args: str | Path) -> list[dict[str, Any]]:
        done = self.run(*args)
        assert done.returncode == 0, done.stderr[-3000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def world(
    module_catalog_environ: dict[str, str], tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any],
    excerpt: Callable[..., Path],
) -> World:
    """Workspace `W` with tilt.md and two pages of a guideline PDF, ingested by `workspace-app ingest`."""
    environ = module_catalog_environ
    folder = tmp_path_factory.mktemp("cli-" + ("postgres" if environ else "sqlite"))
    data = folder / "data"

    def run(*args: str | Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
        return cli(data, *args, timeout=timeout, **environ, **env)

    world = World(folder, data, environ, excerpt(*PDF), run)
    created = world.json_lines("workspace", "create", "W")
    assert [w["name"] for w in created] == ["W"]
    (folder / "tilt.md").write_text(TILT, encoding="utf-8")
    reports = world.json_lines("ingest", "--workspace", "W", folder / "tilt.md", world.pdf)
    assert [(r["document"], r["status"]) for r in reports] == [("tilt.md", "ready"), (world.pdf.name, "ready")]
    assert (data / "catalog.sqlite").exists() == (not environ), "the catalog is where the environment says"
    return world


def test_ask_prints_answers_with_citations_as_json(world: World) -> None:
    questions = world.folder / "questions.txt"
    questions.write_text("What tilt angle gives the best yield on tilt-table testing?\n替奈普酶应如何按体重给药？\n", encoding="utf-8")
    first, second = world.json_lines(
        "ask", "--workspace", "W", "--mode", "naive", "--documents", "tilt.md", "--queries", questions, "--json"
    )
    assert list(first) == KEYS and list(first["citations"][0]) == CITATION_KEYS
    assert first["grounded"] and not first["refused"] and first["language"] == "en"
    assert first["answer"].endswith("syncope [1].") and "70 degrees" in first["citations"][0]["quote"]
    assert first["citations"][0]["document"] == "tilt.md" and first["citations"][0]["page_start"] == 1
    assert second["refused"] and second["language"] == "zh" and second["answer"] == "根据提供的资料，我无法回答这个问题。"
    hybrid = ("ask", "--workspace", "W", "--mode", "hybrid", "--json", "What tilt angle gives the best yield?")
    [answer] = world.json_lines(*hybrid)
    assert answer["mode"] == "hybrid" and answer["citations"][0]["document"] == "tilt.md"
    unknown = world.run("ask", "--workspace", "W", "--mode", "deep", "--json", "What tilt angle?")
    assert unknown.returncode == 2 and "invalid choice: 'deep'" in unknown.stderr


def test_keyword_search_prints_ranked_hits(world: World) -> None:
    search = ("search", "-w", "W", "--json", "--method", "sparse", "--top-k", "3", "aspirin for women")
    [result] = world.json_lines(*search)
    assert result["query"] == "aspirin for women"
    hits = result["results"]
    assert [h["rank"] for h in hits] == [1, 2, 3] and {h["document"] for h in hits} == {world.pdf.name}
    assert all(h["text"].strip() and h["rects"] and h["ranks"]["sparse"] == h["rank"] for h in hits), hits
    assert all("aspirin" in h["text"].lower() for h in hits[:1])


def test_a_file_queued_without_waiting_is_ingested_by_a_worker(
    world: World, cli_popen: Callable[..., subprocess.Popen[str]]
) -> None:
    (world.folder / "sodium.md").write_text(SODIUM, encoding="utf-8")
    [queued] = world.json_lines("ingest", "-w", "W", "--no-wait", world.folder / "sodium.md")
    assert queued["status"] == "queued"
    worker = cli_popen(world.data, "worker", WORKSPACE_QUEUE__POLL_MAX_DELAY_S="0.1", **world.environ)
    try:
        status = f"SELECT status FROM documents WHERE id = '{queued['document_id']}'"
        deadline = time.monotonic() + 240
        while world.catalog.scalar(status) not in ("ready", "failed"):
            assert worker.poll() is None, (world.folder / "cli-stderr.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "timed out waiting for the worker"
            time.sleep(0.2)
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(60) == 0
    documents = {d["name"]: d for d in world.json_lines("documents", "-w", "W", "--json")}
    assert sorted(documents) == sorted(["tilt.md", world.pdf.name, "sodium.md"])
    assert all(d["status"] == "ready" and d["chunks"] > 0 for d in documents.values()), documents
    assert world.catalog.keyword_rows(queued["document_id"]) == documents["sodium.md"]["chunks"]
    [listed] = world.json_lines("workspace", "list", "--json")
    assert (listed["name"], listed["documents"]) == ("W", 3)


def test_a_studio_output_is_kept_as_a_note_and_the_graph_exported(world: World) -> None:
    [briefing] = world.json_lines("studio", "briefing", "-w", "W", "--json", "--save")
    assert briefing["kind"] == "briefing" and briefing["note_id"] and briefing["citations"]
    assert briefing["markdown"].startswith("# Briefing: W\n") and "(Class I, LOE" in briefing["markdown"]
    assert world.catalog.scalar(f"SELECT title FROM notes WHERE id = '{briefing['note_id']}'") == briefing["title"]
    out = world.folder / "graph.graphml"
    [exported] = world.json_lines("graph", "export", "-w", "W", "--out", out)
    assert exported["workspace"] == "W" and exported["bytes"] == out.stat().st_size
    graph = nx.read_graphml(out)
    names = {d.get("name") for _, d in graph.nodes(data=True)}
    assert {"tilt.md", world.pdf.name} <= names and graph.number_of_edges() > 0, sorted(map(str, names))[:40]


def test_eval_prints_the_figures_and_writes_the_rows(world: World) -> None:
    questions = world.folder / "eval.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in EVAL_QUESTIONS), encoding="utf-8")
    rows = world.folder / "rows.jsonl"
    [figures] = world.json_lines("eval", questions, "-w", "W", "--mode", "naive", "--rows", rows, "--json")
    assert figures["overall"]["first_citation"] == {"value": 1.0, "right": 1, "of": 1}
    assert figures["overall"]["refusal_recall"]["right"] == 1
    assert [json.loads(line)["id"] for line in rows.read_text(encoding="utf-8").splitlines()] == ["tilt", "nope"]


def test_remove_rename_and_delete_leave_nothing_behind(world: World) -> None:
    sodium = world.catalog.scalar("SELECT id FROM documents WHERE name = 'sodium.md'")
    [removed] = world.json_lines("remove", "-w", "W", "sodium.md")
    assert removed == {"removed": "sodium.md", "document_id": sodium}
    assert world.catalog.scalar(f"SELECT COUNT(*) FROM chunks WHERE document_id = '{sodium}'") == 0
    assert world.catalog.keyword_rows(sodium) == 0

    [renamed] = world.json_lines("workspace", "rename", "W", "Syncope")
    assert (renamed["name"], renamed["documents"]) == ("Syncope", 2)
    assert world.json_lines("workspace", "delete", "Syncope") == [{"deleted": "Syncope"}]
    for table in ("workspaces", "documents", "chunks", "notes", "graph_entities", "graph_mentions"):
        assert world.catalog.scalar(f"SELECT COUNT(*) FROM {table}") == 0, table
    assert world.catalog.keyword_rows() == 0
