"""What a role allows in a workspace: the one place that decides, used by the API, the CLI and the pages.

    viewer  read (sources, files, chats, notes, the graph), search, ask (a viewer's answers are not kept in chats)
    editor  a viewer's rights, and edit: upload, remove, cancel and retry documents, chats and notes, studio notes
    owner   an editor's rights, and manage: rename and delete the workspace, share and unshare it, read and export
            its audit log

A caller with no role in a workspace (a stranger) must not learn that it exists: `check` answers as if it did not.
"""

from __future__ import annotations

from enum import StrEnum

from workspace_app.errors import PermissionDeniedError, WorkspaceNotFoundError


class Role(StrEnum):
    """A user's role in one workspace."""

    VIEWER = "viewer"
    EDITOR = "editor"
    OWNER = "owner"


class Action(StrEnum):
    """What a caller does in a workspace, as the policy sees it."""

    READ = "read"
    ASK = "ask"
    EDIT = "edit"
    MANAGE = "manage"


ALLOWED: dict[Role, frozenset[Action]] = {
    Role.VIEWER: frozenset({Action.READ, Action.ASK}),
    Role.EDITOR: frozenset({Action.READ, Action.ASK, Action.EDIT}),
    Role.OWNER: frozenset(Action),
}


def parse_role(text: str) -> Role:
    """A role from its name, or a clear error naming the three."""
    try:
        return Role(text.strip().lower())
    except ValueError:
        raise PermissionDeniedError(f"'{text}' is not a role: use viewer, editor or owner.") from None


def allows(role: Role | None, action: Action) -> bool:
    """Whether a role allows an action (no role allows nothing)."""
    return role is not None and action in ALLOWED[role]


def check(role: Role | None, action: Action, workspace: str) -> None:
    """Refuse an action the role does not allow: a stranger gets 'not found', a member 'not allowed'."""
    if role is None:
        raise WorkspaceNotFoundError(  # word for word what an unknown workspace gets (retrieval/scope.py)
            f"There is no workspace '{workspace}'. Create it first (workspace-app workspace create NAME)."
        )
    if not allows(role, action):
        raise PermissionDeniedError(
            f"Your role in '{workspace}' is {role.value}, which does not allow this ({action.value}). Ask an owner "
            "of the workspace for a higher role."
        )
