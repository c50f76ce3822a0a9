"""An API of its own, with no worker, whose vector store goes away: /health reports the worker absent (a 503 only
while a job waits for one), turns 503 naming the vector store once it is down; and CORS when origins are set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_stack import Api, Process, environ, start_chroma

pytestmark = pytest.mark.slow
ORIGIN = "https://portal.example.org"


@pytest.fixture(scope="module")
def lone_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, Process]]:
    """An API (CORS for ORIGIN) and its own Chroma server, no worker (the health test, last, stops Chroma)."""
    tmp_path = tmp_path_factory.mktemp("lone-api")
    chroma, url, token = start_chroma(tmp_path)
    env = environ(WORKSPACE_CHROMA_URL=url, WORKSPACE_STORAGE__CHROMA_TOKEN=token, WORKSPACE_API__CORS_ORIGINS=ORIGIN)
    api = Api(tmp_path / "data", env)
    try:
        yield api.wait_ready(), chroma
    finally:
        api.stop()
        chroma.stop()


def test_cors_allows_the_configured_origin_only(lone_api: tuple[Api, Process]) -> None:
    api, _ = lone_api
    with httpx.Client(base_url=api.url, timeout=60, trust_env=False) as client:
        preflight = client.options("/ask", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == ORIGIN
        other = client.get("/workspaces", headers={"Origin": "https://elsewhere.example"})
        assert "access-control-allow-origin" not in other.headers
        assert client.get("/workspaces", headers={"Origin": ORIGIN}).headers["access-control-allow-origin"] == ORIGIN


def test_an_absent_worker_fails_health_only_while_a_job_waits(lone_api: tuple[Api, Process], pdf: Path) -> None:
    api, _ = lone_api
    with httpx.Client(base_url=api.url, timeout=60, trust_env=False) as client:
        idle = client.get("/health")
        assert idle.status_code == 200, idle.text
        assert idle.json()["checks"]["worker"]["status"] == "absent" and "failing" not in idle.json()
        assert client.post("/workspaces", json={"name": "Waiting"}).status_code == 201
        with pdf.open("rb") as stream:
            queued = client.post("/workspaces/Waiting/documents", files={"file": (pdf.name, stream, "application/pdf")})
        assert queued.status_code == 202, queued.text
        waiting = client.get("/health")
        assert waiting.status_code == 503 and waiting.json()["failing"] == ["worker"], waiting.text
        assert "no worker is running" in waiting.json()["checks"]["worker"]["detail"]
        assert client.post(f"/workspaces/Waiting/documents/{queued.json()['document']['id']}/cancel").status_code == 200
        assert client.get("/health").json()["checks"]["worker"]["status"] == "absent"
        assert client.delete("/workspaces/Waiting").status_code == 204


def test_health_is_503_naming_the_vector_store_when_it_is_down(lone_api: tuple[Api, Process]) -> None:
    api, chroma = lone_api
    with httpx.Client(base_url=api.url, timeout=60, trust_env=False) as client:
        assert client.post("/workspaces", json={"name": "Solo"}).status_code == 201
        healthy = client.get("/health")
        assert healthy.status_code == 200 and "vectors in 'Solo'" in healthy.json()["checks"]["vectors"]["detail"]
        chroma.stop()
        down = client.get("/health")
        assert down.status_code == 503, down.text
        assert down.json()["status"] == "unavailable" and down.json()["failing"] == ["vectors"]
        assert down.json()["checks"]["vectors"]["status"] == "down"
        assert down.json()["checks"]["worker"]["status"] == "absent"
        assert client.get("/workspaces").status_code == 200  # what needs only the catalog still works
