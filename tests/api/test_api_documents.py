"""Documents through the API: upload -> worker -> ready, list, get, file, page image, cancel, retry, remove, and
the uploads that cannot be used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from api_stack import MAX_FILE_MB, WORKSPACE, wait_settled
from test_api_basics import assert_error

pytestmark = pytest.mark.slow


def upload(client: httpx.Client, name: str, data: bytes, workspace: str = WORKSPACE) -> httpx.Response:
    return client.post(f"/workspaces/{workspace}/documents", files={"file": (name, data, "application/octet-stream")})


def test_uploaded_pdf_is_ingested_by_the_worker(client: httpx.Client, ready: dict[str, Any]) -> None:
    assert ready["pages"] == 2 and ready["chunks"] > 0 and ready["progress"] == 1.0
    listed = client.get(f"/workspaces/{WORKSPACE}/documents").json()
    assert [d["id"] for d in listed] == [ready["id"]]
    for key in (ready["id"], ready["name"]):
        assert client.get(f"/workspaces/{WORKSPACE}/documents/{key}").json()["id"] == ready["id"]
    assert_error(client.get(f"/workspaces/{WORKSPACE}/documents/nothing.pdf"), 404, "document_not_found")


def test_the_same_pdf_again_is_a_duplicate(client: httpx.Client, ready: dict[str, Any], pdf: Path) -> None:
    response = upload(client, "again.pdf", pdf.read_bytes())
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "duplicate" and response.json()["document"]["id"] == ready["id"]


def test_file_and_page_image_of_a_document(client: httpx.Client, ready: dict[str, Any], pdf: Path) -> None:
    stored = client.get(f"/workspaces/{WORKSPACE}/documents/{ready['id']}/file")
    assert stored.status_code == 200 and stored.content == pdf.read_bytes()
    assert stored.headers["content-type"] == "application/pdf"
    page = client.get(f"/workspaces/{WORKSPACE}/documents/{ready['id']}/pages/2.png")
    assert page.status_code == 200 and page.content.startswith(b"\x89PNG")
    assert page.headers["x-page-count"] == "2" and float(page.headers["x-page-width-pt"]) > 100
    assert "Page 3 does not exist" in assert_error(
        client.get(f"/workspaces/{WORKSPACE}/documents/{ready['id']}/pages/3.png"), 404, "page_not_found"
    )


def test_a_file_that_is_not_a_pdf_is_refused_with_the_reason(client: httpx.Client, ready: dict[str, Any]) -> None:
    response = upload(client, "notes.pdf", b"this is plain text, not a PDF")
    message = assert_error_with_document(response, 422)
    assert "not a PDF" in message
    empty = upload(client, "empty.pdf", b"")
    assert "empty" in assert_error_with_document(empty, 422).lower()
    assert empty.json()["document"] is None  # nothing of a refused upload is kept (the reason is in the answer)
    assert_error(client.get(f"/workspaces/{WORKSPACE}/documents/empty.pdf"), 404, "document_not_found")
    assert "docx" in assert_error_with_document(upload(client, "letter.docx", b"PK\x03\x04"), 422)


def assert_error_with_document(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == "failed" and body["error"]["message"]
    return str(body["error"]["message"])


def test_an_upload_over_the_limit_is_413_naming_it(client: httpx.Client, ready: dict[str, Any]) -> None:
    response = upload(client, "big.pdf", b"%PDF-1.7\n" + b"0" * ((MAX_FILE_MB + 1) << 20))
    assert response.status_code == 413, response.text
    assert f"{MAX_FILE_MB:.1f} MB" in response.json()["error"]["message"] or "limit" in response.json()["error"]["message"]
    assert_error(upload(client, "a.pdf", b"%PDF", workspace="Nowhere"), 404, "workspace_not_found")


def test_cancel_then_retry_then_remove(client: httpx.Client, ready: dict[str, Any], excerpt: Any) -> None:
    other = excerpt("eckel-2013-lifestyle.pdf", 5, 6).read_bytes()
    queued = upload(client, "eckel.pdf", other).json()["document"]
    cancelled = client.post(f"/workspaces/{WORKSPACE}/documents/{queued['id']}/cancel")
    if cancelled.status_code == 200:  # the worker may have finished it already; then cancel is refused
        assert cancelled.json()["status"] in ("cancelled", "running", "queued")
        wait_settled(client, WORKSPACE)
    doc = client.get(f"/workspaces/{WORKSPACE}/documents/{queued['id']}").json()
    if doc["status"] == "cancelled":
        retried = client.post(f"/workspaces/{WORKSPACE}/documents/{queued['id']}/retry")
        assert retried.status_code == 200 and retried.json()["status"] in ("queued", "running")
        assert [d["status"] for d in wait_settled(client, WORKSPACE)].count("ready") == 2
    assert "only failed or cancelled" in assert_error(
        client.post(f"/workspaces/{WORKSPACE}/documents/{queued['id']}/retry"), 400
    )
    assert client.delete(f"/workspaces/{WORKSPACE}/documents/{queued['id']}").status_code == 200
    assert [d["id"] for d in client.get(f"/workspaces/{WORKSPACE}/documents").json()] == [ready["id"]]
