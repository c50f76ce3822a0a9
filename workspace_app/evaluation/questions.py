"""Question files: one JSON object a line, each a question with its gold, read into `EvalQuestion`s.

A line holds `question` (required) and optionally `id` (default: the line number), `lang` (default: detected),
`kind`, `split`, `answerable` (default: false when `kind` is "unanswerable", else true) and the gold: `doc` (a
document name) with `pages` (1-based; absent or empty: any page), or `docs` (names) with `pages` as one page list
per document, and/or `answers` (strings a right passage contains, compared after NFKC, casefolding and whitespace
removal). `kind: "cross_doc"` rows are right when every document is cited on a gold page. The project's dev files
(`doc` given as a list for cross-document rows, `pages_by_doc`, `quote`, `answer` and other fields) read as they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workspace_app.errors import QuestionFileError
from workspace_app.evaluation.gold import Gold, GoldSpan, normalized
from workspace_app.text.language import detect_language

CROSS_DOC = "cross_doc"
UNANSWERABLE = "unanswerable"


class _Malformed(ValueError):
    """Why one line cannot be used (load_questions adds the file and line)."""


@dataclass(frozen=True)
class EvalQuestion:
    """One question of a question file, with its gold and the line it came from."""

    id: str
    question: str
    lang: str
    answerable: bool
    gold: Gold
    kind: str | None = None
    split: str | None = None
    line: int = 0

    @property
    def cross_doc(self) -> bool:
        """Whether the question is right only when every gold document is cited."""
        return self.kind == CROSS_DOC


def load_questions(path: Path | str) -> list[EvalQuestion]:
    """Read a JSONL question file; QuestionFileError naming the line when one is malformed."""
    path = Path(path)
    return parse_questions(_read(path), path.name)


def parse_questions(text: str | bytes, name: str) -> list[EvalQuestion]:
    """The questions of a question file's content (an upload's bytes, say); `name` is the file named in errors.
    QuestionFileError naming the line when one is malformed."""
    if isinstance(text, bytes):
        text = _decoded(text, name)
    questions: list[EvalQuestion] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            question = parse_question(_json_object(line), number)
        except _Malformed as exc:
            raise QuestionFileError(f"{name}, line {number}: {exc}") from None
        if question.id in first_line:
            raise QuestionFileError(
                f"{name}, line {number}: id {question.id!r} is already used on line {first_line[question.id]}; "
                "give each question its own id."
            )
        first_line[question.id] = number
        questions.append(question)
    if not questions:
        raise QuestionFileError(f"{name} has no questions: write one JSON object a line, e.g. "
                                '{"question": "...", "doc": "guideline.pdf", "pages": [3]}.')
    return questions


def parse_question(row: dict[str, Any], number: int) -> EvalQuestion:
    """One line's object as a question (`number` is its default id); _Malformed says what is wrong."""
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise _Malformed('"question" is missing or empty; every line needs the question\'s text.')
    kind = _optional_text(row, "kind")
    answerable = row.get("answerable", kind != UNANSWERABLE)
    if not isinstance(answerable, bool):
        raise _Malformed(f'"answerable" must be true or false, not {_shown(answerable)}.')
    gold = Gold(_gold_spans(row), _answers(row))
    if answerable and gold.empty:
        raise _Malformed('an answerable question needs gold: "doc" (with "pages"), "docs" or "answers"; '
                         'or mark it "answerable": false.')
    if answerable and kind == CROSS_DOC and not gold.spans:
        raise _Malformed('a "cross_doc" question needs its documents in "docs".')
    return EvalQuestion(
        id=_question_id(row.get("id", number)), question=question.strip(),
        lang=_optional_text(row, "lang") or detect_language(question), answerable=answerable, gold=gold,
        kind=kind, split=_optional_text(row, "split"), line=number,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise QuestionFileError(f"{path} does not exist. Give the path of a .jsonl question file.") from None
    except UnicodeDecodeError:
        raise QuestionFileError(f"{path} is not UTF-8 text. Save the question file as UTF-8.") from None
    except OSError as exc:
        raise QuestionFileError(f"{path} cannot be read ({exc.strerror}).") from None


def _decoded(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QuestionFileError(f"{name} is not UTF-8 text. Save the question file as UTF-8.") from None


def _json_object(line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _Malformed(f"not valid JSON ({exc.msg} at column {exc.colno}).") from None
    if not isinstance(row, dict):
        raise _Malformed(f"expected a JSON object {{...}}, found {_shown(row)}.")
    return row


def _question_id(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise _Malformed(f'"id" must be text or a number, not {_shown(value)}.')
    return str(value)


def _optional_text(row: dict[str, Any], key: str) -> str | None:
    value = row.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Malformed(f'"{key}" must be text, not {_shown(value)}.')
    return value


def _gold_spans(row: dict[str, Any]) -> tuple[GoldSpan, ...]:
    docs = row.get("docs")
    if docs is None and isinstance(row.get("doc"), list):  # the dev files' cross-document rows
        docs = row["doc"]
    if docs is not None:
        return _spans_of_docs(docs, row.get("pages"))
    doc = row.get("doc")
    if doc is None or doc == "":
        if row.get("pages"):
            raise _Malformed('"pages" are given without the "doc" they belong to.')
        return ()
    if not isinstance(doc, str):
        raise _Malformed(f'"doc" must be a document name, not {_shown(doc)}.')
    return (GoldSpan(doc, _pages(row.get("pages"), "pages")),)


def _spans_of_docs(docs: object, pages: object) -> tuple[GoldSpan, ...]:
    if not isinstance(docs, list) or not docs or not all(isinstance(d, str) and d for d in docs):
        raise _Malformed(f'"docs" must be a list of document names, not {_shown(docs)}.')
    if pages is None:
        return tuple(GoldSpan(doc) for doc in docs)
    if not isinstance(pages, list) or len(pages) != len(docs) or not all(isinstance(p, list) for p in pages):
        raise _Malformed(f'with "docs", "pages" must hold one page list per document ({len(docs)} lists, e.g. '
                         f"[[3], [7, 8]]), not {_shown(pages)}.")
    return tuple(GoldSpan(doc, _pages(p, f"pages[{i}]")) for i, (doc, p) in enumerate(zip(docs, pages, strict=True)))


def _pages(value: object, key: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in value):
        raise _Malformed(f'"{key}" must be a list of page numbers counted from 1, e.g. [3, 4], not {_shown(value)}.')
    return tuple(value)


def _answers(row: dict[str, Any]) -> tuple[str, ...]:
    value = row.get("answers")
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and normalized(a) for a in value):
        raise _Malformed(f'"answers" must be a list of non-empty strings, e.g. ["150 min"], not {_shown(value)}.')
    return tuple(value)


def _shown(value: object) -> str:
    """A value as the message shows it: JSON, cut short."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
