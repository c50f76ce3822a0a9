"""An evaluation end to end: two text sources really ingested, a question file with gold by document and by answer
string, a wrong gold and an unanswerable question, run through `Evaluator` and through `workspace-app eval`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from workspace_app.adapters.cli import main
from workspace_app.adapters.process import OFFLINE_ENVIRON
from workspace_app.app import App
from workspace_app.errors import WorkspaceNotFoundError
from workspace_app.evaluation.metrics import Figure, summarize
from workspace_app.evaluation.questions import load_questions
from workspace_app.evaluation.runner import Evaluator

TILT = """# Tilt-table testing

There is general consensus that a tilt-table angle of 70 degrees for 30 to 40 minutes gives the best diagnostic
yield in suspected vasovagal syncope.

Tilt-table testing can be useful to distinguish convulsive syncope from epilepsy in selected patients.

Carotid sinus hypersensitivity is present when a pause of 3 seconds or more occurs upon massage of the carotid sinus.
"""
SODIUM = """# Lifestyle advice

Adults who would benefit from blood pressure lowering should consume no more than 2,400 mg of sodium per day.

To lower LDL cholesterol, adults should aim for a dietary pattern that achieves 5% to 6% of calories from
saturated fat.

Adults should engage in aerobic physical activity three to four sessions a week, lasting 40 minutes per session.
"""
TILT_QUESTION = "What tilt-table angle and duration give the best diagnostic yield in suspected vasovagal syncope?"
QUESTIONS = [
    {"id": "tilt", "question": TILT_QUESTION, "doc": "tilt.txt", "pages": [1], "split": "a"},
    {"id": "sodium", "question": "How much sodium per day should adults who need blood pressure lowering consume?",
     "answers": ["2,400 MG of sodium"], "split": "b"},
    {"id": "wrong-gold", "question": TILT_QUESTION, "doc": "sodium.txt", "split": "a"},
    {"id": "nope", "question": "What ivabradine dose is recommended for postural orthostatic tachycardia syndrome?",
     "kind": "unanswerable"},
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any]) -> tuple[App, Path]:
    """A workspace `W` with tilt.txt and sodium.txt, and the question file."""
    folder = tmp_path_factory.mktemp("evaluation")
    app = build(folder / "data")
    app.workspaces.create("W")
    for name, text in {"tilt.txt": TILT, "sodium.txt": SODIUM}.items():
        (folder / name).write_text(text, encoding="utf-8")
        assert app.documents.ingest("W", folder / name, name).status == "ready"
    questions = folder / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return app, questions


def test_the_evaluator_judges_citations_refusals_and_search(workspace: tuple[App, Path]) -> None:
    app, path = workspace
    seen: list[tuple[int, int]] = []
    results = {r.id: r for r in Evaluator(app).run("W", load_questions(path), progress=lambda *p: seen.append(p))}
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    tilt, sodium, wrong, nope = results["tilt"], results["sodium"], results["wrong-gold"], results["nope"]
    assert not tilt.refused and tilt.first_right and tilt.any_right and tilt.search_hit1 and tilt.search_hit5
    assert tilt.first_document == "tilt.txt" and tilt.first_pages == (1, 1) and tilt.right
    assert not sodium.refused and sodium.first_right and sodium.first_document == "sodium.txt"
    assert sodium.search_hit1, "the search's top hit holds the answer string"
    assert wrong.first_document == "tilt.txt" and wrong.first_right is False and wrong.search_hit1 is False
    assert nope.refused and nope.right and nope.first_right is None and nope.search_hit1 is None
    assert all(r.elapsed_ms > 0 and r.lang == "en" for r in results.values())
    summary = summarize(list(results.values()), by_split=True)
    assert summary.overall.figures["first_citation"] == Figure(2, 3)
    assert summary.overall.figures["refusal_recall"] == Figure(1, 1)
    assert summary.overall.figures["false_refusals"] == Figure(0, 3)
    assert summary.by_split["a"].figures["first_citation"] == Figure(1, 2)


def test_documents_limit_the_answers_and_an_unknown_workspace_fails_first(workspace: tuple[App, Path]) -> None:
    app, path = workspace
    evaluator = Evaluator(app)
    tilt = load_questions(path)[0]
    only_sodium = evaluator.evaluate("W", tilt, documents=["sodium.txt"])
    assert only_sodium.first_document in (None, "sodium.txt") and not only_sodium.first_right
    assert evaluator.unknown_documents("W", load_questions(path)) == []
    with pytest.raises(WorkspaceNotFoundError):
        next(evaluator.run("Nowhere", [tilt]))


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`main` sets the process's umask and telemetry variables (as every entry point does): undo both after."""
    for name in OFFLINE_ENVIRON:
        monkeypatch.setenv(name, os.environ.get(name, ""))
    umask = os.umask(0o022)
    os.umask(umask)
    yield
    os.umask(umask)


@pytest.mark.usefixtures("in_process")
def test_the_cli_prints_the_figures_and_writes_the_rows(
    workspace: tuple[App, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    app, path = workspace
    data = app.settings.storage.data_dir
    rows = path.parent / "rows.jsonl"
    assert main(["--data-dir", str(data), "eval", str(path), "--workspace", "W", "--rows", str(rows), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["overall"]["first_citation"] == {"value": 0.6667, "right": 2, "of": 3}
    assert figures["overall"]["refusal_recall"]["right"] == 1 and figures["by_lang"]["en"]["questions"] == 4
    assert sorted(figures["by_split"]) == ["a", "b"]
    lines = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["tilt", "sodium", "wrong-gold", "nope"]
    assert lines[0]["first_right"] is True and lines[0]["first_document"] == "tilt.txt" and lines[3]["refused"] is True

    assert main(["--data-dir", str(data), "eval", str(path), "-w", "W", "--mode", "naive", "--documents", "tilt.txt"]) == 0
    table = capsys.readouterr().out
    assert "first citation right" in table and "split=a" in table
    refused = next(line for line in table.splitlines() if line.startswith("unanswerable refused")).split()
    assert refused[2:4] == ["1.000", "(1/1)"] and refused[-1] == "-", "all: 1 of 1; the row has no split"


@pytest.mark.usefixtures("in_process")
def test_the_cli_names_a_bad_line_and_an_unknown_gold_document(
    workspace: tuple[App, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    app, path = workspace
    data = app.settings.storage.data_dir
    bad = path.parent / "bad.jsonl"
    bad.write_text(json.dumps(QUESTIONS[0]) + '\n{"question": "x", "doc": "tilt.txt", "pages": "1"}\n', encoding="utf-8")
    assert main(["--data-dir", str(data), "eval", str(bad), "--workspace", "W"]) == 2
    assert 'error: bad.jsonl, line 2: "pages" must be a list of page numbers' in capsys.readouterr().err
    typo = path.parent / "typo.jsonl"
    typo.write_text(json.dumps({**QUESTIONS[0], "doc": "tlit.txt"}) + "\n", encoding="utf-8")
    assert main(["--data-dir", str(data), "eval", str(typo), "--workspace", "W", "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning: the workspace has no document 'tlit.txt'" in captured.err
    assert json.loads(captured.out)["overall"]["first_citation"]["right"] == 0
