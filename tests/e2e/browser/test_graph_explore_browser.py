"""Exploring the Graph page in Chromium at 1366×768, on a workspace the CLI ingested from two guideline excerpts
(the HCM guideline's mavacamten pages and the syncope guideline's pages 8-9):
- the N best-connected entities are always named, large enough to read, with no name over another;
- Enter in Find centres on the best match; "Back to the whole graph" undoes it;
- a source filter composes with the centre (never "-1 neighbours" or an empty canvas);
- a click on a dot offers "Ask about X in chat", which opens the Chat page and answers the question there;
  "Centre on X" centres the graph.
Screenshots (graph-labels.png, graph-centred.png, graph-filtered.png, graph-menu.png, graph-asked.png) are kept in
the test's tmp_path."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from served import CHROMIUM_ARGS, require_chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEWPORT = {"width": 1366, "height": 768}
ALWAYS = 10  # Settings.ui.graph_labels' default

# Every drawn name's box (canvas units), the always-named ids and their names, and the name size on screen.
LABELS = """() => {
  const boxes = [], names = {};
  for (const node of nodes.get()) {
    const drawn = network.body.nodes[node.id];
    if (!node.label || !node.label.trim() || !drawn) continue;
    const s = drawn.labelModule.size;
    boxes.push([s.left, s.top, s.left + s.width, s.top + s.height]);
    names[node.id] = node.label;
  }
  const frame = document.getElementById("mynetwork"), outside = [];
  for (const [l, t, r, b] of boxes) {
    const a = network.canvasToDOM({x: l, y: t}), z = network.canvasToDOM({x: r, y: b});
    if (a.x < 0 || a.y < 0 || z.x > frame.clientWidth || z.y > frame.clientHeight) outside.push([l, t, r, b]);
  }
  return {px: Number(document.body.dataset.labelPx), always: JSON.parse(document.body.dataset.always), boxes, names,
          outside};
}"""

# Where a node's dot is, relative to the canvas element.
DOT = """(id) => network.canvasToDOM(network.getPositions([id])[id])"""


@pytest.fixture(scope="module")
def graph_url(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any], excerpt: Callable[..., Path]) -> Iterator[str]:
    """`workspace-app serve` on a data dir with workspace 'Cardiology' (two excerpts ingested by the CLI)."""
    require_chromium()
    folder = tmp_path_factory.mktemp("graph-explore")
    data = folder / "data"
    assert cli(data, "workspace", "create", "Cardiology").returncode == 0
    for name, first, last in (("ommen-2024-hcm.pdf", 38, 39), ("shen-2017-syncope.pdf", 8, 9)):
        done = cli(data, "ingest", "--workspace", "Cardiology", excerpt(name, first, last))
        assert done.returncode == 0, done.stderr
    with serving(data, folder) as url:
        yield url


@pytest.fixture
def page(graph_url: str) -> Iterator[Any]:
    """A Chromium page at 1366×768 on the Graph page of 'Cardiology', its network drawn and named."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.goto(graph_url)
        page.get_by_role("button", name="Open").click()
        expect(page.get_by_role("button", name="Current")).to_be_disabled()
        page.get_by_role("link", name="Graph").click()
        expect(page.get_by_role("heading", name="Graph", exact=True)).to_be_visible()
        wait_for_labels(page)
        yield page
        browser.close()


def network(page: Any) -> Any:
    return page.frame_locator(".st-key-graph-view iframe")


def wait_for_labels(page: Any) -> dict[str, Any]:
    """Wait until the (new) network has placed its names; what LABELS reads."""
    from playwright.sync_api import expect

    expect(network(page).locator("body[data-always]")).to_be_attached(timeout=60_000)
    return dict(network(page).locator("body").evaluate(f"() => ({LABELS})()"))


def settled(page: Any) -> dict[str, Any]:
    """Once the page's run is over and the network is in view: what LABELS reads (for a screenshot)."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=30_000)
    placed = wait_for_labels(page)
    page.locator(".st-key-graph-view").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    return placed


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def find(page: Any, text: str) -> None:
    """Type in Find and press Enter (nothing else)."""
    box = page.locator(".st-key-graph-search input")
    box.fill(text)
    box.press("Enter")


def click_dot(page: Any, node: str) -> Any:
    """Click the entity's dot on the canvas; its menu, once shown."""
    from playwright.sync_api import expect

    canvas = network(page).locator("#mynetwork canvas")
    canvas.scroll_into_view_if_needed()
    dot = network(page).locator("body").evaluate(f"(body, id) => ({DOT})(id)", node)
    canvas.click(position={"x": dot["x"], "y": dot["y"]})
    menu = network(page).locator("#node-menu")
    expect(menu).to_be_visible()
    return menu


def test_the_best_connected_entities_are_always_named_and_readable(page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    placed = wait_for_labels(page)
    # The degree of every drawn entity, from its tooltip ("... · degree N · ...").
    degrees = {i: int(re.search(r"degree (\d+)", title).group(1)) for i, title in network(page).locator("body").evaluate(
        "() => nodes.get().map(n => [n.id, n.title])")}
    assert len(degrees) > 40, "a graph large enough that not every entity can be named"
    expect(page.get_by_text(f"The {ALWAYS} best-connected entities are always named")).to_be_visible()
    always = placed["always"]
    assert len(always) == ALWAYS, placed["always"]
    assert all(placed["names"].get(i, "").strip() for i in always), "every always-named entity has its name drawn"
    top = sorted(degrees.values(), reverse=True)[ALWAYS - 1]
    assert all(degrees[i] >= top for i in always), "the always-named are the best-connected"
    assert placed["px"] >= 12, placed["px"]
    boxes = placed["boxes"]
    assert len(boxes) >= ALWAYS
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if overlap(a, b)], "names overlap"
    assert placed["outside"] == [], "names run out of the frame"
    settled(page)
    page.screenshot(path=str(tmp_path / "graph-labels.png"))


def test_enter_centres_on_the_best_match_and_back_returns_to_the_whole_graph(page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    whole = page.get_by_text(re.compile(r"^(Showing the \d+ best-connected of \d+ entities|\d+ entities), "))
    expect(whole).to_be_visible()
    everything = whole.inner_text()
    find(page, "mavacamten")
    expect(page.get_by_text(re.compile(r"^Centred on mavacamten and its \d+ neighbours?\."))).to_be_visible()
    expect(page.get_by_role("heading", name="mavacamten")).to_be_visible()
    expect(page.get_by_role("combobox", name="Entity")).to_have_value("mavacamten (drug)")
    settled(page)
    page.screenshot(path=str(tmp_path / "graph-centred.png"))
    page.get_by_role("button", name="Back to the whole graph").click()
    expect(page.get_by_text("Centred on")).to_have_count(0)
    expect(page.get_by_text(everything, exact=True)).to_be_visible()
    expect(page.locator(".st-key-graph-search input")).to_have_value("")
    expect(page.get_by_role("button", name="Back to the whole graph")).to_have_count(0)


def test_a_source_filter_composes_with_the_centre(page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    find(page, "mavacamten")
    centred = page.get_by_text(re.compile(r"^Centred on mavacamten and its (\d+) neighbours?\."))
    expect(centred).to_be_visible()
    # Only the syncope excerpt: it never names mavacamten.
    page.locator(".st-key-graph-documents").click()
    page.get_by_role("option", name=re.compile("shen-2017-syncope")).click()
    page.keyboard.press("Escape")
    expect(page.get_by_text(re.compile(r"^mavacamten is not mentioned in the chosen sources"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"-1 neighbour"))).to_have_count(0)
    expect(page.get_by_text(re.compile(r"^\d+ entities, |^Showing the \d+ best-connected"))).to_be_visible()
    expect(page.get_by_text("No passage of the chosen sources mentions it.")).to_be_visible()
    placed = settled(page)
    assert len(placed["names"]) >= ALWAYS, "the syncope source's graph is drawn, not an empty canvas"
    assert placed["outside"] == [], "names run out of the frame"
    page.screenshot(path=str(tmp_path / "graph-filtered.png"))
    # Only the HCM excerpt: centred again, on mavacamten's neighbours within that source.
    page.locator(".st-key-graph-documents input").click()
    page.keyboard.press("Backspace")  # removes the syncope source's chip
    page.get_by_role("option", name=re.compile("ommen-2024-hcm")).click()
    page.keyboard.press("Escape")
    expect(page.get_by_text(re.compile(r"^Centred on mavacamten and its \d+ neighbours?\."))).to_be_visible()
    expect(page.get_by_role("button", name="Back to the whole graph")).to_be_visible()


def test_a_dot_offers_to_ask_about_its_entity_in_chat(page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    wait_for_labels(page)
    menu = click_dot(page, "drug:mavacamten")  # named or not, its dot has the menu
    name = menu.locator("div").first.inner_text()
    assert name == "mavacamten"
    expect(menu.locator("button[data-action='ask']")).to_have_text(f"Ask about {name} in chat")
    page.screenshot(path=str(tmp_path / "graph-menu.png"))
    menu.locator("button[data-action='ask']").click()
    expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=30_000)
    question = f"Tell me about {name}."
    messages = page.locator("[data-testid='stChatMessage']")
    expect(messages.filter(has_text=question)).to_have_count(1, timeout=60_000)
    # Answered in the chat: the message after the question has the answer's words.
    expect(messages).to_have_count(2, timeout=120_000)
    expect(messages.nth(1)).to_contain_text(re.compile(r"[Mm]avacamten \w+ \w+"), timeout=120_000)
    expect(messages.nth(1).get_by_role("button", name="[1]")).to_be_visible()  # answered from the sources, cited
    page.wait_for_timeout(1000)
    page.screenshot(path=str(tmp_path / "graph-asked.png"))


def test_a_dots_menu_centres_the_graph_on_it(page: Any) -> None:
    from playwright.sync_api import expect

    menu = click_dot(page, wait_for_labels(page)["always"][1])
    name = menu.locator("div").first.inner_text()
    menu.locator("button[data-action='centre']").click()
    expect(page.get_by_text(re.compile(rf"^Centred on {re.escape(name)} and its \d+ neighbours?\."))).to_be_visible()
    expect(page.get_by_role("button", name=f"Ask about {name} in chat")).to_be_visible()
