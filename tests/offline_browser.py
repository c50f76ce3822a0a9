"""Chromium as the browser tests launch it, and a guard for pages that must work offline: every request to a host
other than this machine is aborted and remembered, so a test can assert that none was attempted."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


class OutsideRequests:
    """A Playwright route handler (`page.route("**/*", guard)`): lets local requests through, aborts the rest and
    keeps their URLs in `urls`."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, route: Any) -> None:
        if urlparse(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.urls.append(route.request.url)
            route.abort()
