"""The Chat and Notes pages through Streamlit's AppTest on a real workspace (a guideline excerpt and a hostile
Markdown source): ask, citation chips, the PDF panel, chats (new, rename, delete, export), notes, escaping,
and an LLM that cannot be reached."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"
HOSTILE = (
    "# Tilt testing\n\nA tilt-table angle of 70 degrees for 30 minutes gives the best yield <script>alert(1)</script> "
    "[click here](http://evil.example) **bold** :red[x].\n"
)
QUESTION = "What tilt-table angle and duration give the best yield?"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Path:
    """A workspace 'Cardiology' with pages 8-9 of the syncope guideline and a Markdown file full of markup."""
    folder = tmp_path_factory.mktemp("chat")
    service = build(folder / "data")
    service.workspaces.create("Cardiology")
    hostile = folder / "hostile.md"
    hostile.write_text(HOSTILE, encoding="utf-8")
    for path, name in ((excerpt("shen-2017-syncope.pdf", 8, 9), "syncope-p8-9.pdf"), (hostile, "hostile.md")):
        assert service.documents.ingest("Cardiology", path, name).status == "ready"
    return folder / "data"


@pytest.fixture
def built(data_dir: Path, build: Callable[..., Any]) -> Any:
    """An App on the page's data dir, to arrange state and check what the page did."""
    return build(data_dir)


@pytest.fixture
def app(data_dir: Path, built: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The Chat page with the workspace open."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir.parent)
    for chat in built.chats.list_chats("Cardiology"):
        built.chats.delete_chat("Cardiology", chat.id)
    yield open_page(built, "pages/chat.py")
    st.cache_resource.clear()


def open_page(built: Any, page: str) -> AppTest:
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["workspace"] = built.catalog.find_workspace("Cardiology").id
    at.run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input(key="chat-input").set_value(question).run()
    assert not at.exception
    return at


def chips(at: AppTest) -> list[Any]:
    return [b for b in at.button if b.key and "-chip-" in b.key]


def shown_html(at: AppTest) -> str:
    renderer = MarkdownIt("commonmark", {"html": True})
    return "\n".join(renderer.render(element.value) for element in (*at.markdown, *at.caption))


def test_question_gets_a_cited_answer_kept_in_a_new_chat(app: AppTest, built: Any) -> None:
    ask(app, QUESTION)
    labels = [b.label for b in chips(app)]
    assert labels and labels[0] == "\\[1\\]", "chips read exactly [1], [2], ..."
    html = shown_html(app)
    assert "[1]" in html and "For clinical reference only" in html
    [chat] = built.chats.list_chats("Cardiology")
    assert chat.title.startswith("What tilt-table angle")
    [message] = built.chats.chat_messages("Cardiology", chat.id)
    assert message.answer.citations and message.question == QUESTION


def test_chip_opens_the_cited_page_in_the_panel(app: AppTest, built: Any) -> None:
    ask(app, "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?")
    chips(app)[0].click().run()
    assert not app.exception
    _, n = app.session_state["cited"]
    assert n == 1
    html = shown_html(app)
    citation = built.chats.chat_messages("Cardiology", built.chats.list_chats("Cardiology")[0].id)[0].answer.citations[0]
    assert "syncope-p8-9.pdf" in html and f"p. {citation.page_start}" in html
    assert app.number_input(key="source-viewer-doc-page-input").value == citation.page_start


def test_an_opened_citation_is_in_the_url_and_a_reload_opens_it_again(app: AppTest, built: Any) -> None:
    ask(app, "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?")
    chips(app)[0].click().run()
    message_id, n = app.session_state["cited"]
    assert app.query_params["cite"] == f"{message_id}:{n}"
    citation = built.chats.chat_messages("Cardiology", built.chats.list_chats("Cardiology")[0].id)[0].answer.citations[0]
    # A reload: a new session with only the URL.
    st.cache_resource.clear()
    again = AppTest.from_file(str(APP), default_timeout=120)
    for name in ("workspace", "chat", "cite"):
        again.query_params[name] = app.query_params[name]
    again.run()
    again.switch_page("pages/chat.py").run()
    assert not again.exception and again.session_state["cited"] == (message_id, n)
    assert f"p. {citation.page_start}" in shown_html(again)
    assert again.number_input(key="source-viewer-doc-page-input").value == citation.page_start
    # A link naming a message the chat does not hold opens nothing and leaves the URL.
    st.cache_resource.clear()
    stale = AppTest.from_file(str(APP), default_timeout=120)
    for name in ("workspace", "chat"):
        stale.query_params[name] = app.query_params[name]
    stale.query_params["cite"] = "no-such-message:1"
    stale.run()
    stale.switch_page("pages/chat.py").run()
    assert not stale.exception and "cite" not in stale.query_params and "cited" not in stale.session_state


def test_document_text_is_shown_as_text(app: AppTest) -> None:
    ask(app, QUESTION)
    html = shown_html(app)
    assert "alert(1)" in html, "the hostile sentence is quoted"
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "<a href" not in html and "<strong>bold</strong>" not in html


def test_chats_can_be_started_renamed_deleted_and_exported(app: AppTest, built: Any) -> None:
    ask(app, QUESTION)
    [chat] = built.chats.list_chats("Cardiology")
    app.button(key="chats-new").click().run()
    chats = built.chats.list_chats("Cardiology")
    assert len(chats) == 2
    new = next(c for c in chats if c.id != chat.id)
    assert app.session_state["chat"] == new.id and app.selectbox(key="chats-pick").value == new.id
    app.selectbox(key="chats-pick").set_value(chat.id).run()
    app.run()
    assert app.session_state["chat"] == chat.id and app.selectbox(key="chats-pick").value == chat.id
    app.text_input(key="chats-rename-name").set_value("Tilt <b>testing</b>").run()
    app.button(key=f"chats-rename-save-{chat.id}").click().run()
    assert not app.exception
    assert built.chats.get_chat("Cardiology", chat.id).title == "Tilt <b>testing</b>"
    export = built.chats.export_chat("Cardiology", chat.id)
    assert "# Tilt \\<b>testing\\</b>" in export and "**Citations**" in export and "1. " in export
    app.button(key=f"chats-delete-confirm-{chat.id}").click().run()
    assert not app.exception
    assert [c.id for c in built.chats.list_chats("Cardiology")] != [chat.id]
    assert chat.id not in [c.id for c in built.chats.list_chats("Cardiology")]


def test_saved_answer_appears_on_the_notes_page(app: AppTest, built: Any) -> None:
    ask(app, QUESTION)
    save = next(b for b in app.button if b.key and b.key.endswith("-save"))
    save.click().run()
    assert not app.exception
    [note] = built.notes.list_notes("Cardiology")
    notes = open_page(built, "pages/notes.py")
    assert "What tilt\\-table angle" in "\n".join(m.value for m in notes.markdown)
    notes.button(key=f"note-delete-{note.id}").click().run()
    assert not notes.exception and len(built.notes.list_notes("Cardiology")) == 1, "delete asks first"
    notes.button(key=f"note-confirm-delete-{note.id}").click().run()
    assert not notes.exception and built.notes.list_notes("Cardiology") == []


def test_chinese_question_without_an_answer_is_refused_in_chinese(app: AppTest) -> None:
    ask(app, "替奈普酶应如何按体重给药？")
    assert "根据提供的资料，我无法回答这个问题。" in shown_html(app)
    assert not chips(app)


def test_unreachable_language_model_gives_a_message_and_the_chat_stays_usable(
    data_dir: Path, built: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("WORKSPACE_LLM__TIMEOUT_S", "3")
    monkeypatch.chdir(data_dir.parent)
    at = open_page(built, "pages/chat.py")
    for _ in range(2):
        ask(at, QUESTION)
        assert any("cannot be reached" in e.value for e in at.error)
        assert at.chat_input(key="chat-input") is not None
    st.cache_resource.clear()


def test_without_a_workspace_the_page_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "empty"))
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("pages/chat.py").run()
    assert not at.exception and "Open or create a workspace first" in at.info[0].value
    st.cache_resource.clear()


def test_a_fresh_session_lands_in_the_only_workspace_and_the_url_names_it_and_the_chat(
    data_dir: Path, built: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    st.cache_resource.clear()
    chat = built.chats.create_chat("Cardiology", "Bookmarked")
    built.chats.create_chat("Cardiology", "Newer")
    workspace_id = built.catalog.find_workspace("Cardiology").id
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("pages/chat.py").run()
    assert not at.exception and not any("Open or create" in i.value for i in at.info), "one workspace: no choice"
    assert at.query_params["workspace"] == workspace_id
    # A reload of a bookmark: a new session with only the URL.
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["workspace"] = workspace_id
    at.query_params["chat"] = chat.id
    at.run()
    at.switch_page("pages/chat.py").run()
    assert not at.exception and at.session_state["chat"] == chat.id
    assert at.selectbox(key="chats-pick").value == chat.id
    assert at.query_params["chat"] == chat.id
    st.cache_resource.clear()


def test_language_model_answer_is_streamed_verified_and_kept(
    data_dir: Path, built: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("fake_openai", Path(__file__).parents[1] / "fake_openai.py")
    assert spec and spec.loader
    fake_openai = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake_openai)

    def reply(request: dict[str, Any]) -> str:
        blocks = request["messages"][-1]["content"].split("Evidence blocks:\n", 1)[1]
        block = next(part for part in blocks.split("\n\n[") if "70 degrees" in part)
        n = block.lstrip("[").split("]")[0]
        return f"A tilt-table angle of 70 degrees for 30 minutes gives the best yield [{n}]."

    with fake_openai.fake_openai_server() as fake:
        fake.replies = [reply]
        monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.chdir(data_dir.parent)
        for chat in built.chats.list_chats("Cardiology"):
            built.chats.delete_chat("Cardiology", chat.id)
        at = open_page(built, "pages/chat.py")
        ask(at, QUESTION)
        assert fake.requests and fake.requests[-1]["body"]["stream"] is True
        html = shown_html(at)
        assert "gives the best yield [1]." in html and "language model" in html, html[:3000]
        assert [b.label for b in chips(at)] == ["\\[1\\]"]
        [message] = built.chats.chat_messages("Cardiology", built.chats.list_chats("Cardiology")[0].id)
        assert message.answer.answerer == "llm" and message.answer.grounded
    st.cache_resource.clear()


def test_chats_with_the_same_title_open_each_their_own(app: AppTest, built: Any) -> None:
    first = built.chats.create_chat("Cardiology")
    app.button(key="chats-new").click().run()
    app.button(key="chats-new").click().run()
    newest = app.session_state["chat"]
    assert newest != first.id and len(built.chats.list_chats("Cardiology")) == 3
    picker = app.selectbox(key="chats-pick")
    assert len(set(picker.options)) == 3, "every 'New chat' has its own label"
    picker.set_value(first.id).run()
    assert not app.exception and app.session_state["chat"] == first.id
    app.chat_input(key="chat-input").set_value(QUESTION).run()
    assert [m.question for m in built.chats.chat_messages("Cardiology", first.id)] == [QUESTION]
    assert built.chats.chat_messages("Cardiology", newest) == []


def test_a_question_stopped_by_the_next_one_is_still_answered_first(app: AppTest, built: Any) -> None:
    """A question typed while an answer streams reruns the page and stops that answer; the stopped question is
    kept and answered before the new one, both in the same chat, in the order asked."""
    workspace = built.catalog.find_workspace("Cardiology").id
    stopped = "How long should the tilt-table test last?"
    app.session_state["chat-pending"] = [(workspace, stopped)]  # what a stopped run leaves behind
    ask(app, QUESTION)
    chats = built.chats.list_chats("Cardiology")
    assert len(chats) == 1
    asked = [m.question for m in built.chats.chat_messages("Cardiology", chats[0].id)]
    assert asked == [stopped, QUESTION]
    assert app.session_state["chat-pending"] == []
    app.run()  # nothing is asked twice
    assert len(built.chats.chat_messages("Cardiology", chats[0].id)) == 2


def test_a_figure_asked_for_is_shown_under_the_answer_and_outlined_in_the_viewer(app: AppTest, built: Any) -> None:
    ask(app, "Show the syncope initial evaluation algorithm")
    assert len(app.get("image")) == 1, "the figure's thumbnail is shown under the answer"
    assert "Syncope Initial Evaluation" in shown_html(app) and "p. 2" in shown_html(app)
    [message] = built.chats.chat_messages("Cardiology", built.chats.list_chats("Cardiology")[0].id)
    figure = message.answer.figures[0]
    assert figure.label == "Figure 1" and figure.rect.page == 2  # page 9 of the guideline is page 2 of the excerpt
    opened = [b for b in app.button if b.key and b.key.endswith("-figures-0-open")]
    opened[0].click().run()
    assert not app.exception
    assert app.session_state["cited"][1] == -1
    assert app.number_input(key="source-viewer-doc-page-input").value == figure.rect.page
