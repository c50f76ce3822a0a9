"""Who may call the API and how much they may send: API keys, the loopback rule, CORS and body limits.

Keys come from `WORKSPACE_API__KEYS` (comma-separated; each plain or `sha256:<hex>` of the key, so a key need not
be stored in clear); with accounts on (WORKSPACE_ACCOUNTS__ENABLED) they are each user's own keys instead, kept in the
catalog (`workspace-app keys create USER`), and the key says who is calling (`request.state.user`). Only their SHA-256 digests are kept in memory and compared in constant time; keys are never
logged or printed. With keys set, every route but `/health` needs `Authorization: Bearer <key>`, checked before
a byte of the body is read (`KeyCheck`); bodies are limited per route before and while they are read (`BodyLimit`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from fastapi import Request
from pydantic import SecretStr
from starlette.concurrency import run_in_threadpool

from workspace_app.adapters.api.errors import ApiKeyError, BodyTooLargeError, error_body, error_code
from workspace_app.config import secret_digest, secret_matches
from workspace_app.errors import WorkspaceError
from workspace_app.models.accounts import User

if TYPE_CHECKING:
    from workspace_app.accounts.service import AccountService

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_OVERHEAD_BYTES = 64 << 10  # multipart boundaries and headers around the file


class ApiKeys:
    """The configured keys as SHA-256 digests; `accepts` compares a presented key in constant time. With accounts on,
    the users' own keys instead (`identify` says whose a key is)."""

    def __init__(self, keys: SecretStr | None, accounts: AccountService | None = None) -> None:
        entries = [k.strip() for k in (keys.get_secret_value() if keys else "").split(",") if k.strip()]
        self._digests = [secret_digest(entry) for entry in entries]  # Settings refused blank and malformed ones
        self.accounts = accounts if accounts is not None and accounts.enabled else None

    @property
    def enabled(self) -> bool:
        """True when at least one key is configured, or accounts are on (then every route but /health needs one)."""
        return bool(self._digests) or self.accounts is not None

    def accepts(self, presented: str) -> bool:
        """Whether the key is one of the configured ones (a user's live key, with accounts on)."""
        if self.accounts is not None:
            return self.identify(presented) is not None
        return any(secret_matches(presented, known) for known in self._digests)

    def identify(self, presented: str) -> User | None:
        """The user whose live key this is (accounts on), else None."""
        return self.accounts.identify(presented) if self.accounts is not None else None


def require_key(request: Request) -> None:
    """Dependency of every route but /health, behind `KeyCheck`: refuse a request without a configured key."""
    keys: ApiKeys = request.app.state.keys
    if keys.accounts is not None:
        if getattr(request.state, "user", None) is None:  # /health is not behind `KeyCheck`
            request.state.user = keys.identify(bearer_key(request.headers.get("authorization", "")))
        accepted = request.state.user is not None
        problem = key_problem(keys, request.headers.get("authorization", ""), accepted)
    else:
        problem = key_problem(keys, request.headers.get("authorization", "")) if keys.enabled else None
    if problem:
        raise ApiKeyError(problem)


class BodyLimit:
    """ASGI middleware, outermost: a body declared (Content-Length) over its route's limit gets 413 before a byte of
    it is read; one sent without a length (chunked) gets 413 as soon as it passes the limit, and no more of it is
    read. Uploads get the upload size limit plus room for the form around the file; every other route
    `other_bytes` (whatever its Content-Type: a multipart body to /ask is not an upload)."""

    def __init__(self, app: ASGIApp, upload_bytes: int, other_bytes: int) -> None:
        self.app = app
        self.upload_bytes = upload_bytes + UPLOAD_OVERHEAD_BYTES
        self.other_bytes = other_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_bytes if is_upload(scope) else self.other_bytes
        declared = _header(scope, b"content-length")
        if declared.isdigit() and int(declared) > limit:
            await send_error(send, too_large(limit))
            return
        await self.app(scope, *_cut_at(limit, receive, send))


def _cut_at(limit: int, receive: Receive, send: Send) -> tuple[Receive, Send]:
    """(receive, send) for the app: once the body passes `limit`, 413 is sent, the app is told the client went away
    (it stops reading) and whatever it answers after that is dropped."""
    received = 0
    refused = False

    async def limited_receive() -> Message:
        nonlocal received, refused
        if refused:
            return {"type": "http.disconnect"}
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            refused = True
            await send_error(send, too_large(limit))
        return {"type": "http.disconnect"} if refused else message

    async def guarded_send(message: Message) -> None:
        if not refused:
            await send(message)

    return limited_receive, guarded_send


class KeyCheck:
    """ASGI middleware: with keys set, a request to any route but /health without a valid key gets 401 before its
    body is read (an anonymous client cannot make the API buffer or spool anything)."""

    def __init__(self, app: ASGIApp, keys: ApiKeys) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.keys.enabled and not _is_health(scope["path"]):
            authorization = _header(scope, b"authorization")
            if self.keys.accounts is not None:  # a catalog read: off the event loop
                user = await run_in_threadpool(self.keys.identify, bearer_key(authorization))
                scope.setdefault("state", {})["user"] = user
                problem = None if user else key_problem(self.keys, authorization, accepted=False)
            else:
                problem = key_problem(self.keys, authorization)
            if problem:
                await send_error(send, ApiKeyError(problem))
                return
        await self.app(scope, receive, send)


def key_problem(keys: ApiKeys, authorization: str, accepted: bool | None = None) -> str | None:
    """Why this Authorization header is refused, or None when it carries a configured key (`accepted`: already
    checked)."""
    presented = bearer_key(authorization)
    if not presented:
        where = "your own key: workspace-app keys create USER" if keys.accounts else "see WORKSPACE_API__KEYS"
        return f"This API needs a key: send `Authorization: Bearer <key>` ({where})."
    if not (keys.accepts(presented) if accepted is None else accepted):
        return "The API key is not valid."
    return None


def bearer_key(authorization: str) -> str:
    """The key of a `Bearer` Authorization header, or ""."""
    scheme, _, presented = authorization.partition(" ")
    return presented.strip() if scheme.lower() == "bearer" else ""


_UPLOAD_PATH = re.compile(r"^/workspaces/[^/]+/documents/?$")


def is_upload(scope: Scope) -> bool:
    """Whether the request is a document upload (`POST /workspaces/{workspace}/documents`)."""
    return scope.get("method") == "POST" and bool(_UPLOAD_PATH.match(scope["path"]))


def _is_health(path: str) -> bool:
    return path == "/health" or path.startswith("/health/")


def _header(scope: Scope, name: bytes) -> str:
    """The first value of a request header (names are lower case in ASGI), or ""."""
    return next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == name), "")


def too_large(limit: int) -> BodyTooLargeError:
    """The error of a body over `limit` bytes, naming the limit and the setting behind it."""
    return BodyTooLargeError(
        f"The request body is over the limit of {limit / 1048576:.1f} MB for this route (uploads: "
        "WORKSPACE_INGEST__MAX_FILE_MB; other requests: WORKSPACE_API__MAX_BODY_KB). Send less."
    )


async def send_error(send: Send, exc: WorkspaceError, extra: dict[str, str] | None = None) -> None:
    """Answer with the error shape (and `extra` headers) and close the connection (the rest of a body the client
    sends is not read)."""
    payload = json.dumps(error_body(error_code(exc), exc.user_message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
               (b"connection", b"close")]
    if isinstance(exc, ApiKeyError):
        headers.append((b"www-authenticate", b"Bearer"))
    headers += [(name.encode("latin-1"), value.encode("latin-1")) for name, value in (extra or {}).items()]
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
