"""The catalog is chosen by `WORKSPACE_CATALOG__URL`: empty is the SQLite file in the data dir; a postgresql:// URL
runs the whole application on that PostgreSQL database (the data dir keeps files and vectors, no catalog.sqlite)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from workspace_app.adapters.wiring import build_app
from workspace_app.config import Settings, load_settings
from workspace_app.errors import StorageError, WorkspaceError

URL = "postgresql://app:s3cret@127.0.0.1:1/workspace"


def settings_on(data_dir: Path, catalog_url: str) -> Settings:
    """Default settings (no environment: clean_environ cleared it; no .env) on a data dir and a catalog URL."""
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = data_dir
    settings.catalog.url = catalog_url
    return settings


def test_the_url_setting_takes_postgresql_urls_and_refuses_other_schemes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().catalog.url == ""
    monkeypatch.setenv("WORKSPACE_CATALOG__URL", URL)
    assert load_settings().catalog.url == URL
    monkeypatch.setenv("WORKSPACE_CATALOG__URL", "mysql://app:s3cret@db/workspace")
    with pytest.raises(WorkspaceError) as refused:
        load_settings()
    assert "WORKSPACE_CATALOG__URL" in refused.value.user_message and "s3cret" not in refused.value.user_message


def test_an_unreachable_postgresql_catalog_is_a_storage_error_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as failed:
        build_app(settings_on(tmp_path / "data", URL))
    message = failed.value.user_message
    assert "WORKSPACE_CATALOG__URL" in message and "127.0.0.1:1/workspace" in message and "s3cret" not in message


@pytest.mark.postgres
def test_the_application_runs_on_a_postgresql_catalog(
    postgres_url: str, embedder: Any, excerpt: Callable[..., Path], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    app = build_app(settings_on(data_dir, postgres_url), embedder=embedder)
    app.workspaces.create("Prevention")
    report = app.documents.ingest("Prevention", excerpt("mosca-2011-women-cvd.pdf", 10, 11), "women.pdf")
    assert report.status == "ready" and report.chunks > 0
    hits = app.search.search("Prevention", "aspirin for women", methods=("sparse",)).hits
    assert hits and all(hit.document_name == "women.pdf" for hit in hits)
    chat = app.chats.create_chat("Prevention")
    assert app.chats.get_chat("Prevention", chat.id).title == chat.title
    app.catalog.close()

    assert not (data_dir / "catalog.sqlite").exists()  # the catalog lives in PostgreSQL only
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT COUNT(*) FROM chunks").fetchone() == (report.chunks,)
        assert db.execute("SELECT COUNT(*) FROM graph_mentions").fetchone()[0] > 0  # the graph stage wrote there
    again = build_app(settings_on(data_dir, postgres_url), embedder=embedder)
    assert [d.name for d in again.documents.list("Prevention")] == ["women.pdf"]
    again_hits = again.search.search("Prevention", "aspirin for women", methods=("sparse",)).hits
    assert [h.chunk.id for h in again_hits] == [h.chunk.id for h in hits]
    again.catalog.close()


@pytest.mark.postgres
@pytest.mark.slow
def test_two_cli_processes_share_a_postgresql_catalog(cli: Callable[..., Any], postgres_url: str, tmp_path: Path) -> None:
    created = cli(tmp_path / "one", "workspace", "create", "Shared", WORKSPACE_CATALOG__URL=postgres_url)
    assert created.returncode == 0, created.stderr
    listed = cli(tmp_path / "two", "workspace", "list", "--json", WORKSPACE_CATALOG__URL=postgres_url)
    assert listed.returncode == 0, listed.stderr
    assert "Shared" in listed.stdout
    assert not (tmp_path / "one" / "catalog.sqlite").exists() and not (tmp_path / "two" / "catalog.sqlite").exists()
    refused = cli(tmp_path / "three", "workspace", "list", WORKSPACE_CATALOG__URL=URL)
    assert refused.returncode != 0 and "WORKSPACE_CATALOG__URL" in refused.stderr and "Traceback" not in refused.stderr
    assert json.dumps("s3cret") not in refused.stderr


def test_serve_hands_the_stores_it_read_from_a_dot_env_to_every_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_app.adapters.supervisor import child_specs

    launch, elsewhere = tmp_path / "launch", tmp_path / "elsewhere"
    launch.mkdir()
    elsewhere.mkdir()
    (launch / ".env").write_text(
        f"WORKSPACE_CATALOG__URL={URL}\nWORKSPACE_QUEUE__BACKEND=redis\n"
        f"WORKSPACE_QUEUE__REDIS_URL=redis://10.0.0.9:6379/2\nWORKSPACE_SHARED__DIR={tmp_path / 'shared'}\n"
        "WORKSPACE_SHARED__S3_URL=s3://team-files/prod\nWORKSPACE_SHARED__S3_ENDPOINT_URL=http://minio:9000\n"
        "WORKSPACE_SHARED__S3_ACCESS_KEY_ID=team\nWORKSPACE_SHARED__S3_SECRET_ACCESS_KEY=not-a-real-secret\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(launch)
    served = load_settings(tmp_path / "data")
    specs = child_specs(served, tmp_path / "data", "http://127.0.0.1:1", 8501, "token", api_port=8502)
    children = {spec.name: spec for spec in specs if spec.name != "chroma"}
    assert sorted(children) == ["api", "ui", "worker"]
    for name, spec in children.items():
        monkeypatch.chdir(launch if spec.cwd is None else elsewhere)  # the UI runs in the repository: no serve's .env
        with monkeypatch.context() as child_environ:
            for key, value in spec.env.items():
                child_environ.setenv(key, value)
            child = load_settings()
        assert child.catalog.url == served.catalog.url, name
        assert (child.queue.backend, child.queue.redis_url) == (served.queue.backend, served.queue.redis_url), name
        assert child.shared.dir == served.shared.dir, name
        assert child.shared.model_dump() == served.shared.model_dump(), name  # the same bucket, key and secret
        assert child.shared.s3_secret_access_key is not None
        assert child.shared.s3_secret_access_key.get_secret_value() == "not-a-real-secret", name
