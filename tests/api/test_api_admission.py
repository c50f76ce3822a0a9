"""Admission of asks, in process (httpx's ASGITransport): behind `AskAdmission`, an app that takes a second per
ask. One ask is admitted, two wait; the one beyond the queue gets 429 at once, and the waiting ones that get no
place within the wait bound get 503, both with Retry-After and the `too_busy` code. Other routes pass untouched."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from workspace_app.adapters.api.admission import AskAdmission

ASK_S = 1.0
WAIT_S = 0.2
RETRY_AFTER_S = 3


async def slow_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app answering every request after ASK_S with 200."""
    await asyncio.sleep(ASK_S)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"answered"})


async def burst(paths: list[str]) -> list[tuple[httpx.Response, float]]:
    """The requests sent at once (in this order), each with the seconds it took."""
    admission = AskAdmission(slow_app, limit=1, queue=2, retry_after_s=RETRY_AFTER_S, wait_s=WAIT_S)
    transport = httpx.ASGITransport(app=admission)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

        async def timed(path: str, delay: float) -> tuple[httpx.Response, float]:
            await asyncio.sleep(delay)  # keep the arrival order
            began = time.monotonic()
            response = await (client.post(path, json={}) if path == "/ask" else client.get(path))
            return response, time.monotonic() - began

        return await asyncio.gather(*(timed(path, 0.01 * i) for i, path in enumerate(paths)))


def test_beyond_the_queue_429_at_once_and_after_the_wait_bound_503_both_with_retry_after() -> None:
    replies = asyncio.run(burst(["/ask", "/ask", "/ask", "/ask", "/health/live"]))
    (first, first_s), *waiting, (beyond, beyond_s), (live, live_s) = replies
    assert first.status_code == 200 and first_s >= ASK_S
    for reply, seconds in waiting:  # queued, then refused once WAIT_S passed without a place
        assert reply.status_code == 503 and WAIT_S <= seconds < ASK_S, (reply.status_code, seconds)
        assert reply.headers["retry-after"] == str(RETRY_AFTER_S)
        error = reply.json()["error"]
        assert error["code"] == "too_busy" and "WORKSPACE_API__MAX_ASK_WAIT_S" in error["message"]
    assert beyond.status_code == 429 and beyond_s < WAIT_S  # the queue was full: refused at once
    assert beyond.headers["retry-after"] == str(RETRY_AFTER_S)
    assert "WORKSPACE_API__MAX_QUEUED_ASKS" in beyond.json()["error"]["message"]
    assert live.status_code == 200 and live_s >= ASK_S  # not an ask: no place taken, none refused (the app is slow)


def test_a_place_freed_within_the_wait_bound_admits_the_next_ask() -> None:
    async def run() -> list[tuple[httpx.Response, float]]:
        admission = AskAdmission(slow_app, limit=1, queue=1, retry_after_s=RETRY_AFTER_S, wait_s=2 * ASK_S)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=admission), base_url="http://x") as client:

            async def timed(delay: float) -> tuple[httpx.Response, float]:
                await asyncio.sleep(delay)
                began = time.monotonic()
                response = await client.post("/ask", json={})
                return response, time.monotonic() - began

            return await asyncio.gather(timed(0), timed(0.01))

    (first, _), (second, second_s) = asyncio.run(run())
    assert first.status_code == 200 and second.status_code == 200 and second_s >= 2 * ASK_S - 0.1  # it waited its turn


def test_the_wait_bound_follows_the_recent_ask_time() -> None:
    """With `wait_asks`, a queued ask waits at most that many recent median ask times (here 0.5 x ~1 s), not the
    whole `wait_s`; before any ask was answered, `wait_s` holds."""
    async def run() -> tuple[float, list[tuple[int, float]]]:
        admission = AskAdmission(slow_app, limit=1, queue=1, retry_after_s=RETRY_AFTER_S, wait_s=5.0, wait_asks=0.5)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=admission), base_url="http://x") as client:
            before = admission.wait_bound_s()
            assert (await client.post("/ask", json={})).status_code == 200  # one answered: the median is ~ASK_S

            async def timed(delay: float) -> tuple[int, float]:
                await asyncio.sleep(delay)
                began = time.monotonic()
                response = await client.post("/ask", json={})
                return response.status_code, time.monotonic() - began

            return before, list(await asyncio.gather(timed(0), timed(0.01)))

    before, [(first, _), (queued, queued_s)] = asyncio.run(run())
    assert before == 5.0
    assert first == 200 and queued == 503 and 0.5 * ASK_S <= queued_s < ASK_S, (queued, queued_s)


def test_asks_refused_by_the_app_do_not_set_the_wait_bound() -> None:
    """An ask the app refuses at once (a 404 for an unknown workspace, say) is not an ask's cost: only answered
    (200) asks count, so a run of quick errors cannot shrink the bound for everyone else."""
    async def refusing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def run() -> float:
        admission = AskAdmission(refusing, limit=1, queue=1, retry_after_s=RETRY_AFTER_S, wait_s=5.0, wait_asks=0.5)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=admission), base_url="http://x") as client:
            for _ in range(3):
                assert (await client.post("/ask", json={})).status_code == 404
        return admission.wait_bound_s()

    assert asyncio.run(run()) == 5.0
