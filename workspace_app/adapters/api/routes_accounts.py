"""Routes of accounts (only with WORKSPACE_ACCOUNTS__ENABLED): who I am, my keys, users (admins), a workspace's
members and its audit log (owners). Each route's rule is in roles.py; the service (`app.accounts`) checks again."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from workspace_app.accounts.service import export_audit
from workspace_app.adapters.api.context import AppDep
from workspace_app.adapters.api.payloads import workspace_payload
from workspace_app.adapters.api.roles import caller, visible
from workspace_app.models.accounts import User

router = APIRouter(tags=["accounts"])


def _me(request: Request) -> User:
    user = caller(request)
    assert user is not None, "accounts are on: every caller of these routes is a user"
    return user


class KeyBody(BaseModel):
    """A label for a new key (which client or script uses it)."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field("", max_length=80)


class UserBody(BaseModel):
    """A new local account."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=1000)
    is_admin: bool = False


class RoleBody(BaseModel):
    """A member's role."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["viewer", "editor", "owner"]


@router.get("/me")
def me(request: Request, app: AppDep) -> dict[str, Any]:
    """The caller and the workspaces shared with them, each with their role."""
    user = _me(request)
    roles = app.accounts.roles(user)
    return {**user.to_json(), "workspaces": [
        {**workspace_payload(w), "role": roles.get(w.id)} for w in visible(request, app)
    ]}


@router.get("/me/keys")
def my_keys(request: Request, app: AppDep) -> list[dict[str, Any]]:
    """The caller's keys (ids and labels; never the keys), revoked ones too."""
    user = _me(request)
    return [key.to_json() for key in app.accounts.list_keys(user, user.id)]


@router.post("/me/keys", status_code=201)
def create_my_key(body: KeyBody, request: Request, app: AppDep) -> dict[str, Any]:
    """A new key for the caller, shown this once (`key`): only its digest is kept."""
    user = _me(request)
    record, key = app.accounts.create_key(user, user.id, body.label)
    return {**record.to_json(), "key": key}


@router.delete("/me/keys/{key_id}", status_code=204)
def revoke_my_key(key_id: str, request: Request, app: AppDep) -> Response:
    """Revoke one of the caller's keys (it stops working at once)."""
    user = _me(request)
    app.accounts.revoke_key(user, user.id, key_id)
    return Response(status_code=204)


@router.get("/me/audit")
def my_audit(request: Request, app: AppDep) -> list[dict[str, Any]]:
    """What the caller did, oldest first."""
    user = _me(request)
    return [entry.to_json() for entry in app.accounts.user_audit(user, user.id)]


@router.get("/users")
def list_users(request: Request, app: AppDep) -> list[dict[str, Any]]:
    """Every user (admins only)."""
    app.accounts.require_admin(caller(request))
    return [user.to_json() for user in app.accounts.list_users()]


@router.post("/users", status_code=201)
def add_user(body: UserBody, request: Request, app: AppDep) -> dict[str, Any]:
    """Add a local account (admins only); 409 when the name is taken."""
    admin = caller(request)
    app.accounts.require_admin(admin)
    user = app.accounts.add_user(body.name, body.password, body.is_admin)
    app.accounts.record(admin, "added user", target=user.name)
    return user.to_json()


@router.get("/workspaces/{workspace}/members")
def members(workspace: str, request: Request, app: AppDep) -> list[dict[str, Any]]:
    """The workspace's members with their roles (owners only)."""
    return [m.to_json() for m in app.accounts.members(caller(request), workspace)]


@router.put("/workspaces/{workspace}/members/{user}")
def share(workspace: str, user: str, body: RoleBody, request: Request, app: AppDep) -> dict[str, Any]:
    """Give a user a role in the workspace, or change it (owners only)."""
    return app.accounts.share(caller(request), workspace, user, body.role).to_json()


@router.delete("/workspaces/{workspace}/members/{user}", status_code=204)
def unshare(workspace: str, user: str, request: Request, app: AppDep) -> Response:
    """Take a user's role in the workspace away (owners only; the last owner stays)."""
    app.accounts.unshare(caller(request), workspace, user)
    return Response(status_code=204)


@router.get("/workspaces/{workspace}/audit", response_model=None)
def audit(
    workspace: str, request: Request, app: AppDep,
    format: Annotated[Literal["json", "jsonl", "csv"], Query(description="json (a list), jsonl or csv.")] = "json",
) -> Response | list[dict[str, Any]]:
    """The workspace's audit log, oldest first (owners only): who uploaded, removed, asked, shared, and when."""
    entries = app.accounts.audit(caller(request), workspace)
    if format == "json":
        return [entry.to_json() for entry in entries]
    media = "text/csv" if format == "csv" else "application/x-ndjson"
    return Response(export_audit(entries, format), media_type=f"{media}; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="audit.{format}"', "X-Content-Type-Options": "nosniff",
    })
