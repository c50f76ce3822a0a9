"""Chats and notes managed through the API as the Chat and Notes pages do it: rename and delete a chat, edit and
delete a note; unknown ids are 404 in the error shape, bodies that cannot be used 422."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from test_api_basics import assert_error

pytestmark = pytest.mark.slow

NAME = "Chats and notes"


@pytest.fixture
def workspace(client: httpx.Client) -> Iterator[str]:
    """A workspace of its own, deleted afterwards (other tests count the workspaces)."""
    assert client.post("/workspaces", json={"name": NAME}).status_code == 201
    try:
        yield NAME
    finally:
        client.delete(f"/workspaces/{NAME}")


def test_a_chat_is_renamed_then_deleted(client: httpx.Client, workspace: str) -> None:
    chat = client.post(f"/workspaces/{workspace}/chats", json={}).json()
    path = f"/workspaces/{workspace}/chats/{chat['id']}"
    renamed = client.patch(path, json={"title": "  Warfarin \n dosing "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["id"] == chat["id"] and renamed.json()["title"] == "Warfarin dosing"
    assert client.get(path).json()["title"] == "Warfarin dosing"
    deleted = client.delete(path)
    assert deleted.status_code == 204 and deleted.content == b""
    assert chat["id"] not in [c["id"] for c in client.get(f"/workspaces/{workspace}/chats").json()]
    assert_error(client.get(path), 404, "chat_not_found")
    assert_error(client.delete(path), 404, "chat_not_found")
    assert_error(client.patch(path, json={"title": "Again"}), 404, "chat_not_found")


def test_chat_bodies_that_cannot_be_used(client: httpx.Client, workspace: str) -> None:
    chat = client.post(f"/workspaces/{workspace}/chats", json={"title": "Kept"}).json()
    path = f"/workspaces/{workspace}/chats/{chat['id']}"
    assert "title" in assert_error(client.patch(path, json={}), 422, "invalid_request")
    assert_error(client.patch(path, json={"title": ""}), 422, "invalid_request")
    assert_error(client.patch(path, json={"title": "x", "colour": "red"}), 422, "invalid_request")
    assert "visible character" in assert_error(client.patch(path, json={"title": " \t "}), 400, "bad_request")
    assert client.get(path).json()["title"] == "Kept"
    assert_error(client.patch(f"/workspaces/Nowhere/chats/{chat['id']}", json={"title": "x"}), 404,
                 "workspace_not_found")


def test_a_note_is_edited_then_deleted(client: httpx.Client, workspace: str) -> None:
    note = client.post(f"/workspaces/{workspace}/notes", json={"title": "Mine", "body": "**INR** 2-3"}).json()
    path = f"/workspaces/{workspace}/notes/{note['id']}"
    body_only = client.patch(path, json={"body": "INR 2.0-3.0, *target 2.5*"})
    assert body_only.status_code == 200, body_only.text
    assert body_only.json()["title"] == "Mine" and body_only.json()["body"] == "INR 2.0-3.0, *target 2.5*"
    title_only = client.patch(path, json={"title": "Warfarin"}).json()
    assert title_only["title"] == "Warfarin" and title_only["body"] == "INR 2.0-3.0, *target 2.5*"
    both = client.patch(path, json={"title": "Warfarin in AF", "body": ""}).json()
    assert (both["title"], both["body"], both["id"]) == ("Warfarin in AF", "", note["id"])
    assert client.get(path).json() == both
    assert [n["title"] for n in client.get(f"/workspaces/{workspace}/notes").json()] == ["Warfarin in AF"]
    deleted = client.delete(path)
    assert deleted.status_code == 204 and deleted.content == b""
    assert client.get(f"/workspaces/{workspace}/notes").json() == []
    assert_error(client.get(path), 404, "note_not_found")
    assert_error(client.patch(path, json={"title": "Again"}), 404, "note_not_found")
    assert_error(client.delete(path), 404, "note_not_found")


def test_note_bodies_that_cannot_be_used(client: httpx.Client, workspace: str) -> None:
    note = client.post(f"/workspaces/{workspace}/notes", json={"title": "Kept", "body": "text"}).json()
    path = f"/workspaces/{workspace}/notes/{note['id']}"
    assert "title, body" in assert_error(client.patch(path, json={}), 422, "invalid_request")
    assert_error(client.patch(path, json={"title": ""}), 422, "invalid_request")
    assert_error(client.patch(path, json={"body": "x" * 40_001}), 422, "invalid_request")
    assert_error(client.patch(path, json={"body": "x", "answer": None}), 422, "invalid_request")
    assert_error(client.patch(path, content=b"{", headers={"Content-Type": "application/json"}), 400, "invalid_json")
    assert client.get(path).json()["title"] == "Kept" and client.get(path).json()["body"] == "text"
