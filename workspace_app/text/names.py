"""Names users give (workspaces, chats, notes, uploaded files): refused, not silently changed, when they hold
control characters (an escape sequence, a bell, NUL, DEL), which no one types into a name on purpose. A tab or a
line break is white space a paste brings along: the callers fold it into a space (or drop it from a file name)."""

from __future__ import annotations

import unicodedata

from workspace_app.errors import WorkspaceError

WHITE_SPACE = "\t\n\r"


def refuse_control_characters(name: str, what: str) -> str:
    """The name unchanged, or a `WorkspaceError` saying that `what` ("A workspace name") holds a control character."""
    found = next((ch for ch in name if unicodedata.category(ch) == "Cc" and ch not in WHITE_SPACE), None)
    if found is not None:
        raise WorkspaceError(
            f"{what} cannot contain control characters (found U+{ord(found):04X} at position {name.index(found) + 1}). "
            "Use letters, digits, spaces and punctuation only."
        )
    return name
