"""Every page of the app tried by a stranger, a viewer and an editor with accounts on (AppTest): 0 reads or writes
beyond the role. The pages are listed from pages/, so a page added without an expectation here fails the test.

The shared workspace holds a source, a note and a chat whose texts carry a word nothing else has: a stranger (signed
in, no role there) following a link to it must never see that word or the workspace's name; a viewer reads
everything and is offered nothing that writes (no drop zone, no note editor, a disabled studio); an editor is
offered what writes. After every page has been opened by all three, the workspace holds what it held before, and
the audit log says only that they signed in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
MARKER = "Zyloprix"  # only the shared workspace's source, note and chat carry it
GONE = "The workspace in this link no longer exists."
ADMINS_ONLY = "Patient records are open to admins only."


@pytest.fixture
def world(accounts_on: Any, tmp_path: Path) -> dict[str, Any]:
    """olga owns Shared (a source, a note, a chat); ed edits it, vic views it, sam has no role in it."""
    service, store = accounts_on.service, accounts_on.store
    olga, *_ = (accounts_on.user(name) for name in ("olga", "ed", "vic", "sam"))
    shared = service.workspaces.create("Shared")
    store.created(olga, shared)
    store.share(olga, "Shared", "ed", "editor")
    store.share(olga, "Shared", "vic", "viewer")
    source = tmp_path / "dosing.txt"
    source.write_text(f"{MARKER} dosing in atrial fibrillation.\n\nWarfarin should target an INR of 2.0 to 3.0.\n",
                      encoding="utf-8")
    assert service.documents.ingest("Shared", source, "dosing.txt").status == "ready"
    service.notes.add_note("Shared", f"{MARKER} note", f"What the team agreed on {MARKER}.")
    service.chats.rename_chat("Shared", service.chats.create_chat("Shared").id, f"{MARKER} chat")
    return {"service": service, "store": store, "shared": shared}


def shown(at: AppTest) -> str:
    """Everything the page drew, as the messages sent to the browser (text, labels, captions, values)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            found.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(found)


def buttons(at: AppTest) -> dict[str, bool]:
    """Each button's key -> whether it can be clicked."""
    return {b.key: not b.disabled for b in at.button if b.key}


def stranger(page: str, at: AppTest, text: str) -> None:
    assert MARKER not in text and "Shared" not in text, f"{page} shows the workspace to a stranger"
    if page == "patients.py":
        assert [i.value for i in at.info] == [ADMINS_ONLY]
    elif page != "workspaces.py":
        assert [w.value for w in at.warning] == [GONE]
    assert not at.get("file_uploader"), f"{page} offers a stranger an upload"


def viewer(page: str, at: AppTest, text: str) -> None:
    clickable = buttons(at)
    if page == "sources.py":
        assert "dosing.txt" in text and not at.get("file_uploader"), "a viewer reads the sources, gets no drop zone"
    elif page == "notes.py":
        assert f"{MARKER} note" in text, "a viewer reads the notes"
        assert not any(e.label == "New note" for e in at.expander), "no note editor"
        assert not any(clickable.get(f"studio-{kind}") for kind in ("faq", "briefing", "study-guide"))
        assert not [k for k in clickable if k.startswith(("note-edit-", "note-delete-", "note-source-"))]
    elif page == "chat.py":
        assert f"{MARKER} chat" in text, "a viewer reads the chats"
        assert "chats-new" not in clickable and not at.get("popover"), "no new, rename or delete chat"
    elif page == "patients.py":
        assert [i.value for i in at.info] == [ADMINS_ONLY]
    elif page == "workspaces.py":
        assert "Shared" in text and not any(k.startswith(("workspaces-rename-", "workspaces-delete-")) for k, on in clickable.items() if on)
    if page != "evaluation.py":
        assert not at.get("file_uploader"), f"{page} offers a viewer an upload"


def editor(page: str, at: AppTest, text: str) -> None:
    clickable = buttons(at)
    if page == "sources.py":
        assert "dosing.txt" in text and at.get("file_uploader"), "an editor gets the drop zone"
    elif page == "notes.py":
        assert any(e.label == "New note" for e in at.expander), "an editor gets the note editor"
        assert all(clickable.get(f"studio-{kind}") for kind in ("faq", "briefing", "study-guide"))
        assert any(k.startswith("note-edit-") for k, on in clickable.items() if on)
    elif page == "chat.py":
        assert f"{MARKER} chat" in text and clickable.get("chats-new") and at.get("popover")
    elif page == "patients.py":
        assert [i.value for i in at.info] == [ADMINS_ONLY]
    elif page == "workspaces.py":  # sharing, renaming and deleting are the owner's
        assert "Shared" in text and not any(k.startswith(("workspaces-rename-", "workspaces-delete-")) for k, on in clickable.items() if on)


PERSONAS: dict[str, Callable[[str, AppTest, str], None]] = {"sam": stranger, "vic": viewer, "ed": editor}
# Every page, with what it must show each persona beyond the checks above ("" when the persona checks say it all).
PAGES = {
    "workspaces.py": "the workspaces a user has a role in; share, rename and delete for their owner",
    "sources.py": "the sources; the drop zone for an editor",
    "chat.py": "the chats and asking; a viewer's answers are not kept",
    "notes.py": "the notes; the note editor and the studio for an editor",
    "graph.py": "the entity graph (reading only)",
    "evaluation.py": "asking a question file (reading only: nothing is stored)",
    "patients.py": "patient records: admins only",
}


def test_every_page_has_an_expectation() -> None:
    assert sorted(p.name for p in (ROOT / "pages").glob("*.py")) == sorted(PAGES)


def test_every_page_gives_a_stranger_a_viewer_and_an_editor_their_role_and_nothing_more(
    world: dict[str, Any], sign_in: Callable[[str], AppTest]
) -> None:
    service, store, shared = world["service"], world["store"], world["shared"]
    before = (
        [(n.id, n.title, n.body) for n in service.notes.list_notes("Shared")],
        [(c.id, c.title) for c in service.chats.list_chats("Shared")],
        [(d.id, d.status) for d in service.documents.list("Shared")],
        [(m.user_name, m.role) for m in store.members(None, "Shared")],
    )
    for persona, expect in PERSONAS.items():
        at = sign_in(persona)
        for page in PAGES:
            at.query_params["workspace"] = shared.id  # a link to the shared workspace, whoever follows it
            at.switch_page(f"pages/{page}").run()
            assert not at.exception, (persona, page, at.exception)
            expect(page, at, shown(at))
    after = (
        [(n.id, n.title, n.body) for n in service.notes.list_notes("Shared")],
        [(c.id, c.title) for c in service.chats.list_chats("Shared")],
        [(d.id, d.status) for d in service.documents.list("Shared")],
        [(m.user_name, m.role) for m in store.members(None, "Shared")],
    )
    assert after == before
    for persona in PERSONAS:
        assert [e.action for e in store.user_audit(None, persona)] == ["signed in"]
