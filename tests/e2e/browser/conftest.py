"""Fixtures of the browser tests (helpers in served.py)."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from served import require_chromium, serving

SERVE_LOG_TAIL = 120  # lines of the app's log shown under a failed browser test


@pytest.fixture
def app_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The real app on a free port with its data dir in tmp_path."""
    require_chromium()
    request.node.serve_log = tmp_path / "serve.log"
    with serving(tmp_path / "data", tmp_path) as url:
        yield url


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed browser test shows the end of the app's log (what the server did while the page went wrong)."""
    report = yield
    log = getattr(item, "serve_log", None)
    if report.when == "call" and report.failed and log is not None and log.exists():
        tail = log.read_text(errors="replace").splitlines()[-SERVE_LOG_TAIL:]
        report.sections.append((f"serve.log (last {SERVE_LOG_TAIL} lines)", "\n".join(tail)))
    return report
