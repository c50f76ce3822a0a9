"""Who may call the API and how much they may send: API keys, the loopback rule, CORS and body limits.

Keys come from `WORKSPACE_API__KEYS` (comma-separated; each plain or `sha256:<hex>` of the key, so a key need not
be stored in clear). Only their SHA-256 digests are kept in memory and compared in constant time; keys are never
logged or printed. With keys set, every route but `/health` needs `Authorization: Bearer <key>`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import Request
from pydantic import SecretStr

from workspace_app.adapters.api.errors import ApiKeyError, BodyTooLargeError, error_body, error_code
from workspace_app.config import secret_digest, secret_matches

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_JSON_BYTES = 1 << 20  # a question, its history and a few names fit many times over
UPLOAD_OVERHEAD_BYTES = 64 << 10  # multipart boundaries and headers around the file


class ApiKeys:
    """The configured keys as SHA-256 digests; `accepts` compares a presented key in constant time."""

    def __init__(self, keys: SecretStr | None) -> None:
        entries = [k.strip() for k in (keys.get_secret_value() if keys else "").split(",") if k.strip()]
        self._digests = [secret_digest(entry) for entry in entries]  # Settings refused blank and malformed ones

    @property
    def enabled(self) -> bool:
        """True when at least one key is configured (then every route but /health needs one)."""
        return bool(self._digests)

    def accepts(self, presented: str) -> bool:
        """Whether the key is one of the configured ones."""
        return any(secret_matches(presented, known) for known in self._digests)


def require_key(request: Request) -> None:
    """Dependency of every route but /health: refuse a request without a configured key (when keys are set)."""
    keys: ApiKeys = request.app.state.keys
    if not keys.enabled:
        return
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        raise ApiKeyError("This API needs a key: send `Authorization: Bearer <key>` (see WORKSPACE_API__KEYS).")
    if not keys.accepts(presented.strip()):
        raise ApiKeyError("The API key is not valid.")


class BodyLimit:
    """ASGI middleware: refuse a body over the limit with 413 before it is read (by its Content-Length), and stop
    reading one sent without a length once it passes the limit. Uploads (multipart) get the UI's file size limit
    plus room for the form around the file; everything else gets `MAX_JSON_BYTES`."""

    def __init__(self, app: ASGIApp, upload_bytes: int, other_bytes: int = MAX_JSON_BYTES) -> None:
        self.app = app
        self.upload_bytes = upload_bytes + UPLOAD_OVERHEAD_BYTES
        self.other_bytes = other_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        limit = self.upload_bytes if headers.get("content-type", "").startswith("multipart/") else self.other_bytes
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _send_too_large(send, limit)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise too_large(limit)
            return message

        await self.app(scope, limited, send)


def too_large(limit: int) -> BodyTooLargeError:
    """The error of a body over `limit` bytes, naming the limit."""
    return BodyTooLargeError(
        f"The request body is over the limit of {limit / 1048576:.1f} MB (uploads: WORKSPACE_INGEST__MAX_FILE_MB)."
    )


async def _send_too_large(send: Send, limit: int) -> None:
    import json

    exc = too_large(limit)
    payload = json.dumps(error_body(error_code(exc), exc.user_message)).encode()
    await send({
        "type": "http.response.start", "status": 413,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close")],
    })
    await send({"type": "http.response.body", "body": payload})
