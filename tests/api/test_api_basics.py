"""Health, workspaces, the offline docs, the error shape and bad input, against a real `workspace-app api`."""

from __future__ import annotations

import re
import subprocess

import httpx
import pytest
from api_stack import CLI, HASHED_KEY, Stack, environ, wait_until

pytestmark = pytest.mark.slow


def assert_error(response: httpx.Response, status: int, code: str | None = None) -> str:
    """The response is our error shape with this status; returns its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body["error"]) == {"code", "message"}, body
    assert body["error"]["message"].strip()
    if code is not None:
        assert body["error"]["code"] == code, body
    return str(body["error"]["message"])


def test_health_names_each_part_and_the_version(client: httpx.Client) -> None:
    wait_until(lambda: client.get("/health").json()["checks"]["worker"]["status"] == "ok", 120,
               "the worker's heartbeat")  # the worker loads its model while the API starts
    response = client.get("/health")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ok" and re.fullmatch(r"\d+\.\d+\.\d+.*", body["version"])
    assert set(body["checks"]) == {"catalog", "vectors", "queue", "worker"}
    assert all(check["status"] == "ok" for check in body["checks"].values())
    assert body["checks"]["worker"]["detail"].startswith("1 alive (last heartbeat ")


def test_workspaces_create_list_rename_delete(client: httpx.Client) -> None:
    created = client.post("/workspaces", json={"name": "Scratch A"})
    assert created.status_code == 201 and created.json()["name"] == "Scratch A"
    assert_error(client.post("/workspaces", json={"name": "Scratch A"}), 409, "workspace_exists")
    assert "Scratch A" in [w["name"] for w in client.get("/workspaces").json()]
    renamed = client.patch("/workspaces/Scratch A", json={"name": "Scratch B"})
    assert renamed.status_code == 200 and renamed.json()["id"] == created.json()["id"]
    assert client.get(f"/workspaces/{created.json()['id']}").json()["name"] == "Scratch B"
    assert client.delete("/workspaces/Scratch B").status_code == 204
    assert_error(client.get("/workspaces/Scratch B"), 404, "workspace_not_found")
    assert_error(client.delete("/workspaces/Scratch B"), 404)


def test_bad_input_gets_a_clear_error_in_one_shape(client: httpx.Client) -> None:
    not_json = client.post("/ask", content=b'{"question": ', headers={"Content-Type": "application/json"})
    assert "not valid JSON" in assert_error(not_json, 400, "invalid_json")
    message = assert_error(client.post("/ask", json={"question": ""}), 422, "invalid_request")
    assert "question" in message
    assert "mode" in assert_error(client.post("/ask", json={"question": "x", "mode": "fast"}), 422)
    assert "name" in assert_error(client.post("/workspaces", json={"name": "   "}), 400)
    assert_error(client.post("/workspaces", json={}), 422)
    assert_error(client.get("/no/such/route"), 404, "not_found")
    assert_error(client.put("/workspaces"), 405)
    assert_error(client.post("/ask", json={"question": "x", "workspace": "Nowhere"}), 404, "workspace_not_found")
    assert_error(client.get("/workspaces/Nowhere/documents"), 404, "workspace_not_found")


def test_a_huge_body_is_refused_with_413(client: httpx.Client) -> None:
    huge = b'{"question": "' + b"a" * (3 << 20) + b'"}'
    message = assert_error(client.post("/ask", content=huge, headers={"Content-Type": "application/json"}), 413)
    assert "limit" in message
    assert client.get("/health").status_code == 200  # the server is fine afterwards


def test_docs_page_is_self_contained_and_lists_the_routes(client: httpx.Client) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", page.text), "the docs page loads an outside asset"
    for route in ("/ask", "/v1/chat/completions", "/workspaces/{workspace}/documents", "/health"):
        assert route in page.text
    schema = client.get("/openapi.json").json()
    assert schema["openapi"].startswith("3.") and "/ask" in schema["paths"]


def test_a_non_loopback_address_without_keys_is_refused(tmp_path: pytest.TempPathFactory, stack: Stack) -> None:
    done = subprocess.run(
        [*CLI, "--data-dir", str(stack.data_dir), "api", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True, text=True, timeout=60, env=environ(), cwd=str(stack.data_dir.parent), check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "WORKSPACE_API__KEYS" in done.stderr and "0.0.0.0" in done.stderr


def test_keys_guard_every_route_but_health(stack: Stack, guarded: httpx.Client) -> None:

    with httpx.Client(base_url=stack.guarded_url, timeout=30, trust_env=False) as anonymous:
        assert anonymous.get("/health").status_code == 200
        for method, path in (("GET", "/workspaces"), ("POST", "/ask"), ("GET", "/docs"), ("GET", "/openapi.json"),
                             ("GET", "/v1/models")):
            response = anonymous.request(method, path, json={"question": "x"} if method == "POST" else None)
            assert_error(response, 401, "api_key")
            assert response.headers["www-authenticate"] == "Bearer"
        assert_error(anonymous.get("/workspaces", headers={"Authorization": "Bearer wrong"}), 401)
        assert anonymous.get("/workspaces", headers={"Authorization": f"Bearer {HASHED_KEY}"}).status_code == 200
    assert guarded.get("/workspaces").status_code == 200
    assert HASHED_KEY not in (stack.data_dir.parent / "api-guarded.log").read_text()


def test_cors_is_off_unless_origins_are_set(client: httpx.Client) -> None:
    response = client.get("/workspaces", headers={"Origin": "https://elsewhere.example"})
    assert "access-control-allow-origin" not in response.headers
