"""A user in Chromium builds a briefing in the Notes page's studio (issue 29 item 5), against `workspace-app serve`
on a data dir holding pages 10-11 of the women's prevention guideline: progress shows while it is built, it is kept
as a note ("Built in the studio") listing the recommendations with their class, level and page, its chips open the
cited page in the panel, the Markdown download is offered, and "Add as source" makes the note a ready source. Screenshots at 1366×768 go to tmp_path and, for a
person to look at, to /tmp/workspace-screenshots/studio-*.png."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from served import CHROMIUM_ARGS, CLI, open_page, require_chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WORKSPACE = "Women's prevention"
SHOTS = Path("/tmp/workspace-screenshots")


def test_a_briefing_is_built_kept_as_a_note_and_its_chips_open_the_cited_page(
    tmp_path: Path, excerpt: Callable[..., Path]
) -> None:
    from playwright.sync_api import expect, sync_playwright

    require_chromium()
    data = tmp_path / "data"
    cli = [str(CLI), "--data-dir", str(data)]
    subprocess.run([*cli, "workspace", "create", WORKSPACE], check=True, capture_output=True, cwd=tmp_path)
    source = excerpt("mosca-2011-women-cvd.pdf", 10, 11)
    subprocess.run([*cli, "ingest", "-w", WORKSPACE, str(source)], check=True, capture_output=True, cwd=tmp_path)
    with serving(data, tmp_path) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(url)
        expect(page.get_by_test_id("stTopNav")).to_be_visible(timeout=90_000)
        open_page(page, "Notes", "Notes", timeout_ms=90_000)
        expect(page.get_by_text("No notes yet. Build one in the studio")).to_be_visible()
        page.locator(".st-key-studio").get_by_role("button", name="Briefing", exact=True).click()
        expect(page.get_by_text("Briefing: Women's prevention” saved to your notes.")).to_be_visible(timeout=180_000)
        note = page.locator("[class*='st-key-note-']").filter(has_text="Built in the studio").first
        expect(note).to_be_visible()
        expect(note.get_by_text(source.name).first).to_be_visible()  # the heading of its section
        expect(note.get_by_text(re.compile(r"\(Class I, LOE A; p\. [12]\)")).first).to_be_visible()  # the excerpt's pages
        expect(page.get_by_role("button", name="Download “Briefing: Women's prevention” (Markdown)")).to_be_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "studio-briefing.png"), full_page=False)

        note.get_by_role("button", name="[1]", exact=True).click()
        expect(page.locator(".st-key-notes-viewer iframe").first).to_be_visible(timeout=60_000)
        expect(page.locator(".st-key-notes-viewer").get_by_text(re.compile(r"p\. [12]\b")).first).to_be_visible()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(tmp_path / "studio-cited.png"), full_page=False)

        # Below 1440 px the viewer opens wide, over the notes: "Beside" docks it next to them again.
        page.locator(".st-key-notes-viewer-wide-off button").first.click()
        note.get_by_role("button", name="Add as source").click()
        expect(page.get_by_text("added to the sources; it is being read")).to_be_visible(timeout=60_000)
        open_page(page, "Sources", "Sources", timeout_ms=60_000)
        expect(page.get_by_text("2 sources ·")).to_contain_text("2 ready", timeout=180_000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "studio-note-as-source.png"), full_page=False)
        browser.close()

    with sqlite3.connect(data / "catalog.sqlite") as db:
        title, body = db.execute("SELECT title, body FROM notes").fetchone()
        status = db.execute("SELECT status FROM documents WHERE name = ?", ("Briefing Women's prevention.md",)).fetchone()
    assert status == ("ready",), "the note is a ready source of the workspace"
    assert title == f"Briefing: {WORKSPACE}" and re.search(r"\(Class I, LOE A; p\. [12]\) \[1\]", body)
    SHOTS.mkdir(exist_ok=True)
    for name in ("studio-briefing.png", "studio-cited.png", "studio-note-as-source.png"):
        assert (tmp_path / name).stat().st_size > 20_000
        shutil.copy(tmp_path / name, SHOTS / name)
