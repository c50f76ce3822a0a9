"""The catalog is chosen by `WORKSPACE_CATALOG__URL`: empty is the SQLite file in the data dir; a postgresql:// URL
is refused at start, naming what PostgreSQL does not hold yet, before anything is opened or created."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.adapters.wiring import build_app
from workspace_app.config import load_settings
from workspace_app.errors import WorkspaceError
from workspace_app.storage.postgres.catalog import MISSING

URL = "postgresql://app:s3cret@127.0.0.1:1/workspace"


def test_the_url_setting_takes_postgresql_urls_and_refuses_other_schemes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().catalog.url == ""
    monkeypatch.setenv("WORKSPACE_CATALOG__URL", URL)
    assert load_settings().catalog.url == URL
    monkeypatch.setenv("WORKSPACE_CATALOG__URL", "mysql://app:s3cret@db/workspace")
    with pytest.raises(WorkspaceError) as refused:
        load_settings()
    assert "WORKSPACE_CATALOG__URL" in refused.value.user_message and "s3cret" not in refused.value.user_message


def test_a_postgresql_catalog_is_refused_at_start_naming_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WORKSPACE_CATALOG__URL", URL)
    settings = load_settings(tmp_path / "data")
    with pytest.raises(WorkspaceError) as refused:
        build_app(settings)
    message = refused.value.user_message
    assert all(missing in message for missing in MISSING) and "s3cret" not in message
    assert "Leave WORKSPACE_CATALOG__URL empty" in message
    assert not (tmp_path / "data").exists()  # nothing was created: no half-started app


@pytest.mark.slow
def test_the_cli_says_why_it_does_not_start_on_postgresql(cli: Callable[..., Any], tmp_path: Path) -> None:
    done = cli(tmp_path / "data", "workspace", "list", WORKSPACE_CATALOG__URL=URL)
    assert done.returncode != 0
    assert "PostgreSQL catalog does not hold everything" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "data" / "catalog.sqlite").exists()
