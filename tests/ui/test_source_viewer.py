"""The source viewer through AppTest on a real workspace: a chip opens the whole document at the cited page,
paging and jumping move through it, Notes chips open it too, the Sources page previews any source, and a
removed source leaves its citations readable (the saved quote) after a warning naming what cites it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from components.citations import figure_citation
from components.page_text import PageWord
from components.passage_notes import selection_rects
from components.source_viewer import REMOVED
from components.text import escape_markdown
from components.viewer_html import ShownPage, passage_outline, viewer_html
from components.viewer_layout import PanelLayout, layout_css
from workspace_app.models.answers import Citation
from workspace_app.models.documents import Figure, PageImage, Rect

APP = Path(__file__).resolve().parents[2] / "app.py"
QUESTION = "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?"
PAGE = "source-viewer-doc-page-input"


@pytest.fixture
def service(tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Any:
    """A workspace 'Cardiology' holding pages 7-10 of the syncope guideline; the app reads the same data dir."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    made = build(tmp_path / "data")
    made.workspaces.create("Cardiology")
    assert made.documents.ingest("Cardiology", excerpt("shen-2017-syncope.pdf", 7, 10), "syncope.pdf").status == "ready"
    return made


@pytest.fixture
def open_page(service: Any) -> Iterator[Callable[[str], AppTest]]:
    def _open(page: str) -> AppTest:
        st.cache_resource.clear()
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.session_state["workspace"] = service.catalog.find_workspace("Cardiology").id
        at.run()
        at.switch_page(page).run()
        assert not at.exception
        return at

    yield _open
    st.cache_resource.clear()


def texts(at: AppTest) -> str:
    return "\n".join(e.value for e in (*at.markdown, *at.caption, *at.warning, *at.info, *at.error))


def chip(at: AppTest, n: int) -> Any:
    return next(b for b in at.button if b.key and b.key.endswith(f"-chip-{n}"))


def asked(open_page: Callable[[str], AppTest], service: Any) -> tuple[AppTest, Any]:
    at = open_page("pages/chat.py")
    at.chat_input(key="chat-input").set_value(QUESTION).run()
    assert not at.exception
    [chat] = service.chats.list_chats("Cardiology")
    [message] = service.chats.chat_messages("Cardiology", chat.id)
    assert message.answer.citations
    return at, message


def test_chip_opens_the_document_at_the_cited_page_and_pages_through_it(open_page: Any, service: Any) -> None:
    at, message = asked(open_page, service)
    assert "Click a citation" in texts(at)
    citation = message.answer.citations[0]
    chip(at, 1).click().run()
    assert not at.exception
    assert f"syncope\\.pdf** · p. {citation.page_start}" in texts(at)
    assert at.number_input(key=PAGE).value == citation.page_start
    at.button(key="source-viewer-doc-next").click().run()
    assert at.number_input(key=PAGE).value == citation.page_start + 1
    at.number_input(key=PAGE).set_value(4).run()
    assert not at.exception and at.number_input(key=PAGE).value == 4
    assert at.button(key="source-viewer-doc-next").disabled, "page 4 of 4 is the last"
    at.button(key="source-viewer-doc-prev").click().run()
    assert at.number_input(key=PAGE).value == 3
    chip(at, 1).click().run()
    assert at.number_input(key=PAGE).value == 3, "the same citation keeps the page the reader moved to"
    keys = {b.key for b in at.button}
    assert {"source-viewer-wide-on", "source-viewer-wide-off"} <= keys, "the window's width decides: CSS hides one"
    at.button(key="source-viewer-wide-off").click().run()
    keys = {b.key for b in at.button}
    assert "source-viewer-wide-on" in keys and "source-viewer-wide-off" not in keys, "docked: only 'Wide' is offered"


def test_notes_chips_open_the_viewer(open_page: Any, service: Any) -> None:
    _, message = asked(open_page, service)
    service.notes.save_note("Cardiology", message.answer)
    notes = open_page("pages/notes.py")
    assert "Click a citation" in texts(notes)
    chip(notes, 1).click().run()
    assert not notes.exception
    assert notes.number_input(key="notes-viewer-doc-page-input").value == message.answer.citations[0].page_start


def test_removed_source_shows_the_saved_quote_after_a_warning_naming_its_citers(open_page: Any, service: Any) -> None:
    at, message = asked(open_page, service)
    assert not chip(at, 1).proto.icon and "source removed" not in texts(at)
    service.notes.save_note("Cardiology", message.answer)
    [document] = service.documents.list("Cardiology")
    uses = service.chats.source_uses("Cardiology", document.id)
    assert (uses.chats, uses.notes) == (1, 1)

    sources = open_page("pages/sources.py")
    assert "cite" not in texts(sources)
    sources.button(key=f"sources-remove-{document.id}").click().run()
    assert "1 chat and 1 note cite **syncope\\.pdf**" in texts(sources)
    sources.button(key=f"sources-confirm-remove-{document.id}").click().run()
    assert not sources.exception and service.documents.list("Cardiology") == []

    at = open_page("pages/chat.py")
    # Marked before any click: the chip's icon and hover text, and its line in the list of sources.
    assert chip(at, 1).proto.icon == ":material/link_off:" and chip(at, 1).proto.help.startswith("**Source removed**")
    assert "source removed" in texts(at)
    notes = open_page("pages/notes.py")
    assert chip(notes, 1).proto.icon == ":material/link_off:" and "source removed" in texts(notes)
    chip(at, 1).click().run()
    assert not at.exception
    shown = texts(at)
    assert REMOVED in shown and "There is no document" not in shown
    assert escape_markdown(message.answer.citations[0].quote) in shown, "the saved quote is shown"
    assert service.chats.source_uses("Cardiology", document.id).chats == 1


def test_sources_page_previews_a_source(open_page: Any, service: Any) -> None:
    at = open_page("pages/sources.py")
    assert at.selectbox(key="sources-preview-pick").value == service.documents.list("Cardiology")[0].id
    assert at.number_input(key="sources-preview-doc-page-input").value == 1
    at.button(key="sources-preview-doc-next").click().run()
    assert not at.exception and at.number_input(key="sources-preview-doc-page-input").value == 2


def test_frame_marks_the_focus_and_the_other_citations_and_escapes_text() -> None:
    def cite(n: int, page: int, y: float) -> Citation:
        rect = Rect(page=page, x0=50, y0=y, x1=300, y1=y + 10)
        return Citation(n=n, chunk_id=f"c{n}", document="d.pdf", document_id="d", page_start=page, page_end=page,
                        section="", quote="q", rects=(rect,), chunk_rects=(rect,), score=1.0)

    image = PageImage(page=2, pages=5, png=b"", width=600, height=800)
    focus, other, elsewhere = cite(1, 2, 100), cite(2, 2, 400), cite(3, 4, 100)
    frame = viewer_html([ShownPage(image, "/media/x.png")], focus, [other, elsewhere], "<script>alert(1)</script>.pdf")
    assert "id='quote-1-0'" in frame and "id='chunk-1-0'" in frame and "data-focus='c1-1'" in frame
    assert "id='mark-2-0'" in frame and "data-n='[2]'" in frame
    assert "mark-3-" not in frame, "a citation on another page is not drawn on this one"
    assert "&lt;script&gt;alert(1)" in frame and "<script>alert(1)" not in frame
    assert "left:8.167%;top:12.375%" in frame, "boxes are placed in percent of the page (with 1 pt of margin)"


def test_frame_outlines_the_passage_once_and_lays_out_escaped_words() -> None:
    lines = (Rect(page=2, x0=50, y0=100, x1=280, y1=110), Rect(page=2, x0=50, y0=112, x1=300, y1=122),
             Rect(page=3, x0=40, y0=50, x1=200, y1=60))
    focus = Citation(n=1, chunk_id="c1", document="d.pdf", document_id="d", page_start=2, page_end=3, section="",
                     quote="q", rects=lines[:1], chunk_rects=lines, score=1.0)
    image = PageImage(page=2, pages=5, png=b"", width=600, height=800)
    words = (PageWord(50, 100, 90, 110, "</script><b>x</b>", 8.0, False), PageWord(95, 100, 120, 110, "end", 8.0, True))
    frame = viewer_html([ShownPage(image, "/media/x.png", words)], focus, [], "a.pdf")
    assert frame.count("class='box chunk'") == 1, "one outline around the passage's lines, not one per line"
    assert "left:8.167%;top:12.375%;width:42.000%;height:3.000%" in frame, "the union of the lines on this page"
    assert "<b>x</b>" not in frame and "\\u003c/script\\u003e\\u003cb\\u003ex" in frame, "words cannot close the script"
    assert "data-w='600.00' data-h='800.00'" in frame and ",8.0,1]" in frame
    assert passage_outline(lines, 4) is None
    assert "id='save-selection'" not in frame, "only a viewer with a saver beside it offers 'Save selection'"
    assert "id='save-selection'" in viewer_html([ShownPage(image, "/media/x.png")], focus, [], "a.pdf", can_save=True)


def test_wide_layout_follows_the_window_until_the_reader_chooses() -> None:
    auto = layout_css(PanelLayout("v", None, 1600, 85))
    assert "@media (max-width:1599px){.st-key-v{position:fixed" in auto and "width:min(85vw" in auto
    assert "@media (min-width:1600px){.st-key-v-wide-off{display:none}}" in auto
    assert layout_css(PanelLayout("v", True, 1600, 85)).startswith(".st-key-v{position:fixed")
    assert layout_css(PanelLayout("v", False, 1600, 85)) == layout_css(PanelLayout("v", None, 0, 85)) == ""


def test_selection_boxes_from_the_browser_are_checked() -> None:
    raw = [[1, 2, 30, 12], [5, 5, 5, 9], ["a", 1, 2, 3], [1, 2], "x"]
    assert selection_rects(raw, 4) == (Rect(4, 1, 2, 30, 12),)
    words = [[10, 100, 40, 110], [44, 101, 80, 110], [10, 112, 50, 122]]
    assert selection_rects(words, 2) == (Rect(2, 10, 100, 80, 110), Rect(2, 10, 112, 50, 122)), "one box a line"
    assert selection_rects("not a list", 1) == ()


def test_a_saved_passage_is_listed_in_notes_and_its_chip_opens_its_page(open_page: Any, service: Any) -> None:
    [document] = service.documents.list("Cardiology")
    service.notes.save_passage("Cardiology", document.id, 3, "Carotid sinus massage", (Rect(3, 50, 100, 200, 110),))
    notes = open_page("pages/notes.py")
    assert "Saved from the viewer" in texts(notes) and "Passage from syncope\\.pdf\\, p\\. 3" in texts(notes)
    chip(notes, 1).click().run()
    assert not notes.exception
    assert notes.number_input(key="notes-viewer-doc-page-input").value == 3


def test_a_figure_opens_like_a_citation_with_its_box_outlined() -> None:
    figure = Figure(id="d-fig000", document_id="d", ordinal=0, rect=Rect(2, 60, 80, 540, 480), label="Figure 1",
                    caption="FIGURE 1 <b>Algorithm</b>", text="", kind="vector", chunk_ids=("d-00003",))
    focus = figure_citation(figure, "d.pdf")
    assert (focus.page_start, focus.rects, focus.quote) == (2, (figure.rect,), figure.caption)
    image = PageImage(page=2, pages=5, png=b"", width=600, height=800)
    frame = viewer_html([ShownPage(image, "/media/x.png")], focus, [], "d.pdf")
    assert "id='quote-0-0'" in frame and frame.count("class='box chunk'") == 1
    assert "left:9.833%;top:9.875%" in frame, "the figure's box, in percent of the page (with 1 pt of margin)"
