"""What every route needs: the one `App` of this process, and a workspace named or implied by the request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from workspace_app.app import App
from workspace_app.errors import WorkspaceError
from workspace_app.models.documents import Workspace


def current_app(request: Request) -> App:
    """Dependency: the App built once by `create_api`'s caller (datasette hands its views one Datasette)."""
    app: App = request.app.state.workspace_app
    return app


AppDep = Annotated[App, Depends(current_app)]


def implied_workspace(app: App, named: str | None, workspaces: list[Workspace] | None = None) -> str:
    """The workspace a request names, or the only one there is (among `workspaces`, the caller's, when given); else
    a clear 400 asking to name one."""
    if named:
        return named
    workspaces = app.workspaces.list() if workspaces is None else workspaces
    if len(workspaces) == 1:
        return workspaces[0].id
    if not workspaces:
        raise WorkspaceError("There is no workspace yet. Create one with POST /workspaces, then add sources.")
    names = ", ".join(repr(w.name) for w in workspaces[:10])
    raise WorkspaceError(f"Name the workspace to ask (\"workspace\": one of {names}).")
