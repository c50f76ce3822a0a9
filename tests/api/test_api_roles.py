"""Every API route tried by an owner, an editor, a viewer and a stranger with accounts on: 0 reads or writes beyond
the role. The routes are walked from the FastAPI app itself, so a route added without an expectation here fails the
test (and `create_api` refuses a route without a rule in adapters/api/roles.py).

In-process (Starlette's TestClient over the real App: SQLite catalog, embedded Chroma, the real embedder, a small
.txt source ingested); each refused request must leave the catalog as it was (workspaces, documents, chats,
messages, notes, members, keys, the audit log) and answer with the error shape only, never a source's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from workspace_app.adapters.api import create_api
from workspace_app.adapters.api.roles import route_pairs
from workspace_app.adapters.wiring import build_app
from workspace_app.app import App
from workspace_app.config import Settings

PASSWORD = "a long enough password"
MARKER = "Zyloprix"  # a word only the private source contains: no refused response may carry it
SOURCE = (
    f"{MARKER} dosing in atrial fibrillation.\n\nWarfarin should target an INR of 2.0 to 3.0 in atrial fibrillation. "
    f"{MARKER} is given once daily with food. Patients on {MARKER} need their kidney function checked every year.\n"
)
PERSONAS = ("owner", "editor", "viewer", "stranger")
RANK = {"viewer": 1, "editor": 2, "owner": 3}
W = "/workspaces/{workspace}"
D = W + "/documents/{document}"

# The least a caller needs for each route: a role in the workspace, or
#   signed  any signed-in user     listing  everyone, but each sees only their workspaces
#   admin   admins only            public   no key at all
EXPECT: dict[tuple[str, str], str] = {
    ("GET", "/health"): "public", ("GET", "/health/live"): "public",
    ("GET", "/docs"): "signed", ("GET", "/openapi.json"): "signed",
    ("POST", "/ask"): "viewer",
    ("GET", "/workspaces"): "listing", ("POST", "/workspaces"): "signed",
    ("GET", W): "viewer", ("PATCH", W): "owner", ("DELETE", W): "owner",
    ("GET", W + "/search"): "viewer",
    ("GET", W + "/chats"): "viewer", ("POST", W + "/chats"): "editor",
    ("GET", W + "/chats/{chat_id}"): "viewer", ("PATCH", W + "/chats/{chat_id}"): "editor",
    ("DELETE", W + "/chats/{chat_id}"): "editor",
    ("GET", W + "/notes"): "viewer", ("POST", W + "/notes"): "editor",
    ("GET", W + "/notes/{note_id}"): "viewer", ("PATCH", W + "/notes/{note_id}"): "editor",
    ("DELETE", W + "/notes/{note_id}"): "editor",
    ("POST", W + "/documents"): "editor", ("GET", W + "/documents"): "viewer",
    ("GET", D): "viewer", ("DELETE", D): "editor",
    ("POST", D + "/cancel"): "editor", ("POST", D + "/retry"): "editor",
    ("GET", D + "/file"): "viewer", ("GET", D + "/pages/{page}.png"): "viewer",
    ("GET", D + "/figures"): "viewer", ("GET", D + "/figures/{figure_id}.png"): "viewer",
    ("POST", "/patients/imports"): "admin", ("GET", "/patients/imports/{import_id}"): "admin",
    ("GET", "/patients"): "admin", ("GET", "/patients/{patient_id}/events"): "admin",
    ("GET", "/patients/{patient_id}/admissions"): "admin",
    ("GET", "/patients/{patient_id}/events/{event_id}/related"): "admin",
    ("GET", "/patients/{patient_id}/similar"): "admin",
    ("POST", W + "/patients/{patient_id}/ask"): "admin", ("GET", W + "/patients/{patient_id}/links"): "admin",
    ("GET", "/v1/models"): "listing", ("GET", "/v1/models/{model_id}"): "viewer",
    ("POST", "/v1/chat/completions"): "viewer",
    ("GET", "/api/tags"): "listing", ("POST", "/api/chat"): "viewer", ("POST", "/api/generate"): "viewer",
    ("GET", "/me"): "signed", ("GET", "/me/keys"): "signed", ("POST", "/me/keys"): "signed",
    ("DELETE", "/me/keys/{key_id}"): "signed", ("GET", "/me/audit"): "signed",
    ("GET", "/users"): "admin", ("POST", "/users"): "admin",
    ("GET", W + "/members"): "owner", ("PUT", W + "/members/{user}"): "owner",
    ("DELETE", W + "/members/{user}"): "owner", ("GET", W + "/audit"): "owner",
}


@dataclass
class World:
    """The App, its API client, each persona's key, and what the shared workspace holds."""

    app: App
    client: TestClient
    api: FastAPI
    keys: dict[str, str]
    source: Path
    workspace: str = "Cardio"
    document: str = ""
    chat: str = ""
    note: str = ""

    def headers(self, persona: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[persona]}"}

    def shared_workspace(self, name: str) -> str:
        """A new workspace of the owner's, shared with the editor and the viewer as the main one is."""
        owner = self.app.accounts.user("olga")
        created = self.app.workspaces.create(name)
        self.app.accounts.created(owner, created)
        self.app.accounts.share(owner, name, "ed", "editor")
        self.app.accounts.share(owner, name, "vic", "viewer")
        return name


@pytest.fixture
def world(tmp_path: Path, embedder: Any) -> Iterator[World]:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path / "data"
    settings.accounts.enabled = True
    settings.accounts.password_cost = 1024
    app = build_app(settings, embedder=embedder)
    accounts = app.accounts
    accounts.add_user("root", PASSWORD)  # the first user: an admin, and a stranger to the workspace
    names = {"owner": "olga", "editor": "ed", "viewer": "vic", "stranger": "sam", "admin": "root"}
    keys = {}
    for persona, name in names.items():
        if name != "root":
            accounts.add_user(name, PASSWORD)
        keys[persona] = accounts.create_key(None, name)[1]
    source = tmp_path / "zyloprix.txt"
    source.write_text(SOURCE, encoding="utf-8")
    api = create_api(app, settings)
    with TestClient(api, base_url="http://127.0.0.1") as client:
        world = World(app, client, api, keys, source)
        assert client.post("/workspaces", json={"name": "Cardio"}, headers=world.headers("owner")).status_code == 201
        for user, role in (("ed", "editor"), ("vic", "viewer")):
            shared = client.put(f"/workspaces/Cardio/members/{user}", json={"role": role}, headers=world.headers("owner"))
            assert shared.status_code == 200, shared.text
        world.document = fresh_document(world, "Cardio")
        world.chat, world.note = fresh_chat(world, "Cardio"), fresh_note(world, "Cardio")
        yield world
    app.close()


def fresh_document(world: World, workspace: str, name: str = "zyloprix.txt") -> str:
    source = world.source if name == "zyloprix.txt" else world.source.with_name(name)
    source.write_text(SOURCE + f"\nCopy {name}.\n", encoding="utf-8")  # other content: not a duplicate
    report = world.app.documents.ingest(workspace, source, name)
    assert report.status == "ready", report
    return str(report.document_id)


def fresh_chat(world: World, workspace: str) -> str:
    return world.app.chats.create_chat(workspace, "Dosing").id


def fresh_note(world: World, workspace: str) -> str:
    return world.app.notes.add_note(workspace, "Kept", f"{MARKER} note").id


Request = tuple[str, str, dict[str, Any]]


def request_for(world: World, method: str, path: str, persona: str) -> Request:
    """The request that tries a route: on the shared workspace, or, for what deletes or renames its target, on a
    fresh one (a workspace shared like the main one, a new document, chat or note), so each try finds its target."""
    ws, doc, chat, note = world.workspace, world.document, world.chat, world.note
    if (method, path) in (("DELETE", W), ("PATCH", W)):
        ws = world.shared_workspace(f"Scratch {method} {persona}")
    if (method, path) == ("DELETE", D):
        doc = fresh_document(world, ws, f"{persona}.txt")
    if (method, path) == ("DELETE", W + "/chats/{chat_id}"):
        chat = fresh_chat(world, ws)
    if (method, path) == ("DELETE", W + "/notes/{note_id}"):
        note = fresh_note(world, ws)
    values = {"workspace": ws, "document": doc, "chat_id": chat, "note_id": note, "page": "1", "figure_id": "f1",
              "import_id": "i1", "patient_id": "p1", "event_id": "e1", "model_id": f"workspace:{ws}", "user": "sam",
              "key_id": "nokey"}
    url = path.format(**values)
    ask = {"question": "What INR should warfarin target?"}
    bodies: dict[tuple[str, str], dict[str, Any]] = {
        ("POST", "/ask"): {"json": {**ask, "workspace": ws}},
        ("POST", "/workspaces"): {"json": {"name": f"Own {persona}"}},
        ("PATCH", W): {"json": {"name": f"Renamed {persona}"}},
        ("GET", W + "/search"): {"params": {"q": "warfarin INR"}},
        ("POST", W + "/chats"): {"json": {"title": "New"}},
        ("PATCH", W + "/chats/{chat_id}"): {"json": {"title": "Renamed"}},
        ("POST", W + "/notes"): {"json": {"title": "Mine", "body": "text"}},
        ("PATCH", W + "/notes/{note_id}"): {"json": {"title": "Edited"}},
        ("POST", W + "/documents"): {"files": {"file": (f"{persona}-upload.txt", SOURCE.replace(MARKER, persona).encode())}},
        ("POST", "/patients/imports"): {"json": {"path": "nowhere.csv"}},
        ("POST", W + "/patients/{patient_id}/ask"): {"json": ask},
        ("POST", "/v1/chat/completions"): {"json": {"model": f"workspace:{ws}", "messages": [
            {"role": "user", "content": ask["question"]}]}},
        ("POST", "/api/chat"): {"json": {"model": f"workspace:{ws}", "stream": False, "messages": [
            {"role": "user", "content": ask["question"]}]}},
        ("POST", "/api/generate"): {"json": {"model": f"workspace:{ws}", "prompt": ask["question"], "stream": False}},
        ("POST", "/me/keys"): {"json": {"label": "script"}},
        ("POST", "/users"): {"json": {"name": f"new-{persona}", "password": PASSWORD}},
        ("PUT", W + "/members/{user}"): {"json": {"role": "viewer"}},
    }
    return method, url, bodies.get((method, path), {})


def snapshot(app: App) -> dict[str, Any]:
    """Everything a request could change, read behind the API."""
    state: dict[str, Any] = {"users": [u.to_json() for u in app.accounts.list_users()]}
    state["keys"] = {u.name: [k.to_json() for k in app.accounts.list_keys(None, u.name)] for u in app.accounts.list_users()}
    for w in app.workspaces.list():
        chats = app.chats.list_chats(w.id)
        state[w.id] = {
            "name": w.name,
            "documents": [(d.id, d.name, d.status, d.included) for d in app.documents.list(w.id)],
            "chats": [(c.id, c.title, [m.id for m in app.chats.chat_messages(w.id, c.id)]) for c in chats],
            "notes": [(n.id, n.title, n.body) for n in app.notes.list_notes(w.id)],
            "members": [m.to_json() for m in app.catalog.accounts.members(w.id)],
            "audit": len(app.catalog.accounts.workspace_entries(w.id, 100_000)),
        }
    return state


def expected_allowed(level: str, persona: str) -> bool:
    if level in ("public", "signed", "listing"):
        return True
    if level == "admin":
        return False  # none of the four is an admin
    return persona in RANK and RANK[persona] >= RANK[level]


def api_routes(world: World) -> set[tuple[str, str]]:
    """Every route of the app: walked (included routers too), and cross-checked against the OpenAPI schema."""
    walked = set(route_pairs(world.api.routes))
    schema = {(m.upper(), path) for path, ops in world.api.openapi()["paths"].items() for m in ops}
    assert schema <= walked, f"the walk missed routes the schema has: {sorted(schema - walked)}"
    return walked


def test_every_route_has_an_expectation(world: World) -> None:
    routes = api_routes(world)
    assert sorted(routes - set(EXPECT)) == [], "routes the roles test has no expectation for: add them to EXPECT"
    assert sorted(set(EXPECT) - routes) == [], "EXPECT names routes the API does not have"


@pytest.mark.parametrize("persona", PERSONAS)
def test_each_route_gives_the_persona_its_role_and_nothing_more(world: World, persona: str) -> None:
    problems: list[str] = []
    for method, path in sorted(api_routes(world)):
        level = EXPECT[(method, path)]
        allowed = expected_allowed(level, persona)
        method, url, kwargs = request_for(world, method, path, persona)
        before = snapshot(world.app)
        response = world.client.request(method, url, headers=world.headers(persona), **kwargs)
        what = f"{persona} {method} {path} -> {response.status_code}"
        if level == "listing":
            sees = "Cardio" in response.text
            if sees != (persona != "stranger"):
                problems.append(f"{what}: {'lists' if sees else 'misses'} the shared workspace")
        elif allowed:
            refused = response.status_code in (401, 403) or "workspace_not_found" in response.text
            if refused:
                problems.append(f"{what}: refused though the role allows it: {response.text[:200]}")
        else:
            problems += refusal_problems(what, response, persona, level)
            if snapshot(world.app) != before:
                problems.append(f"{what}: a refused request changed the catalog")
    assert problems == [], "\n".join(problems)


def refusal_problems(what: str, response: Any, persona: str, level: str) -> list[str]:
    """What is wrong with a refusal: a stranger must get 'not found' (the workspace's existence stays hidden), a
    member 403; either gets the error shape only, and never a source's text."""
    problems = []
    body = response.json()
    if set(body) != {"error"} or MARKER in response.text:
        problems.append(f"{what}: the refusal carries more than the error: {response.text[:200]}")
    if level == "admin":
        wanted = {403}
    elif persona == "stranger":
        wanted = {404}
        if body.get("error", {}).get("code") not in ("workspace_not_found", "model_not_found"):
            problems.append(f"{what}: a stranger must get 'workspace not found', got {response.text[:200]}")
    else:
        wanted = {403}
    if response.status_code not in wanted:
        problems.append(f"{what}: expected {sorted(wanted)}")
    return problems


def test_a_viewer_asks_but_not_into_a_chat_and_the_owner_reads_who_asked(world: World) -> None:
    viewer = world.headers("viewer")
    asked = world.client.post("/ask", json={"question": "What INR?", "workspace": "Cardio", "chat": world.chat},
                              headers=viewer)
    assert asked.status_code == 403 and world.app.chats.chat_messages("Cardio", world.chat) == []
    answered = world.client.post("/ask", json={"question": f"Is {MARKER} taken with food?"}, headers=viewer)
    assert answered.status_code == 200, "the only workspace the viewer sees is implied"
    log = world.client.get("/workspaces/Cardio/audit", params={"format": "jsonl"}, headers=world.headers("owner"))
    assert log.status_code == 200 and log.headers["content-type"].startswith("application/x-ndjson")
    assert '"user": "vic", "action": "asked"' in log.text and f"Is {MARKER} taken with food?" in log.text
    csv_log = world.client.get("/workspaces/Cardio/audit", params={"format": "csv"}, headers=world.headers("owner"))
    assert csv_log.text.startswith("at,user,action,workspace_id,target,detail")


def test_the_audit_log_says_who_uploaded_removed_and_shared(world: World) -> None:
    editor, owner = world.headers("editor"), world.headers("owner")
    sent = world.client.post("/workspaces/Cardio/documents", headers=editor,
                             files={"file": ("later.txt", SOURCE.replace(MARKER, "Later").encode())})
    assert sent.status_code == 202, sent.text
    assert world.client.delete("/workspaces/Cardio/documents/later.txt", headers=editor).status_code == 200
    assert world.client.delete("/workspaces/Cardio/members/vic", headers=owner).status_code == 204
    entries = world.client.get("/workspaces/Cardio/audit", headers=owner).json()
    done = [(e["user"], e["action"], e["target"]) for e in entries]
    assert ("olga", "created workspace", "Cardio") == done[0]
    assert ("olga", "shared", "ed") in done and ("olga", "unshared", "vic") in done
    assert ("ed", "uploaded", "later.txt") in done and ("ed", "removed", "later.txt") in done
    assert world.client.get("/workspaces/Cardio", headers=world.headers("viewer")).status_code == 404, "unshared"
    assert world.client.get("/workspaces/Cardio/audit", headers=editor).status_code == 403


def test_an_admin_manages_users_and_no_key_means_no_entry(world: World) -> None:
    admin = world.headers("admin")
    assert world.client.post("/users", json={"name": "nina", "password": PASSWORD}, headers=admin).status_code == 201
    assert "nina" in [u["name"] for u in world.client.get("/users", headers=admin).json()]
    assert world.client.get("/workspaces/Cardio", headers=admin).status_code == 404, "admins do not read private ones"
    assert world.client.get("/workspaces").status_code == 401
    assert world.client.get("/workspaces", headers={"Authorization": "Bearer wsk_nope_nope"}).status_code == 401
    created = world.client.post("/me/keys", json={"label": "x"}, headers=world.headers("viewer")).json()
    own = {"Authorization": f"Bearer {created['key']}"}
    assert world.client.get("/me", headers=own).json()["workspaces"][0]["role"] == "viewer"
    assert world.client.delete(f"/me/keys/{created['id']}", headers=own).status_code == 204
    assert world.client.get("/me", headers=own).status_code == 401, "a revoked key stops working at once"
    assert "checks" not in world.client.get("/health", headers=world.headers("viewer")).json(), "names workspaces"
    assert "checks" in world.client.get("/health", headers=admin).json()
