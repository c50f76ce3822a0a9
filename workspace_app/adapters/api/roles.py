"""Which role each API route needs (through the one policy, accounts/policy.py), and the guard that checks it.

Every route has a rule here; `create_api` refuses to build when one has none, so a new route cannot be forgotten
(tests/api/test_api_roles.py tries each one as an owner, an editor, a viewer and a stranger). With accounts off the
caller is the operator (None) and every rule passes: the one-person API is unchanged.

    path     the `{workspace}` in the path is opened with the action before the route runs (a stranger: 404)
    body     the route names its workspace in the body (/ask, OpenAI, Ollama) and opens it itself with `gate`
    listing  the route lists only the workspaces the caller may see
    signed   any signed-in caller (their own things: /me, their keys; creating a workspace they then own)
    admin    admins only (users; patient records, which are not shared per workspace yet)
    public   no key at all (/health's short form, /health/live)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from workspace_app.accounts.policy import Action
from workspace_app.adapters.api.context import current_app
from workspace_app.app import App
from workspace_app.errors import SignInError
from workspace_app.models.accounts import User
from workspace_app.models.documents import Workspace


@dataclass(frozen=True)
class Rule:
    """What a route needs: where its workspace is named, the action done in it, and whether only admins may."""

    where: str
    action: Action | None = None
    admin: bool = False


READ, ASK, EDIT, MANAGE = (Rule("path", a) for a in (Action.READ, Action.ASK, Action.EDIT, Action.MANAGE))
BODY_ASK = Rule("body", Action.ASK)
LISTING, SIGNED, ADMIN, PUBLIC = Rule("listing"), Rule("signed"), Rule("admin", admin=True), Rule("public")
W = "/workspaces/{workspace}"
D = W + "/documents/{document}"

RULES: dict[tuple[str, str], Rule] = {
    ("GET", "/health"): PUBLIC, ("GET", "/health/live"): PUBLIC,
    ("GET", "/docs"): SIGNED, ("GET", "/openapi.json"): SIGNED,
    ("POST", "/ask"): BODY_ASK,
    ("GET", "/workspaces"): LISTING, ("POST", "/workspaces"): SIGNED,
    ("GET", W): READ, ("PATCH", W): MANAGE, ("DELETE", W): MANAGE,
    ("GET", W + "/search"): READ,
    ("GET", W + "/chats"): READ, ("POST", W + "/chats"): EDIT,
    ("GET", W + "/chats/{chat_id}"): READ, ("PATCH", W + "/chats/{chat_id}"): EDIT,
    ("DELETE", W + "/chats/{chat_id}"): EDIT,
    ("GET", W + "/notes"): READ, ("POST", W + "/notes"): EDIT,
    ("GET", W + "/notes/{note_id}"): READ, ("PATCH", W + "/notes/{note_id}"): EDIT,
    ("DELETE", W + "/notes/{note_id}"): EDIT,
    ("POST", W + "/documents"): EDIT, ("GET", W + "/documents"): READ,
    ("GET", D): READ, ("DELETE", D): EDIT,
    ("POST", D + "/cancel"): EDIT, ("POST", D + "/retry"): EDIT,
    ("GET", D + "/file"): READ, ("GET", D + "/pages/{page}.png"): READ,
    ("GET", D + "/figures"): READ, ("GET", D + "/figures/{figure_id}.png"): READ,
    ("POST", "/patients/imports"): ADMIN, ("GET", "/patients/imports/{import_id}"): ADMIN,
    ("GET", "/patients"): ADMIN, ("GET", "/patients/{patient_id}/events"): ADMIN,
    ("GET", "/patients/{patient_id}/admissions"): ADMIN,
    ("GET", "/patients/{patient_id}/events/{event_id}/related"): ADMIN,
    ("GET", "/patients/{patient_id}/similar"): ADMIN,
    ("POST", W + "/patients/{patient_id}/ask"): Rule("path", Action.ASK, admin=True),
    ("GET", W + "/patients/{patient_id}/links"): Rule("path", Action.READ, admin=True),
    ("GET", "/v1/models"): LISTING, ("GET", "/v1/models/{model_id}"): LISTING,
    ("POST", "/v1/chat/completions"): BODY_ASK,
    ("GET", "/api/tags"): LISTING, ("POST", "/api/chat"): BODY_ASK, ("POST", "/api/generate"): BODY_ASK,
    # Accounts (routes_accounts.py, only with accounts on)
    ("GET", "/me"): SIGNED, ("GET", "/me/keys"): SIGNED, ("POST", "/me/keys"): SIGNED,
    ("DELETE", "/me/keys/{key_id}"): SIGNED, ("GET", "/me/audit"): SIGNED,
    ("GET", "/users"): ADMIN, ("POST", "/users"): ADMIN,
    ("GET", W + "/members"): MANAGE, ("PUT", W + "/members/{user}"): MANAGE,
    ("DELETE", W + "/members/{user}"): MANAGE, ("GET", W + "/audit"): MANAGE,
}


def caller(request: Request) -> User | None:
    """Who is calling: the user whose key the request carries (set by `KeyCheck`) with accounts on, else the
    operator (None). With accounts on a request without a user never gets here; refuse it anyway."""
    app = current_app(request)
    if not app.accounts.enabled:
        return None
    user: User | None = getattr(request.state, "user", None)
    if user is None:
        raise SignInError("This API needs your key: send `Authorization: Bearer <key>` (workspace-app keys create USER).")
    return user


def guard(request: Request) -> None:
    """Dependency of every route: apply its rule (the workspace in the path, admin only) before it runs."""
    route = request.scope.get("route")
    rule = RULES[(request.method, getattr(route, "path", ""))]
    app = current_app(request)
    if rule.where == "public" or not app.accounts.enabled:  # accounts off: the operator, as before
        return
    user = caller(request)
    if rule.admin:
        app.accounts.require_admin(user)
    if rule.where == "path" and rule.action is not None:
        app.accounts.open(user, request.path_params["workspace"], rule.action)


def gate(request: Request, app: App, workspace: str, action: Action) -> Workspace:
    """The workspace a request names in its body, if the caller's role allows the action (a stranger: 404)."""
    return app.accounts.open(caller(request), workspace, action)


def visible(request: Request, app: App) -> list[Workspace]:
    """The workspaces the caller may see."""
    return app.accounts.visible(caller(request), app.workspaces.list())


def record(request: Request, app: App, action: str, workspace_id: str = "", target: str = "", detail: str = "") -> None:
    """Append to the audit log as the caller (nothing when accounts are off)."""
    app.accounts.record(caller(request), action, workspace_id, target, detail)


def route_pairs(routes: Sequence[BaseRoute]) -> list[tuple[str, str]]:
    """(method, path) of every API route, inside included routers too (FastAPI 0.165 keeps an included router as
    one route holding the original; we include without prefixes)."""
    pairs = []
    for route in routes:
        if isinstance(route, APIRoute):
            pairs += [(method, route.path) for method in sorted(route.methods or ()) if method != "HEAD"]
        included = getattr(route, "original_router", None)
        if included is not None:
            pairs += route_pairs(included.routes)
    return pairs


def unruled_routes(routes: Sequence[BaseRoute]) -> list[tuple[str, str]]:
    """The (method, path) pairs that have no rule."""
    return [pair for pair in route_pairs(routes) if pair not in RULES]
