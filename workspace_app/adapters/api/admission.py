"""Admission control of questions: at most `limit` asks answered at once per API process, `queue` more waiting,
any beyond that refused at once with 429 and `Retry-After`, and a waiting ask that gets no place within its wait
bound refused with 503 and `Retry-After` (instead of every client waiting longer and longer while the thread pool,
shared with every other route, fills up).

Why a wait bound as well as a queue bound: an ask is CPU-bound, and on a small machine (2 cores, one process
holding the GIL) answering more at once barely raises throughput, so an ask admitted behind others takes about as
many ask-times as there are before it. Under a burst the queue does not stay put: waiting asks that give up make
room for requests the server reads later, so the queue bound alone does not cap how long an admitted ask took. The
wait bound does: `wait_asks` times the median time of the last asks answered (200, from their place to their last
byte: what an ask costs on this workspace and this machine now), and never more than `wait_s`. bench/hardening.py
measured 200 asks at once on 2 cores: admitted asks' p95 17x the single client's with 4 at once and 16 waiting and
no such bound, 1.5-2.1x with the defaults (2 at once, 4 waiting, 2 x the median).

Asks are the routes that embed, search and write an answer: `POST /ask`, `POST /v1/chat/completions`, Ollama's
`POST /api/chat` and `POST /api/generate`, and
`POST /workspaces/{workspace}/patients/{patient_id}/ask`. A streamed answer keeps its place until its last event.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from collections import deque

from workspace_app.adapters.api.access import ASGIApp, Message, Receive, Scope, Send, send_error
from workspace_app.adapters.api.errors import TooBusyError

RECENT_ASKS = 20  # answered asks whose median time sets the relative wait bound
_ASK_PATH = re.compile(r"^/(ask|v1/chat/completions|api/chat|api/generate|workspaces/[^/]+/patients/[^/]+/ask)/?$")


def is_ask(scope: Scope) -> bool:
    """Whether the request asks a question (a POST to one of the ask routes)."""
    return scope["type"] == "http" and scope.get("method") == "POST" and bool(_ASK_PATH.match(scope["path"]))


class AskAdmission:
    """ASGI middleware: asks take one of `limit` places; up to `queue` wait for one (first come, first served);
    the next get 429 with `Retry-After: retry_after_s` before their body is read, and one that waited its bound
    (`wait_asks` x the recent median ask time, at most `wait_s`; `wait_s` alone while no ask was answered or with
    `wait_asks` 0) without a place gets 503 with the same header."""

    def __init__(
        self, app: ASGIApp, limit: int, queue: int, retry_after_s: int, wait_s: float, wait_asks: float = 0.0
    ) -> None:
        self.app = app
        self.limit, self.queue, self.retry_after_s = limit, queue, retry_after_s
        self.wait_s, self.wait_asks = wait_s, wait_asks
        self._places = asyncio.Semaphore(limit)
        self._waiting = 0
        self._recent: deque[float] = deque(maxlen=RECENT_ASKS)

    def wait_bound_s(self) -> float:
        """How long a queued ask may wait for a place now."""
        if self.wait_asks <= 0 or not self._recent:
            return self.wait_s
        return min(self.wait_s, self.wait_asks * statistics.median(self._recent))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_ask(scope):
            await self.app(scope, receive, send)
            return
        if self._places.locked() and self._waiting >= self.queue:
            await send_error(send, self.too_busy(), {"retry-after": str(self.retry_after_s)})
            return
        self._waiting += 1
        bound = self.wait_bound_s()
        try:
            # wait_for returns the place when the acquire completes while it is being cancelled (none is lost).
            await asyncio.wait_for(self._places.acquire(), bound)
        except TimeoutError:
            await send_error(send, self.waited_too_long(bound), {"retry-after": str(self.retry_after_s)})
            return
        finally:
            self._waiting -= 1
        began, status = time.monotonic(), 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watched)
            if status == 200:  # an ask refused at once (unknown workspace, invalid) says nothing of what answers cost
                self._recent.append(time.monotonic() - began)
        finally:
            self._places.release()

    def too_busy(self) -> TooBusyError:
        """The error of an ask refused because every place and the queue are taken."""
        return TooBusyError(
            f"The API is answering as many questions as it can ({self.limit} at once, {self.queue} waiting). Try "
            f"again in {self.retry_after_s} s (Retry-After); WORKSPACE_API__MAX_CONCURRENT_ASKS and "
            "WORKSPACE_API__MAX_QUEUED_ASKS set these bounds."
        )

    def waited_too_long(self, bound: float) -> TooBusyError:
        """The error of an ask that waited `bound` seconds in the queue without getting a place (503, same code)."""
        return TooBusyError(
            f"The API could not start on this question within {bound:.1f} s: the questions before it took every "
            f"place. Try again in {self.retry_after_s} s (Retry-After); WORKSPACE_API__MAX_ASK_WAIT_S and "
            "WORKSPACE_API__MAX_ASK_WAIT_ASKS set this bound.",
            status=503,
        )
