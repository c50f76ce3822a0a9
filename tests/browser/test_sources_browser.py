"""A user in Chromium: start `workspace-app serve`, create a workspace, drop two guideline excerpts and a corrupt
file on the Sources page, and watch them end ready and failed without reloading (screenshot in tmp_path)."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CLI = Path(sys.executable).parent / "workspace-app"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with LOOPBACK.open(f"{url}/_stcore/health", timeout=2) as response:
            return response.read() == b"ok"
    except OSError:
        return False


@pytest.fixture
def app_url(tmp_path: Path) -> Iterator[str]:
    """The real app (`serve`: Chroma, worker, UI) on a free port with its data dir in tmp_path."""
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (make setup installs it)")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with open(tmp_path / "serve.log", "wb") as log:
        process = subprocess.Popen(
            [str(CLI), "--data-dir", str(tmp_path / "data"), "serve", "--port", str(port)],
            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        while not healthy(url):
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "serve did not become healthy"
            time.sleep(0.3)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
        expect(page.get_by_text("Queued 3 files for ingestion")).to_be_visible(timeout=30_000)
        summary = page.get_by_text("3 sources ·")
        expect(summary).to_contain_text("2 ready", timeout=240_000)
        expect(summary).to_contain_text("1 failed")
        expect(page.get_by_text("corrupt scan <draft>.pdf is not a readable PDF")).to_be_visible()
        for path in files[:2]:
            row = page.locator(".stVerticalBlock", has_text=path.name).filter(has=page.get_by_text("Ready")).last
            expect(row).to_be_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "sources.png"), full_page=True)
        browser.close()
    assert (tmp_path / "sources.png").stat().st_size > 10_000
