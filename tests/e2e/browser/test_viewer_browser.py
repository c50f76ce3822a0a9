"""A user in Chromium reads the cited source beside the chat (screenshots in tmp_path: viewer.png, notes.png,
removal-warning.png, removed.png), and at 1366x768 reads a table and a prose citation without zooming, selects
a sentence and keeps it as a note (screenshots in /tmp/workspace-screenshots/viewer-*.png):

- on the 5th answer of a chat, scrolled down, clicking [2] opens the viewer beside it without moving the chat;
  the viewer stays in view, the red sentence is inside the frame's view, the page can be turned, a page typed,
  the zoom changed, and "Open full PDF" serves the whole file;
- a chip on the Notes page opens the same viewer;
- removing a cited source warns how many chats and notes cite it; its citation then shows the saved quote.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from served import CHROMIUM_ARGS, require_chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path("/tmp/workspace-screenshots")

QUESTIONS = [
    "What INR range should warfarin target in women with atrial fibrillation?",
    "Should hormone therapy be used to prevent cardiovascular disease in women?",
    "How much physical activity is recommended for women to prevent cardiovascular disease?",
    "Should antioxidant vitamin supplements be used to prevent cardiovascular disease in women?",
    "Should aspirin be used for primary prevention in women aged 65 or older?",
]
SYNCOPE = "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?"
FRAME = ".st-key-source-viewer iframe"
SCROLLER = "() => (document.querySelector('[data-testid=stAppScrollToBottomContainer]') || document.scrollingElement).scrollTop"
# Where the red sentence is inside the frame, and where the frame is in the window.
QUOTE_IN_VIEW = """(frame) => {
  const box = frame.contentDocument.querySelector('.quote'); if (!box) return null;
  const r = box.getBoundingClientRect(); const f = frame.getBoundingClientRect();
  return {inFrame: r.top >= 0 && r.bottom <= frame.contentWindow.innerHeight, frameTop: f.top, frameBottom: f.bottom};
}"""


@pytest.fixture(scope="module")
def reading_data(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any], guidelines: Path,
                 excerpt: Callable[..., Path]) -> tuple[Path, dict[str, str]]:
    """A data dir whose workspace holds the 20-page women's CVD guideline and a 2-page syncope excerpt, ingested
    once for the module (each test serves a copy); their ids by name."""
    require_chromium()
    data = tmp_path_factory.mktemp("reading") / "data"
    assert cli(data, "workspace", "create", "Cardiology").returncode == 0
    for path in (guidelines / "mosca-2011-women-cvd.pdf", excerpt("shen-2017-syncope.pdf", 8, 9)):
        done = cli(data, "ingest", "--workspace", "Cardiology", path)
        assert done.returncode == 0, done.stderr
    listed = cli(data, "documents", "--workspace", "Cardiology", "--json").stdout.splitlines()
    return data, {row["name"]: row["id"] for row in map(json.loads, listed)}


@pytest.fixture
def reading_app(tmp_path: Path, reading_data: tuple[Path, dict[str, str]]) -> Iterator[tuple[str, dict[str, str]]]:
    """Serve a copy of the module's data dir (a test may remove a source); the sources' ids by name."""
    template, ids = reading_data
    shutil.copytree(template, tmp_path / "data")
    with serving(tmp_path / "data", tmp_path) as url:
        yield url, ids


def idle(page: Any) -> None:
    from playwright.sync_api import expect

    page.wait_for_timeout(800)  # the running indicator shows after a short delay
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=180_000)


def nav(page: Any, name: str) -> Any:
    """A page's link in the top navigation."""
    return page.get_by_test_id("stTopNav").get_by_role("link", name=name)


def open_chat(playwright: Any, url: str, viewport: dict[str, int]) -> tuple[Any, Any]:
    """Chromium at this window size, the workspace opened and the Chat page shown: (browser, page)."""
    from playwright.sync_api import expect

    browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
    page = browser.new_page(viewport=viewport)
    page.goto(url)
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_text("Now working in")).to_be_visible()
    nav(page, "Chat").click()
    expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=30_000)
    idle(page)
    return browser, page


def ask(page: Any, question: str) -> None:
    from playwright.sync_api import expect

    # A recorded answer carries "Save to notes" (a streaming one does not yet): wait for this one's.
    saved = page.get_by_role("button", name="Save to notes")
    count = saved.count()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    expect(saved).to_have_count(count + 1, timeout=180_000)
    idle(page)


def test_viewer_beside_the_chat_notes_chips_and_a_removed_source(
    reading_app: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, ids = reading_app
    with sync_playwright() as playwright:
        # Wide enough for the viewer to open beside the chat (below WORKSPACE_UI__VIEWER_WIDE_BELOW it opens wide).
        browser, page = open_chat(playwright, url, {"width": 1500, "height": 1000})
        for question in QUESTIONS:
            ask(page, question)

        # [2] of the 5th answer, with the chat scrolled down to it.
        fifth = page.get_by_test_id("stChatMessage").nth(9)
        chip = fifth.get_by_role("button", name="[2]", exact=True).first
        chip.scroll_into_view_if_needed()
        before = page.evaluate(SCROLLER)
        assert before > 500, "the chat is scrolled well down"
        chip.click()
        frame = page.frame_locator(FRAME)
        expect(frame.locator("body[data-painted='1'] #quote-2-0")).to_be_attached(timeout=30_000)
        idle(page)
        assert page.evaluate(SCROLLER) == before, "opening a citation does not move the chat"
        placed = page.locator(FRAME).evaluate(QUOTE_IN_VIEW)
        assert placed["inFrame"], "the cited sentence is scrolled into the frame's view"
        assert 0 <= placed["frameTop"] < 400 and placed["frameBottom"] <= 1000, "the viewer is in the window"
        where = frame.locator(".where")
        cited_page = int(where.inner_text().split("page ")[1].split(" of")[0])
        expect(where).to_have_text(f"mosca-2011-women-cvd.pdf · page {cited_page} of 20")
        expect(frame.locator("#zoom-label")).to_have_text("Fit")  # a citation opens fitted to the panel's width
        frame.locator("#zoom-in").click()
        expect(frame.locator("#zoom-label")).to_have_text("125%")
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "viewer.png"))

        zoomed = frame.locator("#zoom-label").inner_text()
        page.locator(".st-key-source-viewer-doc-next button").first.click()
        expect(frame.locator(".where")).to_have_text(f"mosca-2011-women-cvd.pdf · page {cited_page + 1} of 20")
        expect(frame.locator("#zoom-label")).to_have_text(zoomed)  # the reader's zoom stays on the next page
        assert page.evaluate(SCROLLER) == before, "turning the page does not move the chat"
        box = page.locator(".st-key-source-viewer-doc-page-input input").first
        box.fill("20")
        box.press("Enter")
        expect(frame.locator(".where")).to_have_text("mosca-2011-women-cvd.pdf · page 20 of 20")
        expect(frame.locator("img[alt='Page 20 of 20']")).to_be_visible()
        href = page.get_by_role("link", name="Open full PDF").get_attribute("href")
        assert href and href.endswith("#page=20"), "the full PDF opens at the page in view"
        assert page.request.get(href if href.startswith("http") else url + href).body().startswith(b"%PDF")
        assert page.get_by_role("link", name="Open full PDF").get_attribute("target") == "_blank"
        assert page.evaluate(SCROLLER) == before, "paging through the source does not move the chat either"

        # Notes: save the 5th answer, open its [1] there.
        fifth.get_by_role("button", name="Save to notes").click()
        idle(page)
        nav(page, "Notes").click()
        expect(page.get_by_role("heading", name="Notes", exact=True)).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="[1]", exact=True).first.click()
        notes_frame = page.frame_locator(".st-key-notes-viewer iframe")
        expect(notes_frame.locator("body[data-painted='1'] #quote-1-0")).to_be_attached(timeout=30_000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "notes.png"))

        # A source cited by a chat is removed: the warning counts the chat; the citation keeps its quote.
        nav(page, "Chat").click()
        idle(page)
        ask(page, SYNCOPE)
        nav(page, "Sources").click()
        syncope = ids["shen-2017-syncope-p8-9.pdf"]
        page.locator(f".st-key-sources-remove-{syncope} button").first.click()
        expect(page.get_by_text("1 chat cites")).to_be_visible(timeout=60_000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "removal-warning.png"))
        page.locator(f".st-key-sources-confirm-remove-{syncope} button").first.click()
        expect(page.get_by_text("Removed shen-2017-syncope-p8-9.pdf")).to_be_visible(timeout=60_000)
        nav(page, "Chat").click()
        idle(page)
        last = page.get_by_test_id("stChatMessage").last
        last.get_by_role("button", name="[1]", exact=True).first.click()
        # The chat page's rerun draws the viewer; on two busy cores that takes longer than expect()'s 5 s default.
        expect(page.get_by_text("This source was removed from the workspace")).to_be_visible(timeout=30_000)
        expect(page.locator(".st-key-source-viewer blockquote")).to_contain_text("carotid sinus")
        expect(page.get_by_text("There is no document")).to_have_count(0)
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "removed.png"))
        browser.close()


# The cited passage's text as drawn: the text layer's words inside the passage's outline, their font sizes in CSS
# pixels (a word carries the size of the font it is printed in, scaled with the page); and what fitting means.
DRAWN = """() => {
  const outline = document.querySelector('.chunk').getBoundingClientRect();
  const sizes = Array.from(document.querySelectorAll('.text span')).filter(s => {
    const r = s.getBoundingClientRect(); const x = r.left + 2, y = r.top + r.height / 2;
    return x >= outline.left && x <= outline.right && y >= outline.top && y <= outline.bottom;
  }).map(s => parseFloat(getComputedStyle(s).fontSize)).sort((a, b) => a - b);
  const page = document.querySelector('.page').getBoundingClientRect();
  const bar = document.querySelector('.bar').getBoundingClientRect();
  const quote = document.querySelector('.quote').getBoundingClientRect();
  return {median: sizes[Math.floor(sizes.length / 2)], words: sizes.length, pageWidth: page.width,
          frameWidth: document.documentElement.clientWidth, scrollX: window.scrollX, bar: bar.height,
          quoteBelowBar: quote.top >= bar.bottom, outlines: document.querySelectorAll('.chunk').length};
}"""
# Select the red sentence's words in the text layer (from its first word to its last), as a reader's drag does.
SELECT_QUOTE = """() => {
  const lines = Array.from(document.querySelectorAll('.quote')).map(q => q.getBoundingClientRect());
  const words = Array.from(document.querySelectorAll('.text span')).filter(s => {
    const r = s.getBoundingClientRect(); const x = r.left + 2, y = r.top + r.height / 2;
    return lines.some(l => y >= l.top && y <= l.bottom && x >= l.left && x <= l.right);
  });
  const range = document.createRange();
  range.setStartBefore(words[0]); range.setEndAfter(words[words.length - 1]);
  getSelection().removeAllRanges(); getSelection().addRange(range);
  return getSelection().toString();
}"""


# Resolves once the frame's page image is drawn with over 1.4 times the pixels it first had (60 s at most).
REDRAWN = """(frame, first) => new Promise((ok, no) => { const start = Date.now(); (function wait() {
  const img = frame.contentDocument.querySelector('.page img');
  if (img.naturalWidth > 1.4 * first) ok(); else if (Date.now() - start > 60000) no('not redrawn');
  else setTimeout(wait, 200); })(); })"""


def open_chip(page: Any, answer: int, n: int) -> Any:
    """Click [n] of the answer-th answer; the viewer's frame once it has painted that citation."""
    from playwright.sync_api import expect

    page.get_by_test_id("stChatMessage").nth(2 * answer - 1).get_by_role("button", name=f"[{n}]", exact=True).first.click()
    frame = page.frame_locator(FRAME)
    expect(frame.locator(f"body[data-painted='1'] #quote-{n}-0")).to_be_attached(timeout=30_000)
    idle(page)
    return frame


def test_cited_text_is_legible_at_1366_and_a_selection_becomes_a_note(
    reading_app: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, _ = reading_app
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser, page = open_chat(playwright, url, {"width": 1366, "height": 768})
        ask(page, QUESTIONS[0])  # [1]: the warfarin row of a recommendations table (p. 11)
        ask(page, QUESTIONS[1])  # [1]: a row of a one-column table (p. 3); [2]: a sentence of the prose beside it

        measured = {}
        for answer, n, kind in ((1, 1, "table"), (2, 2, "prose")):
            if measured:  # the wide viewer covers the chat: a new session on the chat (the URL keeps it), without
                # the citation the URL also keeps (a reload would open it again), opens the next
                page.goto(re.sub(r"([?&])cite=[^&]*&?", r"\1", page.url).rstrip("?&"))
                idle(page)
            frame = open_chip(page, answer, n)
            drawn = page.frame_locator(FRAME).locator("body").evaluate(f"() => ({DRAWN})()")
            measured[kind] = drawn
            page.screenshot(path=str(SHOTS / f"viewer-{kind}-1366.png"))
            assert drawn["words"] >= 5, drawn
            assert drawn["median"] >= 11, f"the cited {kind}'s text is drawn at {drawn['median']} px: {drawn}"
            assert drawn["outlines"] == 1, "the passage is one outline"
            assert drawn["pageWidth"] <= drawn["frameWidth"] and drawn["scrollX"] == 0, "fitted: nothing cut off"
            assert drawn["bar"] < 40 and drawn["quoteBelowBar"], "the toolbar is one line and covers no cited text"
        print(f"legibility at 1366x768 (median px of the cited words): {measured}")

        # Zoomed in, the page is redrawn for the zoom (and the screen's pixel ratio) and swapped into the same frame.
        frame = page.frame_locator(FRAME)
        drawn_px = "() => document.querySelector('.page img').naturalWidth"
        first_px = frame.locator("body").evaluate(drawn_px)
        frame.locator("#zoom-in").click()
        frame.locator("#zoom-in").click()
        expect(frame.locator("#zoom-label")).to_have_text("156%")
        page.locator(FRAME).evaluate(REDRAWN, first_px)
        assert frame.locator("#zoom-label").inner_text() == "156%", "the frame was not reloaded: the zoom stays"
        frame.locator("#zoom-fit").click()

        # The reader's page turn keeps the fit; the full PDF opens at the page in view.
        page.locator(".st-key-source-viewer-doc-next button").first.click()
        expect(frame.locator(".where")).to_have_text("mosca-2011-women-cvd.pdf · page 4 of 20")
        expect(frame.locator("#zoom-label")).to_have_text("Fit")
        href = page.get_by_role("link", name="Open full PDF").get_attribute("href")
        assert href and href.endswith("#page=4")
        page.locator(".st-key-source-viewer-doc-prev button").first.click()
        expect(frame.locator("body[data-painted='1'] #quote-2-0")).to_be_attached(timeout=30_000)

        # Select the red sentence's first line in the text layer and keep it as a note.
        selected = frame.locator("body").evaluate(f"() => ({SELECT_QUOTE})()")
        assert selected.split()[:3] == ["Women", "have", "unique"] and len(selected.split()) >= 20, selected
        frame.locator("#save-selection").click()
        expect(page.get_by_text("Saved to notes: Passage from mosca-2011-women-cvd.pdf, p. 3")).to_be_visible(timeout=30_000)

        # Docked beside the chat, then full screen from the frame's own button.
        idle(page)
        page.locator(".st-key-source-viewer-wide-off button").first.click()
        idle(page)
        expect(page.locator(".st-key-source-viewer-wide-on button").first).to_be_visible()
        assert page.locator(FRAME).bounding_box()["width"] < 700, "beside the chat"
        page.screenshot(path=str(SHOTS / "viewer-beside-1366.png"))
        frame.locator("#full-screen").click()
        page.wait_for_function("() => document.fullscreenElement && document.fullscreenElement.tagName === 'IFRAME'")
        page.screenshot(path=str(SHOTS / "viewer-fullscreen-1366.png"))
        page.evaluate("() => document.exitFullscreen()")

        nav(page, "Notes").click()
        expect(page.get_by_role("heading", name="Notes", exact=True)).to_be_visible(timeout=60_000)
        card = page.locator("[class*='st-key-note-']").filter(has_text="Passage from mosca-2011-women-cvd.pdf, p. 3")
        expect(card.first).to_contain_text(" ".join(selected.split()[:3]))
        card.first.get_by_role("button", name="[1]", exact=True).click()
        notes_frame = page.frame_locator(".st-key-notes-viewer iframe")
        expect(notes_frame.locator("body[data-painted='1'] #quote-1-0")).to_be_attached(timeout=30_000)
        expect(notes_frame.locator(".where")).to_have_text("mosca-2011-women-cvd.pdf · page 3 of 20")
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / "viewer-passage-note-1366.png"))
        browser.close()
