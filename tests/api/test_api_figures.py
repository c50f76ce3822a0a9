"""Figures through the API: a document's figures with page and box, a figure's thumbnail, search results that say
which hits are figures, and the 404s of what is not there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_stack import wait_settled
from test_api_basics import assert_error

pytestmark = pytest.mark.slow

FIGURES = "Figures"
FLOWCHART = ("shen-2017-syncope.pdf", 9, 9)  # one page holding a flowchart (FIGURE 1 Syncope Initial Evaluation)


@pytest.fixture(scope="module")
def flowchart(client: httpx.Client, excerpt: Callable[[str, int, int], Path]) -> dict[str, Any]:
    """The flowchart's page uploaded to a workspace of its own and ingested by the worker."""
    assert client.post("/workspaces", json={"name": FIGURES}).status_code == 201
    path = excerpt(*FLOWCHART)
    with path.open("rb") as stream:
        response = client.post(f"/workspaces/{FIGURES}/documents", files={"file": (path.name, stream, "application/pdf")})
    assert response.status_code == 202, response.text
    documents = wait_settled(client, FIGURES)
    assert [d["status"] for d in documents] == ["ready"], documents
    return documents[0]


def test_a_documents_figures_come_with_page_box_and_thumbnail(client: httpx.Client, flowchart: dict[str, Any]) -> None:
    listed = client.get(f"/workspaces/{FIGURES}/documents/{flowchart['id']}/figures")
    assert listed.status_code == 200, listed.text
    figures = listed.json()
    assert len(figures) >= 1
    figure = figures[0]
    assert figure["label"].startswith("Figure") and figure["caption"] and figure["page"] == 1
    # Linked to the entities its caption names ("FIGURE 1 Syncope Initial Evaluation"): ids of the graph's entities.
    assert any(e["name"].lower() == "syncope" for e in figure["entities"]), figure["entities"]
    assert all(e["id"] and e["type"] for e in figure["entities"])
    rect = figure["rect"]
    assert rect["page"] == 1 and 0 <= rect["x0"] < rect["x1"] and 0 <= rect["y0"] < rect["y1"]
    picture = client.get(f"/workspaces/{FIGURES}/documents/{flowchart['id']}/figures/{figure['id']}.png")
    assert picture.status_code == 200 and picture.content.startswith(b"\x89PNG")
    assert picture.headers["content-type"] == "image/png"
    assert_error(client.get(f"/workspaces/{FIGURES}/documents/{flowchart['id']}/figures/nothing.png"), 404,
                 "document_not_found")
    assert_error(client.get(f"/workspaces/{FIGURES}/documents/nothing.pdf/figures"), 404, "document_not_found")


def test_search_says_which_hits_are_figures(client: httpx.Client, flowchart: dict[str, Any]) -> None:
    found = client.get(f"/workspaces/{FIGURES}/search", params={"q": "syncope evaluation algorithm"})
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["results"] and all(hit["type"] == "passage" for hit in body["results"])
    assert body["figures"] and body["figures"][0]["type"] == "figure"
    assert body["figures"][0]["document_id"] == flowchart["id"] and body["figures"][0]["rect"]["page"] == 1
    none = client.get(f"/workspaces/{FIGURES}/search", params={"q": "syncope", "figures": 0}).json()
    assert none["figures"] == []
