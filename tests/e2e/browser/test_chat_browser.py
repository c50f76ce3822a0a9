"""A user in Chromium: start `workspace-app serve`, upload an English and a Chinese guideline excerpt on the
Sources page, ask in Chat, click [1], and see the cited page in the viewer with the passage highlighted
(screenshots in tmp_path: chat-en.png, chat-zh.png)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from served import CHROMIUM_ARGS, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ENGLISH = "What pause during carotid sinus massage counts as carotid sinus hypersensitivity?"
CHINESE = "急诊指南里阵发性房颤是怎么定义的？持续时间一般多长？"


def viewer(page: Any) -> Any:
    """The source viewer's frame beside the chat."""
    return page.frame_locator(".st-key-source-viewer iframe").first


def ask_and_open_first_citation(page: Any, question: str, answers_before: int) -> Any:
    from playwright.sync_api import expect

    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    chips = page.get_by_role("button", name="[1]", exact=True)
    expect(chips).to_have_count(answers_before + 1, timeout=120_000)
    chips.last.click()
    frame = viewer(page)
    highlight = frame.locator("[id^='quote-1-']").first
    expect(highlight).to_be_attached(timeout=60_000)
    return frame


def test_ask_click_citation_and_see_the_highlighted_page(
    app_url: str, tmp_path: Path, excerpt: Callable[..., Path]
) -> None:
    from playwright.sync_api import expect, sync_playwright

    files = [excerpt("shen-2017-syncope.pdf", 8, 9), excerpt("zh-acute-af-ed-2024.pdf", 2, 2)]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(app_url)
        page.locator(".st-key-create-workspace-name input").fill("Cardiology")
        page.locator(".st-key-create-workspace-submit button").click()
        expect(page.get_by_text("Created workspace")).to_be_visible()
        page.get_by_role("link", name="Sources").click()
        page.locator("input[type=file]").set_input_files([str(path) for path in files])
        expect(page.get_by_text("2 sources ·")).to_contain_text("2 ready", timeout=240_000)

        open_page(page, "Chat", "Chat")
        expect(page.get_by_text("Answering from 2 of 2 ready sources")).to_be_visible()
        frame = ask_and_open_first_citation(page, ENGLISH, 0)
        expect(frame.locator("[id^='chunk-1-']").first).to_be_attached()
        expect(frame.get_by_text("shen-2017-syncope-p8-9.pdf · page")).to_be_visible()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(tmp_path / "chat-en.png"), full_page=True)

        ask_and_open_first_citation(page, CHINESE, 1)
        expect(page.get_by_text("阵发性房颤").first).to_be_visible()
        page.wait_for_timeout(2000)
        page.screenshot(path=str(tmp_path / "chat-zh.png"), full_page=True)
        browser.close()
    assert (tmp_path / "chat-en.png").stat().st_size > 20_000
    assert (tmp_path / "chat-zh.png").stat().st_size > 20_000
