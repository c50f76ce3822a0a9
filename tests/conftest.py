"""Fixtures shared by every test."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's WORKSPACE_* or OPENAI_* settings (as httpx's `clean_environ`)."""
    for name in list(os.environ):
        if name.startswith(("WORKSPACE_", "OPENAI_")):
            monkeypatch.delenv(name)
