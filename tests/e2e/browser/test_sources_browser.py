"""A user in Chromium: start `workspace-app serve`, create a workspace, drop two guideline excerpts and a corrupt
file on the Sources page, and watch them end ready and failed without reloading in one list (the unreadable file
unticked, with no Retry); drop a file again and see it reported as a duplicate (screenshot in tmp_path, copied to
/tmp/workspace-screenshots/sources-list.png)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from served import CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = Path("/tmp/workspace-screenshots")

def test_upload_two_guidelines_and_a_corrupt_file_through_the_page(
    app_url: str, tmp_path: Path, excerpt: Callable[..., Path]
) -> None:
    from playwright.sync_api import expect, sync_playwright

    corrupt = tmp_path / "corrupt scan <draft>.pdf"
    corrupt.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    files = [excerpt("shen-2017-syncope.pdf", 10, 14), excerpt("mosca-2011-women-cvd.pdf", 3, 7), corrupt]

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1360, "height": 1100})
        page.goto(app_url)

        page.locator(".st-key-create-workspace-name input").fill("Cardiology guidelines")
        page.locator(".st-key-create-workspace-submit button").click()
        expect(page.get_by_text("Now working in").or_(page.get_by_text("Created workspace"))).to_be_visible()
        page.get_by_role("link", name="Sources").click()
        expect(page.get_by_role("heading", name="Sources")).to_be_visible()

        page.locator("input[type=file]").set_input_files([str(path) for path in files])
        # the damaged file is checked before it is queued: it fails at once, with its reason in its row
        expect(page.get_by_text("Queued 2 files for ingestion; 1 file could not be read")).to_be_visible(timeout=30_000)
        summary = page.get_by_text("3 sources ·")
        expect(summary).to_contain_text("2 ready", timeout=240_000)
        expect(summary).to_contain_text("1 failed")
        expect(page.get_by_text("corrupt scan <draft>.pdf is not a readable PDF")).to_be_visible()
        for path in files[:2]:
            row = page.locator(".stVerticalBlock", has_text=path.name).filter(has=page.get_by_text("Ready")).last
            expect(row).to_be_visible()
        failed = page.locator("[class*='st-key-sources-row-']").filter(has_text=corrupt.name)
        expect(failed.get_by_text("Failed")).to_be_visible()
        expect(failed.get_by_role("button", name="Retry")).to_have_count(0)  # the same bytes would fail again
        expect(failed.get_by_role("checkbox")).not_to_be_checked()
        expect(page.locator("[data-testid='stDataFrame']")).to_have_count(0)  # one list, not a table and cards

        page.locator("input[type=file]").set_input_files([str(files[0])])
        # the box stays until dismissed (the toast that also says so lasts a few seconds and can be missed under load)
        expect(page.get_by_text("1 file already in this workspace, not added again")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("3 sources ·")).to_be_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "sources.png"), full_page=True)
        browser.close()
    assert (tmp_path / "sources.png").stat().st_size > 10_000
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(tmp_path / "sources.png", SHOTS / "sources-list.png")
