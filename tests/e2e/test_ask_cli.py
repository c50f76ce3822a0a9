"""`workspace-app ask`: the JSON shape of the issue, several questions from a file, refusals, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

KEYS = [
    "question", "answer", "refused", "grounded", "confidence", "support", "support_note", "language", "citations", "mode",
    "entities", "figures", "timings_ms",
]
CITATION_KEYS = [
    "n", "chunk_id", "document", "document_id", "page_start", "page_end", "section", "quote", "rects", "score",
    "recommendation_class", "evidence_level", "level", "patient_id", "event_id",
]


def test_ask_prints_answers_with_citations_as_json(tmp_path: Path, cli: Callable[..., Any]) -> None:
    data = tmp_path / "data"
    source = tmp_path / "tilt.md"
    source.write_text(
        "# Tilt-table testing\n\nThere is general consensus that a tilt-table angle of 70 degrees for 30 to 40 "
        "minutes gives the best diagnostic yield in suspected vasovagal syncope.\n", encoding="utf-8",
    )
    assert cli(data, "workspace", "create", "W").returncode == 0
    assert cli(data, "ingest", "--workspace", "W", source).returncode == 0
    questions = tmp_path / "questions.txt"
    questions.write_text("What tilt angle gives the best yield on tilt-table testing?\n替奈普酶应如何按体重给药？\n", encoding="utf-8")
    done = cli(data, "ask", "--workspace", "W", "--mode", "naive", "--documents", "tilt.md", "--queries", questions, "--json")
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert list(first) == KEYS and list(first["citations"][0]) == CITATION_KEYS
    assert first["grounded"] and not first["refused"] and first["language"] == "en"
    assert first["answer"].endswith("syncope [1].") and "70 degrees" in first["citations"][0]["quote"]
    assert first["citations"][0]["document"] == "tilt.md" and first["citations"][0]["page_start"] == 1
    assert second["refused"] and second["language"] == "zh" and second["answer"] == "根据提供的资料，我无法回答这个问题。"
    hybrid = cli(data, "ask", "--workspace", "W", "--mode", "hybrid", "--json", "What tilt angle gives the best yield?")
    assert hybrid.returncode == 0, hybrid.stderr
    answer = json.loads(hybrid.stdout)
    assert answer["mode"] == "hybrid" and answer["citations"][0]["document"] == "tilt.md"
    unknown = cli(data, "ask", "--workspace", "W", "--mode", "deep", "--json", "What tilt angle?")
    assert unknown.returncode == 2 and "invalid choice: 'deep'" in unknown.stderr
