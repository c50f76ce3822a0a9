"""A user in Chromium on chats and notes (issue 12, items 2, 5 and 6), against `workspace-app serve` on a data dir
holding two workspaces, one with pages 10-11 of the women's prevention guideline (ingested once, by the CLI):
- the URL keeps the workspace and the chat: a reload and a bookmark opened in a fresh browser land where you were;
- chat management: the rename and delete popovers close after their action, a double click on "Delete chat"
  deletes one chat, never the next one;
- notes: a saved answer shows it was saved and cannot be saved twice, a follow-up's note is titled by its
  standalone question, notes of one's own in Markdown can be edited, and deleting asks first.
Screenshots go to tmp_path and, for a person to look at, to /tmp/chatnotes-*.png.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from served import CHROMIUM_ARGS, CLI, open_page, require_chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WORKSPACE = "Women's prevention"
FIRST = "What aspirin regimen does the women's prevention guideline suggest?"
FOLLOW_UP = "And what about those aged 65 or older?"
SHOTS = Path("/tmp")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, excerpt: Callable[..., Path]) -> Iterator[tuple[str, Path]]:
    """(URL, data dir) of the served app: 'Women's prevention' with one guideline excerpt, and an empty 'Other'."""
    require_chromium()
    folder = tmp_path_factory.mktemp("chatnotes")
    data = folder / "data"
    cli = [str(CLI), "--data-dir", str(data)]
    for name in (WORKSPACE, "Other"):
        subprocess.run([*cli, "workspace", "create", name], check=True, capture_output=True, cwd=folder)
    source = excerpt("mosca-2011-women-cvd.pdf", 10, 11)
    subprocess.run([*cli, "ingest", "-w", WORKSPACE, str(source)], check=True, capture_output=True, cwd=folder)
    with serving(data, folder) as url:
        warm_up(url)
        yield url, data


def warm_up(url: str) -> None:
    """Load the app once, until its navigation shows: a cold start on a deep link (/chat) draws the page without
    the top navigation (Streamlit, seen on main too); every later load has it."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(url)
        expect(page.get_by_test_id("stTopNav")).to_be_visible(timeout=90_000)
        browser.close()


def count(data: Path, sql: str) -> int:
    """A number from the app's catalog (read while the app runs; the catalog is in WAL mode)."""
    with sqlite3.connect(data / "catalog.sqlite") as db:
        return int(db.execute(sql).fetchone()[0])


def workspace_id(data: Path, name: str) -> str:
    with sqlite3.connect(data / "catalog.sqlite") as db:
        return str(db.execute("SELECT id FROM workspaces WHERE name = ?", (name,)).fetchone()[0])


def new_chat(page: Any, data: Path) -> str:
    """Click 'New chat' and wait until the page shows it (its id in the URL, the run finished); returns its id."""
    from playwright.sync_api import expect

    before = count(data, "SELECT COUNT(*) FROM chats")
    page.get_by_test_id("stSidebar").get_by_role("button", name="New chat").click()
    for _ in range(100):
        if count(data, "SELECT COUNT(*) FROM chats") == before + 1:
            break
        page.wait_for_timeout(100)
    with sqlite3.connect(data / "catalog.sqlite") as db:
        newest = str(db.execute("SELECT id FROM chats ORDER BY created_at DESC LIMIT 1").fetchone()[0])
    expect(page).to_have_url(re.compile(f"chat={newest}"))
    settle(page)
    return newest


def settle(page: Any) -> None:
    """Wait until Streamlit finished the current run (a click during a run can be lost)."""
    from playwright.sync_api import expect

    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60_000)


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)


def params(page: Any) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlparse(page.url).query).items()}


def ask(page: Any, question: str, answers_before: int) -> None:
    """Type a question and wait for its answer's disclaimer.

    The question is typed again when no message appeared for it: a run the page started after `settle` returned
    (a click's `st.rerun`, late under load) redraws the chat input and drops what was typed into it.
    """
    from playwright.sync_api import expect

    messages = page.get_by_test_id("stChatMessage")
    before = messages.count()
    for _ in range(3):
        box = page.get_by_test_id("stChatInputTextArea")
        expect(box).to_be_editable(timeout=60_000)
        box.fill(question)
        box.press("Enter")
        try:
            expect(messages).not_to_have_count(before, timeout=20_000)
            break
        except AssertionError:
            settle(page)
    try:
        expect(page.get_by_text("For clinical reference only")).to_have_count(answers_before + 1, timeout=120_000)
    except AssertionError:
        # Seen once in a full run (never alone, nor under CPU load): keep what the page showed for whoever looks.
        page.screenshot(path="/tmp/chatnotes-ask-timeout.png", full_page=True)
        Path("/tmp/chatnotes-ask-timeout.txt").write_text(page.inner_text("body"), encoding="utf-8")
        raise
    settle(page)


def open_chat(page: Any, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stTopNav")).to_be_visible()


def shoot(page: Any, tmp_path: Path, name: str) -> Path:
    page.wait_for_timeout(800)
    page.screenshot(path=str(tmp_path / name), full_page=True)
    shutil.copy(tmp_path / name, SHOTS / f"chatnotes-{name}")
    return tmp_path / name


def test_reload_and_bookmark_land_in_the_workspace_and_chat(site: tuple[str, Path], tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, data = site
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        open_chat(page, f"{url}/chat")
        expect(page.get_by_text("Open or create a workspace first")).to_be_visible()  # two workspaces, none named
        page.get_by_role("link", name="Go to Workspaces").click()
        card = page.locator(".stVerticalBlock", has_text=WORKSPACE).filter(has=page.get_by_role("button", name="Open"))
        card.last.get_by_role("button", name="Open").click()
        expect(page.get_by_text(f"Now working in {WORKSPACE}")).to_be_visible()
        assert params(page).get("workspace") == workspace_id(data, WORKSPACE)
        open_page(page, "Chat", "Chat")
        ask(page, FIRST, 0)
        expect(page).to_have_url(re.compile(r"[?&]chat=\w+"))
        here = params(page)
        assert here["workspace"] == workspace_id(data, WORKSPACE) and len(here["chat"]) == 12

        page.reload()
        expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=30_000)
        expect(page.get_by_text(FIRST)).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Open or create a workspace first")).to_have_count(0)
        assert params(page) == here
        shoot(page, tmp_path, "url-reloaded.png")

        bookmark = page.url
        fresh = browser.new_context(viewport={"width": 1500, "height": 1000}).new_page()
        open_chat(fresh, bookmark)
        expect(fresh.get_by_text(FIRST)).to_be_visible(timeout=30_000)
        assert params(fresh) == here
        shoot(fresh, tmp_path, "url-bookmark.png")
        browser.close()


def test_chat_popovers_close_and_a_double_click_deletes_one_chat(site: tuple[str, Path], tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, data = site
    ws = workspace_id(data, WORKSPACE)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        open_chat(page, f"{url}/chat?workspace={ws}")
        sidebar = page.get_by_test_id("stSidebar")
        settle(page)
        for _ in range(3):
            current = new_chat(page, data)
        chats = count(data, "SELECT COUNT(*) FROM chats")
        assert params(page)["chat"] == current

        sidebar.get_by_role("button", name="Rename").click()
        name = page.get_by_label("Chat name")
        name.fill("Aspirin questions")
        page.get_by_role("button", name="Save name").click()
        expect(page.get_by_text("Renamed to Aspirin questions")).to_be_visible()
        expect(page.get_by_role("button", name="Save name")).to_have_count(0)  # the popover closed
        with sqlite3.connect(data / "catalog.sqlite") as db:
            assert db.execute("SELECT title FROM chats WHERE id = ?", (current,)).fetchone()[0] == "Aspirin questions"

        sidebar.get_by_role("button", name="Delete").click()
        confirm = page.get_by_role("button", name="Delete chat")
        expect(page.get_by_text("Delete Aspirin questions and all its answers?")).to_be_visible()
        confirm.dblclick()
        expect(page.get_by_text("Chat deleted.")).to_be_visible()
        page.wait_for_timeout(2500)  # what a second click could still have done
        expect(page.get_by_role("button", name="Delete chat")).to_have_count(0)  # the popover closed
        assert count(data, "SELECT COUNT(*) FROM chats") == chats - 1, "one click's chat deleted, not the next one"
        assert count(data, f"SELECT COUNT(*) FROM chats WHERE id = '{current}'") == 0
        assert params(page).get("chat") != current
        shoot(page, tmp_path, "chats-after-delete.png")
        browser.close()


def test_notes_saved_once_titled_by_the_standalone_question_and_own_notes_edited(
    site: tuple[str, Path], tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, data = site
    ws = workspace_id(data, WORKSPACE)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        open_chat(page, f"{url}/chat?workspace={ws}")
        settle(page)
        new_chat(page, data)
        ask(page, FIRST, 0)
        ask(page, FOLLOW_UP, 1)
        notes_before = count(data, "SELECT COUNT(*) FROM notes")
        save = page.get_by_role("button", name="Save to notes").last
        save.click()
        expect(page.get_by_text("Saved to notes.")).to_be_visible()
        saved = page.get_by_role("button", name="Saved to notes")
        expect(saved).to_have_count(1)
        expect(saved).to_be_disabled()
        expect(page.get_by_role("button", name="Save to notes")).to_have_count(1)  # the first answer's, still unsaved
        assert count(data, "SELECT COUNT(*) FROM notes") == notes_before + 1
        shoot(page, tmp_path, "notes-saved-in-chat.png")

        page.get_by_role("link", name="Notes").click()
        expect(page.get_by_role("heading", name="Notes", exact=True)).to_be_visible()
        standalone = f"{FIRST} {FOLLOW_UP}"
        expect(page.get_by_text(standalone, exact=True)).to_be_visible()
        with sqlite3.connect(data / "catalog.sqlite") as db:
            title, record = db.execute("SELECT title, answer FROM notes ORDER BY created_at DESC").fetchone()
        assert title == standalone and json.loads(record)["question"] == FOLLOW_UP

        settle(page)  # the Notes page's run is over: a form submitted during it can be lost under load
        page.get_by_text("New note").click()
        page.get_by_label("Title").fill("Ask about BP")
        page.get_by_label("Note (Markdown)").fill("**Check blood pressure** before aspirin.\n\n- women ≥65")
        page.get_by_role("button", name="Add note").click()
        expect(page.get_by_text("Note added.")).to_be_visible()
        own = page.locator("[class*='st-key-note-']", has_text="Ask about BP").first
        expect(own.locator("strong", has_text="Check blood pressure")).to_be_visible()  # Markdown rendered

        settle(page)
        own.get_by_role("button", name="Edit", exact=True).click()
        expect(page.get_by_label("Your note (Markdown)")).to_be_visible()
        settle(page)
        page.get_by_label("Your note (Markdown)").fill("**Check blood pressure** first; aim below 140/90.")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.get_by_text("Note saved.")).to_be_visible()
        expect(page.get_by_label("Your note (Markdown)")).to_have_count(0)  # the editor closes once the run ends
        expect(page.get_by_text("aim below 140/90")).to_be_visible()

        own = page.locator("[class*='st-key-note-']", has_text="Ask about BP").first
        settle(page)
        own.get_by_role("button", name="Delete", exact=True).click()
        expect(page.get_by_text("Delete the note Ask about BP? This cannot be undone.")).to_be_visible()
        settle(page)
        shoot(page, tmp_path, "notes-delete-asks.png")
        page.get_by_role("button", name="Cancel").click()
        expect(page.get_by_text("Delete the note Ask about BP?")).to_have_count(0)
        expect(page.get_by_text("aim below 140/90")).to_be_visible()
        assert count(data, "SELECT COUNT(*) FROM notes WHERE title = 'Ask about BP'") == 1, "Cancel keeps it"
        settle(page)
        own.get_by_role("button", name="Delete", exact=True).click()
        expect(page.get_by_role("button", name="Delete permanently")).to_be_visible()
        settle(page)
        page.get_by_role("button", name="Delete permanently").click()
        expect(page.get_by_text("Note deleted.")).to_be_visible()
        expect(page.get_by_text("aim below 140/90")).to_have_count(0)
        assert count(data, "SELECT COUNT(*) FROM notes WHERE title = 'Ask about BP'") == 0
        shoot(page, tmp_path, "notes-page.png")
        browser.close()
