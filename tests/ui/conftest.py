"""Fixtures shared by the UI tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from workspace_app.accounts.service import AccountService
from workspace_app.config import AccountsSettings

DEMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "clinical" / "mimic-iv-demo"
AF_PATIENT = "10025463"  # coded with atrial fibrillation, prescribed warfarin
APP = Path(__file__).resolve().parents[2] / "app.py"
ACCOUNT_PASSWORD = "a long enough password"  # every test user's


@pytest.fixture(scope="session")
def af_patient_data(
    tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]
) -> Path:
    """A data dir with workspace 'AF' (the HCM guideline's AF pages) and the AF demo patient imported, built once
    for the Graph page's and the Chat page's patient tests."""
    if not (DEMO / "hosp" / "admissions.csv.gz").is_file():
        pytest.skip(f"the MIMIC-IV demo is not at {DEMO.resolve()}")
    folder = tmp_path_factory.mktemp("af-patient")
    service = build(folder / "data")
    service.workspaces.create("AF")
    assert service.documents.ingest("AF", excerpt("ommen-2024-hcm.pdf", 47, 48), "hcm-af.pdf").status == "ready"
    service.patients.import_path(DEMO, [AF_PATIENT])
    return folder / "data"


@pytest.fixture
def accounts_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: Callable[..., Any]
) -> Iterator[SimpleNamespace]:
    """The app the UI opens, with accounts on (its settings from the environment): `service`, its account `store`,
    and `user(name)`, which adds a user who signs in with `sign_in(name)`."""
    data = tmp_path / "data"
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data))
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__ENABLED", "true")
    monkeypatch.setenv("WORKSPACE_ACCOUNTS__PASSWORD_COST", "1024")
    monkeypatch.chdir(tmp_path)
    service = build(data)
    settings = AccountsSettings(enabled=True, password_cost=1024)
    rows = service.catalog.accounts  # users, memberships, keys and the audit log
    store = AccountService(rows, rows, rows, rows, service.catalog, settings)
    st.cache_resource.clear()  # the UI builds its own app from the environment above
    yield SimpleNamespace(service=service, store=store, user=lambda name: store.add_user(name, ACCOUNT_PASSWORD))
    st.cache_resource.clear()


@pytest.fixture
def sign_in() -> Callable[[str], AppTest]:
    """sign_in(name): the app after the user signed in with the local form."""

    def _sign_in(name: str) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=120).run()
        at.text_input(key="account-name").input(name)
        at.text_input(key="account-password").input(ACCOUNT_PASSWORD)
        at.button(key="account-submit").click().run()
        assert not at.exception
        return at

    return _sign_in
