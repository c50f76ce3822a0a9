"""Exports and download names through the real pages (AppTest): a chat and the notes exported as Markdown read as
plain text (no backslash escapes in document names or gradings), and every download gets a safe, readable name."""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from workspace_app.app import escape, safe_file_name

WORKSPACE = "Cardiology <b>women</b> & AF"
QUESTION = "In women with high triglycerides or cholesterol, can omega-3 fatty acids be used, and what is the class and level of evidence?"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Path:
    """A workspace with markup in its name and pages 10-11 of the women's prevention guideline."""
    folder = tmp_path_factory.mktemp("exports")
    service = build(folder / "data")
    service.workspaces.create(WORKSPACE)
    path = excerpt("mosca-2011-women-cvd.pdf", 10, 11)
    assert service.documents.ingest(WORKSPACE, path, "mosca-2011-women-cvd.pdf").status == "ready"
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
    """The Chat page of the workspace."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir.parent)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["workspace"] = build(data_dir).catalog.find_workspace(WORKSPACE).id
    at.run()
    at.switch_page("pages/chat.py").run()
    assert not at.exception
    yield at
    st.cache_resource.clear()


def test_chat_and_notes_exports_read_as_plain_text_under_safe_names(app: AppTest, downloads: dict[str, Any]) -> None:
    app.chat_input(key="chat-input").set_value(QUESTION).run()
    assert not app.exception
    name, data = downloads["chats-export"]
    text = data.decode("utf-8")
    assert name == "In women with high triglycerides or cholesterol, can.md", "the chat's title, shortened at a word"
    assert "mosca-2011-women-cvd.pdf, p. " in text, "document names as written"
    assert "Class IIb" in text and "(Class IIb" in text and "\\(" not in text and "\\-" not in text and "\\." not in text
    next(b for b in app.button if b.key and b.key.endswith("-save")).click().run()
    app.switch_page("pages/notes.py").run()
    assert not app.exception
    name, data = downloads["notes-export"]
    assert name == "Notes - Cardiology women & AF.md"
    notes = data.decode("utf-8")
    assert notes.startswith("# Notes: Cardiology \\<b>women\\</b> & AF\n"), "markup in a name stays text, barely escaped"
    assert "mosca-2011-women-cvd.pdf" in notes and "\\-" not in notes
    rendered = MarkdownIt("commonmark", {"html": True}).render(notes)
    assert "<b>" not in rendered and "&lt;b&gt;women" in rendered, "what is escaped still renders as text"
    graph = app.switch_page("pages/graph.py").run()
    assert not graph.exception
    assert downloads["graph-graphml"][0] == "Cardiology women & AF.graphml"


@pytest.mark.parametrize(
    "text",
    [
        "mosca-2011-women-cvd.pdf (Class IIa, LOE B) p<0.05, 1.5 mg",
        "*not bold* _nor this_ `code` [link](http://x) <script>x</script> &amp; snake_case",
        "# not a heading\n1. not a list\n- nor this\n> nor a quote",
        "[a][b] ![img](x.png) [ref]: http://x\n[1]: http://y",
    ],
)
def test_escaped_text_renders_exactly_as_written(text: str) -> None:
    shown = MarkdownIt("commonmark", {"html": True}).render(escape(text))
    assert html.unescape(re.sub(r"<[^>]+>", "", shown)).split() == text.split()
    for tag in ("<em>", "<a ", "<code>", "<h1>", "<ol>", "<ul>", "<blockquote>", "<script>"):
        assert tag not in shown


def test_a_sources_own_bracketed_markers_are_not_escaped() -> None:
    """Plain-text readers of the export see the source's "[56]" as printed; only a bracket that would form a link
    is escaped."""
    assert escape("Rates fell [56] (S4.5-33) and [S4, S5].") == "Rates fell [56] (S4.5-33) and [S4, S5]."
    assert escape("联合药物治疗 Ⅱa B[3][4]", keep_markers=True) == "联合药物治疗 Ⅱa B[3][4]", "our markers side by side"
    assert escape("see [this](http://x)") == "see \\[this](http://x)"


def test_what_forms_no_markdown_where_it_stands_is_not_escaped() -> None:
    """A section title after a citation's document ("9. LIFESTYLE") or a heading's "## " forms no list, and a lone
    asterisk after a word ("Guideline*") opens no emphasis: the plain-text reader sees them as printed."""
    from workspace_app.answer.export import citation_line
    from workspace_app.models.answers import Citation

    assert escape("9. LIFESTYLE", inline=True) == "9. LIFESTYLE"
    assert escape("9. LIFESTYLE") == "9\\. LIFESTYLE", "a line of its own would be a list"
    assert escape("2014 AHA/ACC Guideline* for HCM") == "2014 AHA/ACC Guideline* for HCM"
    assert escape("Guideline*, see *this*") == "Guideline*, see \\*this*", "only an asterisk that can open is escaped"
    assert "<em>" not in MarkdownIt("commonmark").render(escape("Guideline*, see *this* and **that**"))
    citation = Citation(1, "c", "eckel-2013-lifestyle.pdf", "d", 3, 3, "9. LIFESTYLE", "Guideline* text.", (), (), 1.0)
    line = citation_line(citation)
    assert line == "1. eckel-2013-lifestyle.pdf, p. 3, 9. LIFESTYLE: “Guideline* text.”"
    shown = MarkdownIt("commonmark", {"html": True}).render(f"## 9. LIFESTYLE\n\n{line}")
    assert "<h2>9. LIFESTYLE</h2>" in shown and "<em>" not in shown and "Guideline* text." in shown


def test_file_names_are_readable_and_safe() -> None:
    assert safe_file_name("Cardiology <b>women</b> & AF", "graphml") == "Cardiology women & AF.graphml"
    assert safe_file_name("../../etc/passwd", "md") == "etc passwd.md"
    assert safe_file_name("心衰指南: 2024?", "md") == "心衰指南 2024.md"
    assert safe_file_name("CON", "md", "chat") == "chat.md" and safe_file_name("   ", "md", "notes") == "notes.md"
    assert len(safe_file_name("x" * 500, "md")) <= 83
    assert safe_file_name("What is the class of " + "evidence " * 20, "md").endswith(" evidence.md"), "cut at a word"


def test_a_notes_own_headings_nest_below_its_title_in_every_export() -> None:
    """A note written with its own outline ("# Plan", "## Doses") keeps it inside the note: its shallowest heading
    one level below the note's title, alone or among the workspace's notes; fenced code is left as written."""
    from workspace_app.answer.export import note_markdown, notes_markdown
    from workspace_app.models.answers import Note

    body = "# Plan\n\nStart low.\n\n## Doses\n\n```\n# not a heading\n```\n###### Deepest"
    note = Note(id="n1", workspace_id="w", title="Ward round", answer=None, created_at="2026-11-27", body=body)
    alone = note_markdown(note).splitlines()
    assert alone[0] == "# Ward round" and "## Plan" in alone and "### Doses" in alone
    among = notes_markdown("Ward", [note]).splitlines()
    assert among[0] == "# Notes: Ward" and "## Ward round" in among
    assert "### Plan" in among and "#### Doses" in among and "###### Deepest" in among
    assert "# not a heading" in among and "Start low." in among
    tokens = MarkdownIt().parse("\n".join(among))
    assert [int(t.tag[1]) for t in tokens if t.type == "heading_open"] == [1, 2, 3, 4, 6]
    deep = Note(id="n2", workspace_id="w", title="Briefing", answer=None, created_at="2026-11-27", body="#### a.pdf\n\n- x")
    assert note_markdown(deep, "##").splitlines()[2] == "### a.pdf"  # an outline set deep for its looks moves up
