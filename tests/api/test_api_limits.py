"""What a hostile but fair client found (issue 27): bodies are limited per route and refused before they are read
(also without a key, and at the Chroma gate), and limits and error codes say one thing. Raw sockets against the
real `workspace-app api` and Chroma gate processes, so that "before it is read" is what the server does: the rest
of the body is never sent, and a server that waited for it would time out the test."""

from __future__ import annotations

import hashlib
import json
import select
import socket
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from api_stack import CLI, KEY, MAX_FILE_MB, WORKSPACE, Process, Stack, answers, environ, free_port, wait_until
from test_api_basics import assert_error

pytestmark = pytest.mark.slow
REPLY_TIMEOUT_S = 20.0
JSON_LIMIT = 1024 * 1024  # WORKSPACE_API__MAX_BODY_KB's default
UPLOAD_LIMIT = (MAX_FILE_MB << 20) + (64 << 10)  # the upload limit plus the room left for the form around the file


def raw_request(url: str, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send a request head (and part of a body, maybe) over a socket, then read the reply without sending more:
    (status, headers, body). Times out (failing the test) when the server waits for the rest of the body."""
    parsed = urlparse(url)
    with socket.create_connection((parsed.hostname, parsed.port), timeout=REPLY_TIMEOUT_S) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n")
        # The body in pieces, stopping once the server answers: a limit answers and closes before the whole body is
        # sent, and writing on after that would reset the connection and lose the reply.
        try:
            for start in range(0, len(body), 1 << 16):
                if select.select([sock], [], [], 0)[0]:
                    break
                sock.sendall(body[start : start + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while a piece was on its way: the reply is read below
        reply = b""
        while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < _length(reply):
            try:
                piece = sock.recv(65536)
            except ConnectionResetError:
                break
            if not piece:
                break
            reply += piece
    top, _, payload = reply.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, payload


def _length(reply: bytes) -> int:
    for line in reply.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 1 << 62


def head_of(method: str, path: str, *headers: str) -> str:
    """A request head (lines joined by newlines, ending with the empty line's newline)."""
    return "\n".join([f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers]) + "\n"


def error_code_of(payload: bytes) -> str:
    return str(json.loads(payload)["error"]["code"])


# 1. Bodies


def test_a_declared_body_over_the_route_limit_is_413_before_a_byte_is_sent(stack: Stack) -> None:
    multipart = "Content-Type: multipart/form-data; boundary=x"
    # A multipart body to /ask is not an upload: the small limit applies, with a key or without one.
    for url in (stack.open_url, stack.guarded_url):
        status, headers, payload = raw_request(url, head_of("POST", "/ask", multipart, "Content-Length: 150000000"))
        assert (status, error_code_of(payload)) == (413, "body_too_large"), payload
        assert "1.0 MB" in json.loads(payload)["error"]["message"] and headers["connection"] == "close"
    for content_type in ("application/json", "multipart/form-data; boundary=x"):  # not the upload limit either way
        just_over = head_of("POST", "/ask", f"Content-Type: {content_type}", f"Content-Length: {JSON_LIMIT + 1}")
        assert raw_request(stack.open_url, just_over)[0] == 413
    upload = head_of("POST", f"/workspaces/{WORKSPACE}/documents", multipart, f"Content-Length: {UPLOAD_LIMIT + 1}")
    assert raw_request(stack.open_url, upload)[0] == 413


def test_the_key_is_checked_before_the_body_is_read(stack: Stack) -> None:
    multipart = "Content-Type: multipart/form-data; boundary=x"
    upload = f"/workspaces/{WORKSPACE}/documents"
    for auth in ((), ("Authorization: Bearer wrong",)):
        # Under the limits, so only the key stops them: an anonymous upload is never spooled to disk.
        status, headers, payload = raw_request(
            stack.guarded_url, head_of("POST", upload, multipart, "Content-Length: 1000000", *auth)
        )
        assert (status, error_code_of(payload)) == (401, "api_key"), payload
        assert headers["www-authenticate"] == "Bearer"
        status, _, payload = raw_request(
            stack.guarded_url, head_of("POST", "/ask", "Content-Type: application/json", "Content-Length: 900000", *auth)
        )
        assert status == 401, payload
    assert httpx.get(f"{stack.guarded_url}/health", timeout=30, trust_env=False).status_code == 200


def chunked_head(path: str, content_type: str, key: str | None = None) -> str:
    auth = (f"Authorization: Bearer {key}",) if key else ()
    return head_of("POST", path, f"Content-Type: {content_type}", "Transfer-Encoding: chunked", *auth)


def chunks_past(limit: int, start: bytes = b"") -> bytes:
    """A chunk of a body one byte over `limit` (beginning with `start`), without its CRLF or the closing chunk: a
    server that reads on to the end of the body waits forever."""
    size = limit + 1
    return f"{size:x}\r\n".encode() + start + b"a" * (size - len(start))


FORM_START = b'--x\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n'



def test_a_streamed_body_is_cut_at_the_route_limit_with_413(stack: Stack, guarded: httpx.Client) -> None:
    status, _, payload = raw_request(stack.open_url, chunked_head("/ask", "application/json"), chunks_past(JSON_LIMIT))
    assert (status, error_code_of(payload)) == (413, "body_too_large"), payload
    form = "multipart/form-data; boundary=x"
    upload = chunked_head(f"/workspaces/{WORKSPACE}/documents", form, KEY)
    status, _, payload = raw_request(stack.guarded_url, upload, chunks_past(UPLOAD_LIMIT, FORM_START))
    assert (status, error_code_of(payload)) == (413, "body_too_large"), payload
    assert "WORKSPACE_INGEST__MAX_FILE_MB" in json.loads(payload)["error"]["message"]
    # A streamed body under the limit still works.
    body = json.dumps({"name": "Streamed"}).encode()
    status, _, payload = raw_request(
        stack.guarded_url, chunked_head("/workspaces", "application/json", KEY),
        f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n",
    )
    assert status == 201, payload
    assert guarded.delete("/workspaces/Streamed").status_code == 204


def test_the_chroma_gate_checks_its_token_before_reading_a_body(stack: Stack) -> None:
    url = stack.common["WORKSPACE_CHROMA_URL"]
    token = stack.common["WORKSPACE_STORAGE__CHROMA_TOKEN"]
    path = "/api/v2/tenants/default_tenant/databases/default_database/collections"
    for auth in ((), ("Authorization: Bearer wrong",)):
        status, headers, payload = raw_request(
            url, head_of("POST", path, "Content-Type: application/json", "Content-Length: 100000000", *auth)
        )
        assert status == 401 and headers["connection"] == "close", payload
    status, _, payload = raw_request(url, head_of(
        "POST", path, "Content-Type: application/json", f"Content-Length: {(256 << 20) + 1}", f"Authorization: Bearer {token}",
    ))
    assert status == 413, payload
    for length in ("abc", "-1"):  # -1 would read to the end of the connection
        status, _, payload = raw_request(url, head_of(
            "POST", path, "Content-Type: application/json", f"Content-Length: {length}", f"Authorization: Bearer {token}",
        ))
        assert status == 400, payload
    status, _, payload = raw_request(url, chunked_head(path, "application/json"), chunks_past(1 << 20))
    assert status == 401, payload
    heartbeat = httpx.get(f"{url}/api/v2/heartbeat", headers={"Authorization": f"Bearer {token}"}, trust_env=False)
    assert heartbeat.status_code == 200  # the gate is fine afterwards


# 7. Limits and codes


def test_a_page_the_document_lacks_is_404(client: httpx.Client, ready: dict[str, Any]) -> None:
    for page in (3, 99999, 10**12):
        message = assert_error(client.get(f"/workspaces/{WORKSPACE}/documents/{ready['id']}/pages/{page}.png"), 404,
                               "page_not_found")
        assert f"Page {page} does not exist; this source has 2 pages" in message


def test_invalid_utf8_and_malformed_json_get_the_same_code(client: httpx.Client) -> None:
    json_type = {"Content-Type": "application/json"}
    malformed = assert_error(client.post("/ask", content=b'{"question": ', headers=json_type), 400, "invalid_json")
    not_utf8 = assert_error(client.post("/ask", content=b'{"question": "\xff\xfe"}', headers=json_type), 400,
                            "invalid_json")
    assert "not valid JSON" in malformed and "not valid JSON" in not_utf8 and "UTF-8" in not_utf8


def test_a_refused_upload_is_not_kept_and_is_judged_afresh(stack: Stack, client: httpx.Client,
                                                           ready: dict[str, Any]) -> None:
    data = b"plain text that calls itself a PDF, refused #27"
    stored = stack.data_dir / "files" / f"{hashlib.sha256(data).hexdigest()}.pdf"
    for _ in range(2):  # the second time is refused for the same reason, not answered "duplicate"
        response = client.post(f"/workspaces/{WORKSPACE}/documents", files={"file": ("fake.pdf", data, "application/pdf")})
        assert response.status_code == 422, response.text
        assert response.json()["status"] == "failed" and response.json()["document"] is None
        assert "not a PDF" in response.json()["error"]["message"]
        assert not stored.exists()
    assert [d["id"] for d in client.get(f"/workspaces/{WORKSPACE}/documents").json()] == [ready["id"]]


def test_names_with_control_characters_are_refused_and_nothing_changes(
    client: httpx.Client, ready: dict[str, Any], pdf: Path
) -> None:
    before = client.get("/workspaces").json()
    message = assert_error(client.post("/workspaces", json={"name": "Cardio\x1b[2J"}), 400, "bad_request")
    assert "control characters" in message and "U+001B" in message
    assert "control characters" in assert_error(client.patch(f"/workspaces/{WORKSPACE}", json={"name": "A\x7fB"}), 400)
    assert client.get("/workspaces").json() == before
    chat_name = client.post(f"/workspaces/{WORKSPACE}/chats", json={"title": "new\x00chat"})
    assert "control characters" in assert_error(chat_name, 400)
    note = client.post(f"/workspaces/{WORKSPACE}/notes", json={"title": "bell\x07", "body": "text"})
    assert "control characters" in assert_error(note, 400)
    with pdf.open("rb") as stream:
        upload = client.post(f"/workspaces/{WORKSPACE}/documents",
                             files={"file": ("\x1b[31mred.pdf", stream, "application/pdf")})
    assert upload.status_code == 422 and "control characters" in upload.json()["error"]["message"], upload.text
    assert [d["id"] for d in client.get(f"/workspaces/{WORKSPACE}/documents").json()] == [ready["id"]]


def test_a_malformed_hashed_key_is_reported_in_words(stack: Stack) -> None:
    done = subprocess.run(
        [*CLI, "--data-dir", str(stack.data_dir), "api", "--port", "1"], capture_output=True, text=True, timeout=60,
        env=environ(**stack.common, WORKSPACE_API__KEYS="plain-key, sha256:not-hex"), cwd=str(stack.data_dir.parent),
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "plain-key" not in done.stderr
    assert "WORKSPACE_API__KEYS" in done.stderr and "64 hexadecimal digits" in done.stderr


def test_the_printed_url_is_the_address_it_listens_on(stack: Stack) -> None:
    port = free_port()
    argv = [*CLI, "--data-dir", str(stack.data_dir), "api", "--host", "0.0.0.0", "--port", str(port)]
    env = environ(**stack.common, WORKSPACE_API__KEYS=KEY)
    child = Process(argv, stack.data_dir.parent / "api-everywhere.log", env, stack.data_dir.parent)
    try:
        wait_until(lambda: "Workspace API at" in child.log.read_text(), 120, "the API's address line",
                   child.process, child.log)
        line = next(x for x in child.log.read_text().splitlines() if "Workspace API at" in x)
        assert f"http://0.0.0.0:{port}" in line and "127.0.0.1" not in line, line
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/health/live"), 60, "the API on 0.0.0.0", child.process,
                   child.log)
    finally:
        child.stop()


def test_a_chroma_error_body_becomes_a_clean_message(stack: Stack) -> None:
    from workspace_app.errors import StorageError
    from workspace_app.storage.chroma import ChromaVectorIndex, open_chroma

    with pytest.raises(StorageError) as refused:
        ChromaVectorIndex(open_chroma(None, stack.common["WORKSPACE_CHROMA_URL"], "wrong-token")).count("any")
    message = refused.value.user_message
    assert "a valid token is required" in message, message
    assert "{" not in message and ".." not in message and message.count("Try again") <= 1, message
