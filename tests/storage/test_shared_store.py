"""What machines of one deployment share besides the servers: the files under `WORKSPACE_SHARED__DIR` (source files,
figure thumbnails, uploaded import files, worker beacons) or, with `WORKSPACE_SHARED__S3_URL`, in an S3-compatible
bucket (a real S3 HTTP server: tests/s3_server.py), and, with a PostgreSQL catalog, the embedding cache.

Two apps on two data dirs stand in for two machines: what one stores, the other reads with only its settings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import numpy as np
import psycopg
import pytest
from postgres_cluster import free_port
from s3_server import ACCESS_KEY, REGION, SECRET_KEY

from workspace_app.adapters.cli import main as cli_main
from workspace_app.adapters.liveness import WorkerBeacon, live_workers
from workspace_app.adapters.wiring import build_app, open_embedding_cache, shared_files
from workspace_app.config import Settings, load_settings
from workspace_app.errors import ObjectStoreError
from workspace_app.storage.postgres.embedding_cache import PostgresEmbeddingCache
from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache

FIGURES = ("shen-2017-syncope.pdf", 9, 9)  # the page of FIGURE 1, the syncope evaluation flowchart
EVENTS = """event_id,patient_id,timestamp,event_type,sub_type,content
k1,p1,2024-05-01 08:00:00,lab,chemistry,Potassium 3.1 mmol/L (low; ref 3.5-5.1)
k2,p1,2024-05-01 09:00:00,order,prescription,Potassium Chloride 40 mEq PO
"""


def settings_on(
    data_dir: Path, shared: Path | None = None, catalog_url: str = "", s3: dict[str, str] | None = None
) -> Settings:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = data_dir
    settings.shared = settings.shared.model_validate({"dir": shared, **(s3 or {})})
    settings.catalog.url = catalog_url
    return settings


def s3_settings(endpoint: str, bucket: str) -> dict[str, str]:
    """The shared.s3_* settings of a deployment whose files are in `bucket` (under a prefix) on `endpoint`."""
    return {
        "s3_url": f"s3://{bucket}/team", "s3_endpoint_url": endpoint, "s3_region": REGION,
        "s3_access_key_id": ACCESS_KEY, "s3_secret_access_key": SECRET_KEY,
    }


def bucket_keys(endpoint: str, bucket: str) -> list[str]:
    """Every key in the bucket, read with boto3 directly."""
    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
    )
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket).get("Contents", []))


@pytest.fixture
def machines(tmp_path: Path, embedder: Any) -> Iterator[Callable[..., Any]]:
    """machine(name, shared, catalog_url, s3): an app on its own data dir `<tmp>/<name>/data`."""
    built: list[Any] = []

    def _machine(name: str, shared: Path | None, catalog_url: str = "", s3: dict[str, str] | None = None) -> Any:
        app = build_app(settings_on(tmp_path / name / "data", shared, catalog_url, s3), embedder=embedder)
        built.append(app)
        return app

    yield _machine
    for app in built:
        app.catalog.close()
        app.documents.jobs.queue().close()


def test_the_shared_dir_is_the_data_dir_unless_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert load_settings(tmp_path / "data").shared_dir == tmp_path / "data"
    monkeypatch.setenv("WORKSPACE_SHARED__DIR", str(tmp_path / "mnt"))
    settings = load_settings(tmp_path / "data")
    assert settings.shared_dir == tmp_path / "mnt" and settings.storage.data_dir == tmp_path / "data"


def test_without_a_shared_dir_files_stay_in_the_data_dir(
    machines: Callable[..., Any], excerpt: Callable[..., Path], tmp_path: Path
) -> None:
    app = machines("one", None)
    app.workspaces.create("W")
    report = app.documents.submit("W", excerpt("mosca-2011-women-cvd.pdf", 3, 4))
    stored = app.documents.document_path(app.catalog.get_document(report.document_id))
    assert stored.parent == tmp_path / "one" / "data" / "files" and stored.is_file()


@pytest.mark.postgres
def test_a_file_stored_on_one_machine_is_ingested_on_another_from_the_shared_dir(
    machines: Callable[..., Any], excerpt: Callable[..., Path], postgres_url: str, tmp_path: Path
) -> None:
    shared = tmp_path / "mnt"
    front = machines("front", shared, postgres_url)
    worker = machines("worker", shared, postgres_url)
    front.workspaces.create("W")
    report = front.documents.submit("W", excerpt(*FIGURES))

    document = worker.catalog.get_document(report.document_id)
    stored = worker.documents.document_path(document)
    assert stored.parent == shared / "files" and stored.is_file()
    assert worker.documents.jobs.run(report.document_id, "worker@test:1:a", threading.Event()) == "ready"

    assert not (tmp_path / "front" / "data" / "files").exists()
    assert not (tmp_path / "worker" / "data" / "files").exists()
    figures = front.figures.document_figures("W", report.document_id)
    assert figures, "the excerpt has the syncope flowchart"
    thumbnails = sorted((shared / "files" / "thumbnails" / report.document_id).glob("*.png"))
    assert len(thumbnails) == sum(1 for figure in figures if figure.thumbnail) > 0
    for figure in figures:
        if figure.thumbnail:  # made by the worker's machine, shown by the front's
            assert front.figures.thumbnail("W", report.document_id, figure.id).startswith(b"\x89PNG")
    hits = front.search.search("W", "syncope evaluation", top_k=3).hits
    assert hits and {hit.chunk.document_id for hit in hits} == {report.document_id}


@pytest.mark.postgres
def test_import_uploads_and_worker_beacons_are_in_the_shared_dir(
    machines: Callable[..., Any], postgres_url: str, tmp_path: Path
) -> None:
    shared = tmp_path / "mnt"
    front = machines("front", shared, postgres_url)
    saved = front.patient_imports.save_upload("events.csv", b"patient_id,time,type,content\n")
    assert saved.parent == shared / "imports"
    with WorkerBeacon(shared, "worker@machine-b:123:abcdef", 0.2):
        seen = live_workers(front.settings.shared_dir, 5.0)
    assert [beat.owner for beat in seen] == ["worker@machine-b:123:abcdef"]


@pytest.mark.postgres
def test_a_document_stored_in_an_s3_bucket_is_ingested_and_shown_by_machines_with_empty_copies(
    machines: Callable[..., Any], excerpt: Callable[..., Path], postgres_url: str, s3_endpoint: str, s3_bucket: str,
    tmp_path: Path,
) -> None:
    s3 = s3_settings(s3_endpoint, s3_bucket)
    front, worker = machines("front", None, postgres_url, s3), machines("worker", None, postgres_url, s3)
    front.workspaces.create("W")
    pdf = excerpt(*FIGURES)
    report = front.documents.submit("W", pdf)
    sha = front.catalog.get_document(report.document_id).sha256
    assert bucket_keys(s3_endpoint, s3_bucket) == [f"team/files/{sha}.pdf"]

    assert worker.documents.jobs.run(report.document_id, "worker@test:1:a", threading.Event()) == "ready"
    assert (tmp_path / "worker" / "data" / "shared-cache" / "files" / f"{sha}.pdf").is_file(), "fetched on first use"
    thumbnails = [key for key in bucket_keys(s3_endpoint, s3_bucket) if key.startswith("team/files/thumbnails/")]
    assert thumbnails, "the worker's figure thumbnails are in the bucket"

    viewer = machines("viewer", None, postgres_url, s3)  # a third machine: nothing of this document on its disk
    image = viewer.documents.page_image("W", report.document_id, 1)
    assert image.png.startswith(b"\x89PNG") and image.pages == 1
    assert viewer.documents.file_bytes("W", report.document_id) == pdf.read_bytes()
    figures = [figure for figure in viewer.figures.document_figures("W", report.document_id) if figure.thumbnail]
    assert len(figures) == len(thumbnails)
    assert all(viewer.figures.thumbnail("W", report.document_id, f.id).startswith(b"\x89PNG") for f in figures)
    assert not any((tmp_path / name / "data" / "files").exists() for name in ("front", "worker", "viewer"))

    viewer.documents.remove("W", report.document_id)
    assert bucket_keys(s3_endpoint, s3_bucket) == [], "the file and its thumbnails leave the bucket with it"


@pytest.mark.postgres
def test_an_events_file_uploaded_on_one_machine_is_imported_by_a_worker_on_another_through_s3(
    machines: Callable[..., Any], postgres_url: str, s3_endpoint: str, s3_bucket: str, tmp_path: Path
) -> None:
    s3 = s3_settings(s3_endpoint, s3_bucket)
    front, worker = machines("front", None, postgres_url, s3), machines("worker", None, postgres_url, s3)
    saved = front.patient_imports.save_upload("ward.csv", EVENTS.encode())
    assert saved.parent == tmp_path / "front" / "data" / "shared-cache" / "imports"
    assert bucket_keys(s3_endpoint, s3_bucket) == [f"team/imports/{saved.name}"]
    queued = front.patient_imports.submit(saved)
    saved.unlink()  # the front's copy is on the front's machine: the worker's has nothing at the recorded path
    assert worker.patient_imports.run(queued.import_id, "worker@machine-b:1:a") == "done"
    assert (tmp_path / "worker" / "data" / "shared-cache" / "imports" / saved.name).read_bytes() == EVENTS.encode()
    assert worker.patient_imports.get(queued.import_id).status == "done"

    placed = tmp_path / "front" / "data" / "imports" / "ward-2.csv"  # put on the server by its operator
    placed.parent.mkdir(parents=True)
    placed.write_text(EVENTS, encoding="utf-8")
    assert front.patient_imports.submit_from_roots("ward-2.csv").path == str(placed), "the default import root stays"


def test_an_object_store_nobody_answers_is_said_in_words_by_the_app_and_the_cli(
    machines: Callable[..., Any], excerpt: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    s3 = {**s3_settings(nobody, "files"), "s3_timeout_s": "2"}
    app = machines("one", None, "", s3)
    app.workspaces.create("W")
    pdf = excerpt("mosca-2011-women-cvd.pdf", 3, 4)
    report = app.documents.submit("W", pdf)
    said = f"The object store s3://files/team at {nobody} is not answering"
    assert report.status == "failed" and report.document_id is None and report.error.startswith(said)
    assert "WORKSPACE_SHARED__S3_ENDPOINT_URL" in report.error
    assert app.documents.list("W") == [], "nothing is recorded for a file that was not stored"
    files, _, _ = shared_files(app.settings)
    with pytest.raises(ObjectStoreError, match="is not answering"):  # what a viewer opening a page hears
        files.path_for("ab" * 32, ".pdf")

    for name, value in s3.items():
        monkeypatch.setenv(f"WORKSPACE_SHARED__{name.upper()}", value)
    data = str(tmp_path / "cli")
    assert cli_main(["--data-dir", data, "workspace", "create", "W"]) == 0
    assert cli_main(["--data-dir", data, "ingest", "-w", "W", "--no-wait", str(pdf)]) == 1
    printed = capsys.readouterr()
    assert said in printed.out and "botocore" not in printed.out + printed.err
    assert "Traceback" not in printed.out + printed.err


def test_the_embedding_cache_is_a_file_in_the_data_dir_with_a_sqlite_catalog(tmp_path: Path) -> None:
    cache = open_embedding_cache(settings_on(tmp_path / "data"))
    try:
        assert isinstance(cache, SqliteEmbeddingCache) and (tmp_path / "data" / "embeddings.sqlite").is_file()
    finally:
        cache.close()


@pytest.mark.postgres
def test_the_embedding_cache_is_shared_through_a_postgresql_catalog(postgres_url: str, tmp_path: Path) -> None:
    one = open_embedding_cache(settings_on(tmp_path / "one", catalog_url=postgres_url))
    two = open_embedding_cache(settings_on(tmp_path / "two", catalog_url=postgres_url))
    assert isinstance(one, PostgresEmbeddingCache) and isinstance(two, PostgresEmbeddingCache)
    try:
        vector = np.arange(384, dtype=np.float32) / 384
        one.put_many("m", {"a": vector, "b": [0.5] * 384})
        one.put_many("m", {"a": np.zeros(384, dtype=np.float32)})  # an existing key is kept
        found = two.get_many("m", ["a", "b", "missing"])
        assert sorted(found) == ["a", "b"]
        assert np.array_equal(np.asarray(found["a"], dtype=np.float32), vector)
        assert two.get_many("other model", ["a"]) == {}
        many = {f"k{i}": [float(i)] * 4 for i in range(1200)}  # more keys than one query's batch
        two.put_many("n", many)
        assert len(one.get_many("n", list(many))) == 1200
    finally:
        one.close()
        two.close()
    assert not (tmp_path / "one" / "embeddings.sqlite").exists()
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT COUNT(*) FROM embedding_cache").fetchone() == (1202,)
