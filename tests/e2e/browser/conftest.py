"""Fixtures of the browser tests (helpers in served.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import require_chromium, serving


@pytest.fixture
def app_url(tmp_path: Path) -> Iterator[str]:
    """The real app on a free port with its data dir in tmp_path."""
    require_chromium()
    with serving(tmp_path / "data", tmp_path) as url:
        yield url
