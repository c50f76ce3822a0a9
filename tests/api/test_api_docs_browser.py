"""`/docs` in Chromium with every request to another host cut off: the page shows the routes, and it asked no
outside host for anything (it is offline by design, see the README's "Offline")."""

from __future__ import annotations

import re
import shutil

import pytest
from api_stack import Stack
from offline_browser import CHROMIUM_ARGS, OutsideRequests

pytestmark = [pytest.mark.browser, pytest.mark.slow]



def test_docs_page_renders_the_routes_offline(stack: Stack) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (make setup installs it)")
    from playwright.sync_api import expect, sync_playwright

    outside = OutsideRequests()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", outside)
            response = page.goto(f"{stack.open_url}/docs")
            assert response is not None and response.status == 200
            expect(page.get_by_role("heading", name="Workspace API")).to_be_visible()
            for route in ("/ask", "/v1/chat/completions", "/workspaces/{workspace}/notes/{note_id}", "/health"):
                expect(page.locator("code", has_text=re.compile(f"^{re.escape(route)}$")).first).to_be_visible()
            renaming = page.locator("li").filter(has=page.locator("span.m", has_text="PATCH"))
            expect(renaming.filter(has_text="/chats/{chat_id}")).to_contain_text("Rename a chat.")
            page.wait_for_load_state("networkidle")
        finally:
            browser.close()
    assert outside.urls == [], f"the docs page asked outside hosts: {outside.urls}"
