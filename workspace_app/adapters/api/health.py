"""`GET /health`: the API answers, and so do the parts an answer or an upload needs.

    catalog  the SQLite catalog can be read
    vectors  the vector store answers (a count on the first workspace's collection)
    queue    the ingestion queue can be read
    worker   the workers' heartbeats (their beacons in `<data dir>/run/workers/`, see `adapters.liveness`)

The worker rule: "ok" while at least one worker beats and no running ingestion has stalled (its holder stopped
renewing its lease). With no worker beating (e.g. `workspace-app api` run alone, without `serve`), the check is
"absent", which does not fail the health: nothing needs a worker while nothing waits. It is "down" (503) when
jobs are queued or running and no worker beats, or when a running job stalled.

200 with `"status": "ok"` when no check is down; 503 with `"status": "unavailable"` and `failing` naming the parts
that are. No key is needed: load balancers poll it. With keys configured, a request without one gets the status
alone (`{"status": "ok"}`, same HTTP code): the checks name workspaces and counts, which need a key (a wrong key is
a 401). `GET /health/live` only says the process answers (what `serve` waits for: a stalled job left by a crash
must not keep the API from starting).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from workspace_app.adapters.api.access import require_key
from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.errors import log
from workspace_app.adapters.liveness import live_workers
from workspace_app.app import App
from workspace_app.errors import WorkspaceError

router = APIRouter(tags=["health"])
ABSENT = "absent"  # a check's status that is neither ok nor down: the part is not running and nothing needs it


class WorkerAbsent(Exception):
    """No worker beats and no job waits for one: reported as "absent", not as a failure."""


def app_version() -> str:
    """The installed package's version."""
    try:
        return version("workspace-app")
    except PackageNotFoundError:
        return "unknown"


def _catalog(app: App) -> str:
    return f"{len(app.workspaces.list())} workspaces"


def _vectors(app: App) -> str:
    workspaces = app.workspaces.list()
    if not workspaces:
        return "not read (no workspace yet)"
    return f"{app.vectors.count(workspaces[0].id)} vectors in '{workspaces[0].name}'"


def _queue(app: App) -> str:
    return f"{len(app.documents.jobs.queue().pending_document_ids())} jobs waiting"


def _worker(app: App) -> str:
    documents = [d for w in app.workspaces.list() for d in app.documents.list(w.id) if d.is_active]
    stalled = [d for d in documents if d.stalled]
    if stalled:
        raise WorkspaceError(f"{len(stalled)} ingestion(s) stalled: {stalled[0].job_note(0) or 'no heartbeat'}")
    running = sum(d.status == "running" for d in documents)
    jobs = f"{running} running, {len(documents) - running} queued"
    beats = live_workers(app.settings.shared_dir, app.settings.queue.lease_timeout_s)
    if beats:
        return f"{len(beats)} alive (last heartbeat {min(b.age_s for b in beats):.0f} s ago); {jobs}"
    if documents:
        raise WorkspaceError(f"no worker is running and jobs wait ({jobs}): start `workspace-app worker` or `serve`")
    raise WorkerAbsent("no worker is running (none needed: no job waits)")


CHECKS: dict[str, Callable[[App], str]] = {"catalog": _catalog, "vectors": _vectors, "queue": _queue, "worker": _worker}


def run_check(app: App, name: str) -> dict[str, Any]:
    """One check's result: ok with a detail, absent (not running, not needed), or down with what failed (in words
    for people)."""
    try:
        return {"status": "ok", "detail": CHECKS[name](app)}
    except WorkerAbsent as exc:
        return {"status": ABSENT, "detail": str(exc)}
    except WorkspaceError as exc:
        return {"status": "down", "detail": exc.user_message}
    except Exception as exc:  # noqa: BLE001 - a backend error not mapped to ours still means this part is down
        log.warning("health check %s failed: %s", name, type(exc).__name__)
        return {"status": "down", "detail": f"{name} failed ({type(exc).__name__})"}


@router.get("/health")
def health(app: AppDep, request: Request) -> JSONResponse:
    """Whether the API and the parts it needs answer; the checks' details only to a key holder (when keys are set)."""
    checks = {name: run_check(app, name) for name in CHECKS}
    failing = [name for name, result in checks.items() if result["status"] == "down"]
    status = {"status": "unavailable" if failing else "ok"}
    if request.app.state.keys.enabled and "authorization" not in request.headers:
        return JSONResponse(status, 503 if failing else 200)
    require_key(request)
    user = getattr(request.state, "user", None)
    if user is not None and not user.is_admin:  # accounts on: the checks name workspaces, which only admins may see
        return JSONResponse(status, 503 if failing else 200)
    body: dict[str, Any] = {**status, "version": app_version(), "checks": checks}
    if failing:
        body["failing"] = failing
    return JSONResponse(body, 503 if failing else 200)


@router.get("/health/live")
async def live() -> dict[str, str]:
    """The process answers (no checks). Async and touching nothing that blocks: it runs on the event loop, not in
    the thread pool that asks and uploads may fill, so it stays fast under load."""
    return {"status": "ok"}
