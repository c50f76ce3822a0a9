"""Fixtures of the API tests: real processes (Chroma server, worker, `workspace-app api`) on a data dir in
tmp_path, talked to over HTTP with httpx. Two API processes share the data dir (both Chroma clients):

    open_api     no keys, the offline extractive answerer (what `workspace-app api` is out of the box)
    guarded_api  WORKSPACE_API__KEYS set, and a language model: a local server speaking the OpenAI protocol
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_stack import (
    HASHED_KEY,
    KEY,
    MAX_FILE_MB,
    PDF,
    WORKSPACE,
    Api,
    Process,
    Stack,
    environ,
    start_chroma,
    start_worker,
    wait_settled,
)
from fake_openai import fake_openai_server


def evidence_reply(request: dict[str, Any]) -> str:
    """The scripted model's answer: the first sentence of evidence block 1, cited [1] (a supported claim)."""
    prompt = request["messages"][-1]["content"]
    block = prompt.split("Evidence blocks:\n", 1)[1].split("\n\n[", 1)[0]
    text = block.split("]", 1)[1].strip() if "]" in block else block
    first = text.replace("\n", " ").split(". ")[0].strip().rstrip(".")
    return f"{first}. [1]"


@pytest.fixture(scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Chroma, a worker and the two API processes, started once per catalog for the API tests: the SQLite file in
    the data dir, then a PostgreSQL database of the session's cluster (tests/postgres_cluster.py) shared by all."""
    root = tmp_path_factory.mktemp(f"api-stack-{request.param}")
    data_dir = root / "data"
    catalog = {}
    if request.param == "postgres":
        cluster = request.getfixturevalue("postgres_cluster")
        catalog = {"WORKSPACE_CATALOG__URL": cluster.url(cluster.create_database())}
    chroma, url, token = start_chroma(root)
    common = {
        "WORKSPACE_CHROMA_URL": url, "WORKSPACE_STORAGE__CHROMA_TOKEN": token,
        "WORKSPACE_INGEST__MAX_FILE_MB": str(MAX_FILE_MB), "WORKSPACE_QUEUE__POLL_MAX_DELAY_S": "0.1", **catalog,
    }
    children: list[Process | Api] = [chroma]
    with fake_openai_server() as fake:
        fake.replies = [evidence_reply]
        hashed = "sha256:" + hashlib.sha256(HASHED_KEY.encode()).hexdigest()
        try:
            children.append(start_worker(data_dir, environ(**common)))
            open_api = Api(data_dir, environ(**common), "api-open")
            guarded_api = Api(data_dir, environ(**common, WORKSPACE_API__KEYS=f"{KEY}, {hashed}",
                                               OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake.url), "api-guarded")
            children += [open_api, guarded_api]
            open_api.wait_ready()
            guarded_api.wait_ready()
            yield Stack(open_api.url, guarded_api.url, data_dir, fake, common)
        finally:
            for child in reversed(children):
                child.stop()


@pytest.fixture(scope="session")
def client(stack: Stack) -> Iterator[httpx.Client]:
    """httpx on the open API."""
    with httpx.Client(base_url=stack.open_url, timeout=120, trust_env=False) as http:
        yield http


@pytest.fixture(scope="session")
def guarded(stack: Stack) -> Iterator[httpx.Client]:
    """httpx on the guarded API, sending the plain key."""
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=stack.guarded_url, timeout=120, headers=headers, trust_env=False) as http:
        yield http


@pytest.fixture(scope="session")
def pdf(excerpt: Callable[[str, int, int], Path]) -> Path:
    """Two pages of a corpus guideline (warfarin and atrial fibrillation in women)."""
    return excerpt(*PDF)


@pytest.fixture(scope="session")
def ready(client: httpx.Client, pdf: Path) -> dict[str, Any]:
    """The workspace with the PDF uploaded through the API and ingested by the worker: the ready document."""
    assert client.post("/workspaces", json={"name": WORKSPACE}).status_code == 201
    with pdf.open("rb") as stream:
        response = client.post(f"/workspaces/{WORKSPACE}/documents", files={"file": (pdf.name, stream, "application/pdf")})
    assert response.status_code == 202, response.text
    # Queued, or already running: an idle worker may take the job before the response is written.
    assert response.json()["document"]["status"] in {"queued", "running"}
    documents = wait_settled(client, WORKSPACE)
    assert [d["status"] for d in documents] == ["ready"], documents
    return documents[0]
