"""The shared files in an S3-compatible object store (storage/s3.py), against a real S3 HTTP server (moto's, started
by tests/s3_server.py): what one machine stores, another with its own empty copies reads; a store that cannot be
reached, or has no bucket, is an ObjectStoreError saying what to check.

Two stores on two cache folders stand in for two machines."""

from __future__ import annotations

import time
from pathlib import Path

import boto3
import pytest
from postgres_cluster import free_port
from s3_server import ACCESS_KEY, REGION, SECRET_KEY

from workspace_app.config import SharedSettings, load_settings
from workspace_app.errors import ObjectStoreError, WorkspaceError
from workspace_app.storage.files import sha256_of
from workspace_app.storage.s3 import S3Bucket, S3FileStore, S3ThumbnailStore, S3UploadFolder, parse_s3_url

PDF = b"%PDF-1.4 not really, but bytes are bytes\n" * 100


def shared(url: str, endpoint: str, timeout_s: float = 10.0) -> SharedSettings:
    return SharedSettings(
        s3_url=url, s3_endpoint_url=endpoint, s3_region=REGION, s3_access_key_id=ACCESS_KEY,
        s3_secret_access_key=SECRET_KEY, s3_timeout_s=timeout_s,  # type: ignore[arg-type]
    )


def objects(endpoint: str, bucket: str) -> list[str]:
    """Every key in the bucket, read with boto3 directly (what an operator's `aws s3 ls` would show)."""
    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
    )
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket).get("Contents", []))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "upload.pdf"
    path.write_bytes(PDF)
    return path


def test_a_file_is_stored_once_read_back_and_deleted(
    s3_endpoint: str, s3_bucket: str, source: Path, tmp_path: Path
) -> None:
    store = S3FileStore(S3Bucket(shared(f"s3://{s3_bucket}/team/", s3_endpoint)), tmp_path / "cache" / "files")
    sha, copy = store.put(source, ".pdf")
    assert sha == sha256_of(source) and copy == tmp_path / "cache" / "files" / f"{sha}.pdf"
    assert objects(s3_endpoint, s3_bucket) == [f"team/files/{sha}.pdf"]
    assert store.put(source, ".pdf") == (sha, copy)  # the same content: one object
    assert store.path_for(sha, ".pdf").read_bytes() == PDF

    store.delete(sha, ".pdf")
    assert objects(s3_endpoint, s3_bucket) == [] and not copy.exists()
    assert not store.path_for(sha, ".pdf").exists(), "a file the bucket does not have is missing, not an error"
    assert not list(copy.parent.glob(".incoming-*")), "no temporary file is left behind"


def test_what_one_machine_stores_another_reads_from_its_own_empty_copies(
    s3_endpoint: str, s3_bucket: str, source: Path, tmp_path: Path
) -> None:
    one, two = (S3Bucket(shared(f"s3://{s3_bucket}", s3_endpoint)) for _ in range(2))
    front, worker = tmp_path / "front", tmp_path / "worker"
    sha, _ = S3FileStore(one, front / "files").put(source, ".pdf")
    fetched = S3FileStore(two, worker / "files").path_for(sha, ".pdf")
    assert fetched == worker / "files" / f"{sha}.pdf" and fetched.read_bytes() == PDF

    made = b"\x89PNG made by the worker"
    name = S3ThumbnailStore(two, worker / "thumbnails").put_thumbnail("doca", "doca-fig000", made)
    shown = S3ThumbnailStore(one, front / "thumbnails").thumbnail_path("doca", name)
    assert shown == front / "thumbnails" / "doca" / name and shown.read_bytes() == made
    S3ThumbnailStore(one, front / "thumbnails").delete_thumbnails("doca")
    assert not S3ThumbnailStore(two, tmp_path / "third").thumbnail_path("doca", name).exists()

    saved = S3UploadFolder(one, front / "imports").save("1234abcd-events.csv", b"event_id,patient_id\n")
    saved.unlink()  # the front's copy is on the front's machine: the worker's has no file at the recorded path
    read = S3UploadFolder(two, worker / "imports").local_copy(saved)
    assert read == worker / "imports" / "1234abcd-events.csv" and read.read_bytes() == b"event_id,patient_id\n"
    elsewhere = tmp_path / "server" / "mimic"
    assert S3UploadFolder(two, worker / "imports").local_copy(elsewhere) == elsewhere, "a server path is its own"
    assert objects(s3_endpoint, s3_bucket) == [f"files/{sha}.pdf", "imports/1234abcd-events.csv"]


def test_a_missing_bucket_is_an_object_store_error_saying_to_create_it(
    s3_endpoint: str, source: Path, tmp_path: Path
) -> None:
    store = S3FileStore(S3Bucket(shared("s3://no-such-bucket", s3_endpoint)), tmp_path / "files")
    with pytest.raises(ObjectStoreError) as stored:
        store.put(source, ".pdf")
    assert "'no-such-bucket' does not exist" in stored.value.user_message
    assert "WORKSPACE_SHARED__S3_URL" in stored.value.user_message
    with pytest.raises(ObjectStoreError, match="does not exist"):
        S3FileStore(S3Bucket(shared("s3://no-such-bucket", s3_endpoint)), tmp_path / "two").path_for("ab" * 32, ".pdf")


def test_an_endpoint_nobody_answers_is_an_object_store_error_not_a_traceback(source: Path, tmp_path: Path) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    store = S3FileStore(S3Bucket(shared("s3://files", nobody, timeout_s=2)), tmp_path / "files")
    started = time.monotonic()
    with pytest.raises(ObjectStoreError) as raised:
        store.put(source, ".pdf")
    message = raised.value.user_message
    assert "not answering" in message and "WORKSPACE_SHARED__S3_ENDPOINT_URL" in message and nobody in message
    assert raised.value.status == 503 and raised.value.retryable
    assert "botocore" not in message and "Traceback" not in message
    assert time.monotonic() - started < 30, "a refused connection fails after a few quick retries"


def test_the_s3_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_s3_url("s3://bucket") == ("bucket", "")
    assert parse_s3_url("s3://bucket/a/b/") == ("bucket", "a/b/")
    monkeypatch.setenv("WORKSPACE_SHARED__S3_URL", "https://bucket.example.org")
    with pytest.raises(WorkspaceError, match="WORKSPACE_SHARED__S3_URL must be empty"):
        load_settings()
    monkeypatch.setenv("WORKSPACE_SHARED__S3_URL", "s3://bucket/prefix")
    monkeypatch.setenv("WORKSPACE_SHARED__S3_ACCESS_KEY_ID", "key")
    with pytest.raises(WorkspaceError, match="set both, or neither"):
        load_settings()
    monkeypatch.setenv("WORKSPACE_SHARED__S3_SECRET_ACCESS_KEY", "hunter2")
    settings = load_settings()
    assert settings.shared.s3_url == "s3://bucket/prefix" and "hunter2" not in repr(settings.shared)
