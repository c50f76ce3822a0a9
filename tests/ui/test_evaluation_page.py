"""The Evaluation page through Streamlit's AppTest on a real workspace (two .txt sources really ingested): a
question file uploaded and run gives the figures (overall, by language, by split, each with its counts) and one row
per question with their JSONL download; a gold source the workspace lacks is warned about (escaped); a malformed
file shows its message and nothing breaks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"
SOURCES = {
    "tilt.txt": "# Tilt-table testing\n\nA tilt-table angle of 70 degrees for 30 to 40 minutes gives the best "
                "diagnostic yield in suspected vasovagal syncope.\n",
    "sodium.txt": "# Lifestyle advice\n\nAdults who would benefit from blood pressure lowering should consume no "
                  "more than 2,400 mg of sodium per day.\n",
}
MISSING = "<b>missing</b> *guide*.pdf"
QUESTIONS = [
    {"id": "tilt", "question": "What tilt-table angle gives the best diagnostic yield in vasovagal syncope?",
     "doc": "tilt.txt", "pages": [1], "split": "a"},
    {"id": "sodium", "question": "成人每日钠摄入上限是多少？", "answers": ["2,400 mg"], "split": "b"},
    {"id": "gone", "question": "What does the missing guide recommend?", "doc": MISSING},
    {"id": "nope", "question": "What ivabradine dose is recommended for postural tachycardia?", "answerable": False},
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any]) -> Path:
    """A workspace 'Cardiology' with tilt.txt and sodium.txt ingested."""
    folder = tmp_path_factory.mktemp("evaluation-page")
    service = build(folder / "data")
    service.workspaces.create("Cardiology")
    for name, text in SOURCES.items():
        (folder / name).write_text(text, encoding="utf-8")
        assert service.documents.ingest("Cardiology", folder / name, name).status == "ready"
    return folder / "data"


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[str, bytes]]:
    """key -> (file name, data) of every download button drawn (Streamlit's own button still draws it)."""
    seen: dict[str, tuple[str, bytes]] = {}
    real = st.download_button

    def spy(label: str, data: Any, file_name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        seen[str(kwargs.get("key"))] = (str(file_name), data if isinstance(data, bytes) else str(data).encode())
        return real(label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    return seen


@pytest.fixture
def app(data_dir: Path, build: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The Evaluation page with the workspace open."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir.parent)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=180)
    at.session_state["workspace"] = build(data_dir).catalog.find_workspace("Cardiology").id
    at.run()
    at.switch_page("pages/evaluation.py").run()
    assert not at.exception
    yield at
    st.cache_resource.clear()


def upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader(key="eval-file").set_value((name, data, "application/octet-stream")).run()
    assert not at.exception


def captions(at: AppTest) -> str:
    return "\n".join(caption.value.replace("\\", "") for caption in at.caption)


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def test_a_question_file_gives_the_figures_and_one_row_per_question(
    downloads: dict[str, tuple[str, bytes]], app: AppTest
) -> None:
    assert app.title[0].value == "Evaluation"
    assert app.button(key="eval-run").disabled, "nothing to run before a file is uploaded"
    assert downloads["eval-file-example"][0] == "example-questions.jsonl"
    example = downloads["eval-file-example"][1].decode("utf-8").splitlines()
    assert 2 <= len(example) <= 3 and all(json.loads(line)["question"] for line in example)

    upload(app, "questions.jsonl", jsonl(QUESTIONS))
    assert "4 questions read: 3 answerable, 1 not answerable" in captions(app)
    warning = app.warning[0].value.replace("\\", "")
    assert "&lt;b&gt;missing&lt;/b&gt;" in warning and "<b>" not in warning, "the gold name is escaped"
    app.radio(key="eval-mode").set_value("naive")
    app.button(key="eval-run").click().run()
    assert not app.exception and not app.error

    figures, rows = (frame.value for frame in app.dataframe)
    assert list(figures.columns) == ["all", "en", "zh", "split=a", "split=b"]
    assert figures.loc["questions"].tolist() == ["4", "3", "1", "1", "1"]
    assert figures.loc["answerable / unanswerable", "all"] == "3 / 1"
    assert figures.loc["first citation right", "all"].endswith("/3)"), "counted over the answerable questions"
    assert figures.loc["unanswerable refused", "all"].endswith("/1)")
    assert figures.loc["first citation right", "split=a"].endswith("/1)")
    assert rows["id"].tolist() == ["tilt", "sodium", "gone", "nope"]
    assert rows["language"].tolist() == ["en", "zh", "en", "en"]
    assert rows["answerable"].tolist() == ["yes", "yes", "yes", "no"]
    assert rows.loc[3, "first citation right"] == "–", "an unanswerable question is not judged by citation"
    assert rows.loc[0, "first cited"] in ("tilt.txt, p. 1", ""), "the first citation of the tilt question"
    assert rows.loc[2, "first citation right"] in ("no", "–") and "split" in rows.columns
    assert "4 questions asked, sources searched the “Text search only” way" in captions(app)

    name, data = downloads["eval-rows-download"]
    assert name == "Evaluation - Cardiology.jsonl"
    lines = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["tilt", "sodium", "gone", "nope"]
    assert set(lines[0]) >= {"question", "lang", "answerable", "refused", "first_right", "first_document",
                             "first_pages", "confidence", "support"}

    app.run()  # the report stays after a rerun
    assert len(app.dataframe) == 2 and not app.exception


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"question": "What angle?", "doc": "tilt.txt"}\n{not json\n', "questions.jsonl, line 2: not valid JSON"),
        (b'{"question": "What angle?", "doc": "tilt.txt", "pages": "8"}\n', 'line 1: "pages" must be a list'),
        (b"\n\n", "questions.jsonl has no questions"),
        (b"\xff\xfe{", "questions.jsonl is not UTF-8 text"),
    ],
)
def test_a_malformed_file_shows_its_message_and_nothing_breaks(app: AppTest, content: bytes, message: str) -> None:
    upload(app, "questions.jsonl", content)
    assert not app.exception
    shown = app.error[0].value.replace("\\", "")
    assert message in shown.replace("&quot;", '"')
    assert app.button(key="eval-run").disabled
    assert not app.dataframe
