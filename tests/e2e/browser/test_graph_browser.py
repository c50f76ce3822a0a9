"""A user in Chromium with every request to another host blocked: open the Graph page of a workspace ingested by
the CLI, see vis-network draw the entity graph on its canvas inside the iframe, find an entity and open a
passage that mentions it in the PDF viewer (screenshot graph.png in tmp_path). No outside request is attempted."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from offline_browser import OutsideRequests
from served import CHROMIUM_ARGS, require_chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Canvas pixels that are not blank: vis-network really drew the network.
PAINTED_PIXELS = """() => {
  const canvas = document.querySelector('#mynetwork canvas');
  if (!canvas) { return 0; }
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < data.length; i += 4) { if (data[i] > 0) { painted++; } }
  return painted;
}"""


@pytest.fixture
def graph_app(tmp_path: Path, cli: Callable[..., Any], excerpt: Callable[..., Path]) -> Iterator[str]:
    """`workspace-app serve` on a data dir where the CLI already ingested a syncope guideline excerpt."""
    require_chromium()
    data = tmp_path / "data"
    assert cli(data, "workspace", "create", "Cardiology").returncode == 0
    done = cli(data, "ingest", "--workspace", "Cardiology", excerpt("shen-2017-syncope.pdf", 8, 9))
    assert done.returncode == 0, done.stderr
    with serving(data, tmp_path) as url:
        yield url


# The drawn labels' boxes (canvas units) and their size on screen, from vis-network's own layout.
LABEL_BOXES = """() => {
  const boxes = [];
  for (const node of nodes.get()) {
    const drawn = network.body.nodes[node.id];
    if (!node.label || !node.label.trim() || !drawn) continue;
    const s = drawn.labelModule.size;
    boxes.push([s.left, s.top, s.left + s.width, s.top + s.height]);
  }
  return {px: Number(document.body.dataset.labelPx), boxes: boxes};
}"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_graph_page_draws_the_network_offline_and_opens_a_passage(graph_app: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    outside = OutsideRequests()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1500, "height": 1100})
        context.route("**/*", outside)
        page = context.new_page()
        page.goto(graph_app)
        page.get_by_role("button", name="Open").click()
        # The click is handled by a rerun of the Workspaces page; a page change requested before that rerun has
        # stored the choice interrupts it and the choice is lost. A user sees the card become current first.
        expect(page.get_by_role("button", name="Current")).to_be_disabled()
        page.get_by_role("link", name="Graph").click()
        expect(page.get_by_role("heading", name="Graph", exact=True)).to_be_visible()

        network = page.frame_locator("iframe[srcdoc*='vis.Network']")
        expect(network.locator("body[data-drawn-ms]")).to_be_attached(timeout=60_000)
        expect(network.locator("#mynetwork canvas")).to_be_visible()
        painted = network.locator("body").evaluate(f"() => ({PAINTED_PIXELS})()")
        assert painted > 2_000, f"only {painted} pixels drawn on the canvas"
        expect(page.get_by_text("relations").first).to_be_visible()
        # Labels sized to read at the fitted scale, none drawn over another.
        expect(network.locator("body[data-labels]")).to_be_attached(timeout=30_000)
        placed = network.locator("body").evaluate(f"() => ({LABEL_BOXES})()")
        assert placed["px"] >= 12 and len(placed["boxes"]) >= 5, placed
        boxes = placed["boxes"]
        assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if overlap(a, b)], "labels overlap"

        page.locator(".st-key-graph-search input").fill("orthostatic hypotension")
        page.locator(".st-key-graph-search input").press("Enter")  # centres on the best match
        expect(page.get_by_text(re.compile(r"^Centred on orthostatic hypotension "))).to_be_visible()
        expect(page.get_by_role("combobox", name="Entity")).to_have_value("orthostatic hypotension (disease)")
        page.locator("[class*='st-key-graph-passage-0'] button").click()
        # The chat's viewer: the whole document at the passage's page, the naming sentence boxed.
        viewer = page.frame_locator(".st-key-graph-viewer iframe")
        expect(viewer.locator("body[data-painted='1'] #quote-1-0")).to_be_attached(timeout=60_000)
        expect(viewer.locator(".where")).to_contain_text(" · page ")
        page.wait_for_timeout(1000)
        page.screenshot(path=str(tmp_path / "graph.png"), full_page=True)
        browser.close()
    assert outside.urls == [], f"requests to other hosts were attempted: {outside.urls}"
    assert (tmp_path / "graph.png").stat().st_size > 20_000
