"""A user in Chromium: upload a guideline excerpt, read its source guide on the Sources page, open the empty
chat, see the guide and the suggested questions, click one and get an answer with citations (screenshots:
sources-guide.png, chat-greeting.png and suggested-question.png in tmp_path, copied to /tmp/workspace-screenshots/)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from served import CHROMIUM_ARGS, print_console_errors

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path("/tmp/workspace-screenshots")


def test_click_a_suggested_question_and_get_a_cited_answer(
    app_url: str, tmp_path: Path, excerpt: Callable[..., Path]
) -> None:
    from playwright.sync_api import expect, sync_playwright

    source = excerpt("mosca-2011-women-cvd.pdf", 10, 11)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        print_console_errors(page)
        page.goto(app_url)
        page.locator(".st-key-create-workspace-name input").fill("Women CVD")
        page.locator(".st-key-create-workspace-submit button").click()
        expect(page.get_by_text("Created workspace")).to_be_visible()
        page.get_by_role("link", name="Sources").click()
        page.locator("input[type=file]").set_input_files([str(source)])
        expect(page.get_by_text("1 source ·")).to_contain_text("1 ready", timeout=240_000)

        page.get_by_text("Source guide").click()
        expect(page.get_by_text("Key recommendations")).to_be_visible()
        expect(page.get_by_text("Class I, Level A").first).to_be_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "sources-guide.png"), full_page=True)

        page.get_by_role("link", name="Chat").click()
        expect(page.get_by_text("Questions your sources answer")).to_be_visible(timeout=120_000)
        questions = page.locator("[class*='st-key-greeting-question-'] button")
        expect(questions.first).to_be_visible()
        asked = questions.first.locator("p").first.inner_text().strip()  # the label, not its icon
        assert asked.endswith("?")
        expect(page.get_by_text("Your sources", exact=True)).to_be_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "chat-greeting.png"), full_page=True)
        questions.first.click()

        expect(page.get_by_role("button", name="[1]", exact=True)).to_have_count(1, timeout=120_000)
        expect(page.get_by_test_id("stChatMessage").filter(has_text=asked).first).to_be_visible()
        expect(page.get_by_text("Questions your sources answer")).to_have_count(0)  # the chat is no longer empty
        page.wait_for_timeout(1000)
        page.screenshot(path=str(tmp_path / "suggested-question.png"), full_page=True)
        browser.close()

    SHOTS.mkdir(exist_ok=True)
    for name in ("sources-guide.png", "chat-greeting.png", "suggested-question.png"):
        assert (tmp_path / name).stat().st_size > 20_000
        shutil.copy(tmp_path / name, SHOTS / name)
