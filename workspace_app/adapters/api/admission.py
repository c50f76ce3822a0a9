"""Admission control of questions: at most `limit` asks answered at once per API process, `queue` more waiting,
and any beyond that refused at once with 429 and `Retry-After` (instead of every client waiting longer and longer
while the thread pool, shared with every other route, fills up).

Asks are the routes that embed, search and write an answer: `POST /ask`, `POST /v1/chat/completions`, Ollama's
`POST /api/chat` and `POST /api/generate`, and
`POST /workspaces/{workspace}/patients/{patient_id}/ask`. A streamed answer keeps its place until its last event.
"""

from __future__ import annotations

import asyncio
import re

from workspace_app.adapters.api.access import ASGIApp, Receive, Scope, Send, send_error
from workspace_app.adapters.api.errors import TooBusyError

_ASK_PATH = re.compile(r"^/(ask|v1/chat/completions|api/chat|api/generate|workspaces/[^/]+/patients/[^/]+/ask)/?$")


def is_ask(scope: Scope) -> bool:
    """Whether the request asks a question (a POST to one of the ask routes)."""
    return scope["type"] == "http" and scope.get("method") == "POST" and bool(_ASK_PATH.match(scope["path"]))


class AskAdmission:
    """ASGI middleware: asks take one of `limit` places; up to `queue` wait for one (first come, first served);
    the next get 429 with `Retry-After: retry_after_s` before their body is read."""

    def __init__(self, app: ASGIApp, limit: int, queue: int, retry_after_s: int) -> None:
        self.app = app
        self.limit, self.queue, self.retry_after_s = limit, queue, retry_after_s
        self._places = asyncio.Semaphore(limit)
        self._waiting = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_ask(scope):
            await self.app(scope, receive, send)
            return
        if self._places.locked() and self._waiting >= self.queue:
            await send_error(send, self.too_busy(), {"retry-after": str(self.retry_after_s)})
            return
        self._waiting += 1
        try:
            await self._places.acquire()
        finally:
            self._waiting -= 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._places.release()

    def too_busy(self) -> TooBusyError:
        """The error of an ask refused because every place and the queue are taken."""
        return TooBusyError(
            f"The API is answering as many questions as it can ({self.limit} at once, {self.queue} waiting). Try "
            f"again in {self.retry_after_s} s (Retry-After); WORKSPACE_API__MAX_CONCURRENT_ASKS and "
            "WORKSPACE_API__MAX_QUEUED_ASKS set these bounds."
        )
