"""Names users give (workspaces, chats, notes, uploaded files): refused, not silently changed, when they hold
control characters (a tab, a newline, an escape sequence), which no one types into a name on purpose."""

from __future__ import annotations

import unicodedata

from workspace_app.errors import WorkspaceError


def refuse_control_characters(name: str, what: str) -> str:
    """The name unchanged, or a `WorkspaceError` saying that `what` ("A workspace name") holds a control character."""
    found = next((ch for ch in name if unicodedata.category(ch) == "Cc"), None)
    if found is not None:
        raise WorkspaceError(
            f"{what} cannot contain control characters (found U+{ord(found):04X} at position {name.index(found) + 1}). "
            "Use letters, digits, spaces and punctuation only."
        )
    return name
