"""A throwaway S3-compatible server for the tests of the shared files in an object store, registered as a plugin by
tests/conftest.py.

moto's standalone server (`python -m moto.server`, the `dev` extra) in its own process on a free loopback port: real
HTTP, boto3 talking to it exactly as to MinIO or AWS (never moto's in-process `mock_aws`, which patches boto3). Each
test module that asks for `s3_endpoint` gets its own server; `s3_bucket` makes a fresh bucket on it for one test.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_process import running
from postgres_cluster import free_port

ACCESS_KEY = "test-access-key"  # moto accepts any credentials; they are given as a deployment would give them
SECRET_KEY = "test-secret-key"
REGION = "us-east-1"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/moto-api/", timeout=1) as response:
            return int(response.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of an S3-compatible server of this module's own, stopped after it."""
    pytest.importorskip("moto.server", reason="moto's server is not installed (pip install -e '.[dev]')")
    log_path: Path = tmp_path_factory.mktemp("s3") / "moto.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with running(argv, lambda: _answers(url), log_path, f"moto's S3 server on port {port}", 60):
        yield url


@pytest.fixture
def s3_bucket(s3_endpoint: str) -> str:
    """A new, empty bucket on the module's server (made with boto3 as an operator would); its name."""
    import boto3

    name = f"shared-{uuid.uuid4().hex[:12]}"
    client = boto3.session.Session().client(
        "s3", endpoint_url=s3_endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    client.create_bucket(Bucket=name)
    return name
