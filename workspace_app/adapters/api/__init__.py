"""HTTP API adapter (FastAPI): the workspace as a service, over the one `App` of the process.

    create_api(app, settings, host) -> FastAPI   routes, error shape, keys, CORS, Host and Origin checks, body limits,
                                                 admission of asks (no I/O at build time)
    run_api(settings, host, port) -> int     `workspace-app api`: builds the App, loads the model, runs uvicorn

Routes (each module is one group): `health` (GET /health), `routes_ask` (POST /ask, JSON or SSE),
`routes_workspaces` (workspaces, search, chats, notes), `routes_documents` (upload, list, get, remove, cancel,
retry, file, page images), `routes_patients` (patients, events, admissions, related events, a question about a
patient), `routes_accounts` (with accounts on: /me, keys, users, members, the audit log), `routes_openai` (POST /v1/chat/completions, GET /v1/models), `routes_ollama` (Ollama's /api/tags,
/api/chat, /api/generate), `docs` (an offline /docs).
Every route has a rule in `roles` (the role it needs, checked by the policy before it runs).
Core calls are synchronous: routes are plain `def` (or use `run_in_threadpool`), so asks and uploads run side by
side in the thread pool and never block the event loop.
"""

from __future__ import annotations

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from workspace_app.adapters.api import (
    docs,
    health,
    routes_accounts,
    routes_ask,
    routes_documents,
    routes_ollama,
    routes_openai,
    routes_patients,
    routes_workspaces,
)
from workspace_app.adapters.api.access import ApiKeys, BodyLimit, KeyCheck, require_key
from workspace_app.adapters.api.admission import AskAdmission
from workspace_app.adapters.api.errors import install_error_handlers
from workspace_app.adapters.api.origins import SameOriginGuard
from workspace_app.adapters.api.roles import guard, unruled_routes
from workspace_app.adapters.supervisor import HOST, allowed_hosts
from workspace_app.app import App
from workspace_app.config import Settings

__all__ = ["create_api"]


def create_api(app: App, settings: Settings, host: str = HOST) -> FastAPI:
    """The FastAPI application over `app` served on `host`: every route but /health behind the keys (when set), and
    only for the allowed Host names and, for writes, the API's own and the CORS origins."""
    api = FastAPI(
        title="Workspace API", version=health.app_version(), docs_url=None, redoc_url=None, openapi_url=None,
        description="Grounded answers with verified citations from a workspace's sources.",
    )
    api.state.workspace_app = app
    api.state.keys = ApiKeys(settings.api.keys, app.accounts)
    install_error_handlers(api)
    api.include_router(health.router)
    guarded = [Depends(require_key), Depends(guard)]
    modules = [routes_ask, routes_workspaces, routes_documents, routes_patients, routes_openai, routes_ollama, docs]
    if app.accounts.enabled:
        modules.append(routes_accounts)
    for module in modules:
        api.include_router(module.router, dependencies=guarded)
    _protect_openapi(api)
    _check_rules(api)
    # Middleware added last runs first: body limits, then CORS (its preflight needs no key), then the key check,
    # then admission of asks (only a key holder's ask takes a place), all before FastAPI reads a body.
    limits = settings.api
    api.add_middleware(
        AskAdmission, limit=limits.max_concurrent_asks, queue=limits.max_queued_asks,
        retry_after_s=limits.busy_retry_after_s, wait_s=limits.max_ask_wait_s, wait_asks=limits.max_ask_wait_asks,
    )
    api.add_middleware(KeyCheck, keys=api.state.keys)
    origins = [o.strip() for o in settings.api.cors_origins.split(",") if o.strip()]
    if origins:
        api.add_middleware(
            CORSMiddleware, allow_origins=origins, allow_methods=["*"], allow_headers=["Authorization", "Content-Type"],
        )
    api.add_middleware(
        BodyLimit, upload_bytes=settings.ingest.max_file_mb * 1024 * 1024, other_bytes=settings.api.max_body_kb * 1024,
    )
    api.add_middleware(SameOriginGuard, hosts=allowed_hosts(host, settings.api.allowed_hosts), cors_origins=origins)
    return api


def _check_rules(api: FastAPI) -> None:
    """Refuse to build an API with a route that has no rule in roles.py (which role it needs)."""
    missing = unruled_routes(api.routes)
    if missing:
        raise RuntimeError(f"routes without a rule in adapters/api/roles.py RULES: {missing}")


def _protect_openapi(api: FastAPI) -> None:
    """Serve /openapi.json behind the keys like every other route (FastAPI's own route has no dependencies)."""
    @api.get("/openapi.json", include_in_schema=False, dependencies=[Depends(require_key), Depends(guard)])
    def openapi_schema() -> dict[str, object]:
        return api.openapi()
