"""`workspace-app api`: build the App, load the embedding model, serve the API with uvicorn until stopped.

Loopback by default. Another address lets other machines in, so it needs API keys (`WORKSPACE_API__KEYS`): without
them the command refuses to start (exit code 2). The App is warmed before the port opens (`App.warm_up`: the
embedding models loaded, and the warm-up questions answered in up to three workspaces, which loads what the first
answer would otherwise pay for: vector collections, jieba, the lexicon, the answerer's fitted models and word lists,
the graph), so once `/health` answers the first ask is about as fast as the next ones (bench/streaming.py measures
it).
"""

from __future__ import annotations

import logging
import sys

from workspace_app.adapters.api.access import ApiKeys
from workspace_app.adapters.api.routes_ask import DEFAULT_MODE
from workspace_app.config import Settings
from workspace_app.errors import WorkspaceError

HOST = "127.0.0.1"
REFUSED = 2

log = logging.getLogger("workspace_app.api")


def open_problem(settings: Settings, host: str) -> str | None:
    """Why the API must not listen on `host` with these settings, or None."""
    from workspace_app.adapters.supervisor import is_loopback

    if is_loopback(host) or ApiKeys(settings.api.keys).enabled or settings.accounts.enabled:
        return None  # with accounts on, every route but /health needs a user's own key
    return (
        f"The API would listen on {host}, where other machines can reach it, without keys. Set WORKSPACE_API__KEYS "
        "(comma-separated keys, or sha256:<hex> of each), or leave out --host to listen on 127.0.0.1 only."
    )


def listen_url(host: str, port: int) -> str:
    """The URL of the address the API listens on, as given (0.0.0.0 stays 0.0.0.0: every address of the machine)."""
    shown = f"[{host}]" if ":" in host else host
    everywhere = "  (every address of this machine)" if host in ("0.0.0.0", "::") else ""
    return f"http://{shown}:{port}{everywhere}"


def run_api(settings: Settings, host: str = HOST, port: int | None = None) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit code (2 when refused)."""
    import uvicorn

    from workspace_app.adapters.api import create_api
    from workspace_app.adapters.wiring import build_app

    problem = open_problem(settings, host)
    if problem:
        print(f"workspace-app api: {problem}", file=sys.stderr, flush=True)
        return REFUSED
    # Requests must not wait on a hung Chroma server: the API's client gives up after a few seconds (the worker's waits).
    app = build_app(settings, role="workspace-app api", chroma_timeout_s=settings.storage.chroma_timeout_s)
    try:
        warmed = app.warm_up(DEFAULT_MODE, suggestions=False)  # before the port opens: see the module's docstring
    except WorkspaceError as exc:
        print(f"workspace-app api: {exc.user_message}", file=sys.stderr, flush=True)
        return 1
    log.info("warm in %s", ", ".join(f"{step} {s:.2f} s" for step, s in warmed.items()))
    chosen = port or settings.api.port
    print(f"Workspace API at {listen_url(host, chosen)}  (routes: /docs)", flush=True)
    config = uvicorn.Config(
        create_api(app, settings, host), host=host, port=chosen, log_level="warning", access_log=False,
        timeout_graceful_shutdown=5, server_header=False,
    )
    try:
        uvicorn.Server(config).run()
    finally:
        app.close()
    return 0
