"""Question files: defaults, the three gold forms, the project's dev files as they are, and one clear message per
malformed line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workspace_app.errors import QuestionFileError, WorkspaceError
from workspace_app.evaluation.gold import GoldSpan
from workspace_app.evaluation.questions import load_questions

EVAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "eval"
GOOD = {"question": "What tilt angle is used?", "doc": "tilt.txt"}


def write_lines(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_defaults_and_the_three_forms_of_gold(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        json.dumps({"question": "  What tilt angle is used?  ", "doc": "tilt.txt", "pages": [2, 3]}),
        "",
        json.dumps({"id": 7, "question": "替奈普酶应如何按体重给药？", "answers": ["0.25 mg/kg"], "split": "ward"}),
        json.dumps({"id": "x", "question": "Both?", "kind": "cross_doc", "docs": ["a.pdf", "b.pdf"], "pages": [[1], [4, 5]]}),
        json.dumps({"id": "u", "question": "Which dose of ivabradine?", "kind": "unanswerable", "lang": "en"}),
        json.dumps({"id": "v", "question": "Anything?", "answerable": False, "doc": ""}),
        json.dumps({"id": "w", "question": "Where is it?", "docs": ["a.pdf"], "answers": ["x"], "answerable": True}),
    )
    first, second, cross, unanswerable, declared, both = load_questions(path)
    assert (first.id, first.question, first.lang, first.answerable, first.line) == ("1", "What tilt angle is used?", "en", True, 1)
    assert first.gold.spans == (GoldSpan("tilt.txt", (2, 3)),) and first.gold.answers == ()
    assert (second.id, second.lang, second.split, second.line) == ("7", "zh", "ward", 3)
    assert second.gold.spans == () and second.gold.answers == ("0.25 mg/kg",)
    assert cross.cross_doc and cross.gold.spans == (GoldSpan("a.pdf", (1,)), GoldSpan("b.pdf", (4, 5)))
    assert not unanswerable.answerable and unanswerable.gold.empty and not unanswerable.cross_doc
    assert not declared.answerable
    assert both.gold.spans == (GoldSpan("a.pdf"),) and both.gold.answers == ("x",)


@pytest.mark.parametrize(
    ("name", "answerable", "cross"), [
        ("guidelines_dev.jsonl", 40, 0), ("guidelines_dev_more.jsonl", 45, 5), ("guidelines_dev_xling.jsonl", 35, 0),
    ],
)
def test_the_dev_files_read_unchanged(name: str, answerable: int, cross: int) -> None:
    if not (EVAL / name).is_file():
        pytest.skip(f"{name} is not in ../shared/eval")
    rows = [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = load_questions(EVAL / name)
    assert [q.id for q in questions] == [r["id"] for r in rows]
    assert [q.lang for q in questions] == [r["lang"] for r in rows]
    assert sum(q.answerable for q in questions) == answerable and sum(q.cross_doc for q in questions) == cross
    for question, row in zip(questions, rows, strict=True):
        if row["kind"] == "cross_doc":
            assert question.gold.spans == tuple(GoldSpan(d, tuple(row["pages_by_doc"][d])) for d in row["docs"])
        elif question.answerable:
            assert question.gold.spans == (GoldSpan(row["doc"], tuple(row["pages"])),)


@pytest.mark.parametrize(
    ("line", "message"), [
        ('{"question": "x", "doc": "a.pdf"', "not valid JSON"),
        ('["What tilt angle?"]', "expected a JSON object"),
        ('{"doc": "a.pdf", "pages": [1]}', '"question" is missing or empty'),
        ('{"question": "   ", "doc": "a.pdf"}', '"question" is missing or empty'),
        ('{"question": 5, "doc": "a.pdf"}', '"question" is missing or empty'),
        ('{"question": "x", "doc": "a.pdf", "answerable": "yes"}', '"answerable" must be true or false, not "yes"'),
        ('{"question": "x", "doc": "a.pdf", "pages": "8"}', '"pages" must be a list of page numbers counted from 1'),
        ('{"question": "x", "doc": "a.pdf", "pages": [0]}', '"pages" must be a list of page numbers'),
        ('{"question": "x", "doc": "a.pdf", "pages": [true]}', '"pages" must be a list of page numbers'),
        ('{"question": "x", "doc": 3}', '"doc" must be a document name, not 3'),
        ('{"question": "x", "pages": [3]}', '"pages" are given without the "doc"'),
        ('{"question": "x", "docs": "a.pdf"}', '"docs" must be a list of document names'),
        ('{"question": "x", "docs": ["a.pdf", "b.pdf"], "pages": [[1]]}', "one page list per document (2 lists"),
        ('{"question": "x", "docs": ["a.pdf", "b.pdf"], "pages": [1, 2]}', "one page list per document"),
        ('{"question": "x", "docs": ["a.pdf", "b.pdf"], "pages": [[1], ["2"]]}', '"pages[1]" must be a list'),
        ('{"question": "x", "answers": "150 min"}', '"answers" must be a list of non-empty strings'),
        ('{"question": "x", "answers": [" "]}', '"answers" must be a list of non-empty strings'),
        ('{"question": "x", "doc": "a.pdf", "id": true}', '"id" must be text or a number'),
        ('{"question": "x", "doc": "a.pdf", "lang": 5}', '"lang" must be text, not 5'),
        ('{"question": "x", "doc": "a.pdf", "split": ["a"]}', '"split" must be text'),
        ('{"question": "x"}', "an answerable question needs gold"),
        ('{"question": "x", "kind": "cross_doc", "answers": ["y"]}', 'a "cross_doc" question needs its documents'),
        ('{"question": "x", "doc": "a.pdf", "id": "1"}', "id '1' is already used on line 1"),
    ],
)
def test_a_malformed_line_is_named_with_what_is_wrong(tmp_path: Path, line: str, message: str) -> None:
    path = write_lines(tmp_path, json.dumps(GOOD), line)
    with pytest.raises(QuestionFileError) as raised:
        load_questions(path)
    assert raised.value.user_message.startswith("questions.jsonl, line 2: ")
    assert message in raised.value.user_message
    assert isinstance(raised.value, WorkspaceError) and raised.value.status == 422


def test_a_missing_empty_or_binary_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="does not exist"):
        load_questions(tmp_path / "absent.jsonl")
    with pytest.raises(QuestionFileError, match="has no questions"):
        load_questions(write_lines(tmp_path, "", "   "))
    (tmp_path / "latin1.jsonl").write_bytes('{"question": "caf\u00e9?"}'.encode("latin-1"))
    with pytest.raises(QuestionFileError, match="is not UTF-8"):
        load_questions(tmp_path / "latin1.jsonl")


def test_a_line_separator_inside_a_string_is_not_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "first\u2028part?", "doc": "a.pdf"}\n', encoding="utf-8")
    assert load_questions(path)[0].question == "first\u2028part?"
