"""API hardening benchmark (issue 27, targets): memory under unauthenticated large bodies, and answers under a burst.

    .venv/bin/python -m bench.hardening [--asks 200] [--workspace dev|excerpt] [--concurrent C] [--queued Q]
                                        [--wait S] [--wait-asks K] [--skip-bodies] [--threads] [--label default]

A Chroma server (behind its gate), a worker and `workspace-app api` start on a temporary data dir as in the API
tests (the stack of `tests/api/api_stack.py`), with the default admission bounds unless `--concurrent`
(WORKSPACE_API__MAX_CONCURRENT_ASKS), `--queued` (WORKSPACE_API__MAX_QUEUED_ASKS), `--wait`
(WORKSPACE_API__MAX_ASK_WAIT_S) or `--wait-asks` (WORKSPACE_API__MAX_ASK_WAIT_ASKS) set them. The workspace (`--workspace`): `dev` (default) is a copy of the data dir
bench.streaming prepares (the 5 dev PDFs, 1,320 chunks), its Chroma store served by the Chroma server, and every ask
a different dev question (cycling through the 166); `excerpt` is the two-page guideline excerpt uploaded and
ingested by the worker, every ask the same question (as measured before 2026-11-27). Then:

1. bodies: the API (keys set) gets 4 parallel 150 MB `POST /ask` bodies as `multipart/form-data` without a key,
   once with the length declared and once chunked; the Chroma gate gets the same without its token. The RSS
   (VmRSS) of the receiving process before, at its peak (polled every 20 ms) and after. Target: growth < 20 MB.
2. burst: the single-client ask latency (20 asks one after another, after 5 warming ones), then `--asks` asks
   sent at once while `/health/live` is polled every 50 ms from another process. The asks go from one event loop
   on connections opened beforehand, their bytes made in advance, so that the measuring client spends next to no
   CPU on the 2 cores it shares with the server (`--threads`: a thread and an httpx client per ask, behind a
   barrier, as measured before). An admitted ask's latency is the client's: from sending it to the whole answer,
   its wait in the admission queue and before the server read it included.
   Targets: every ask answered (200, 429 or 503) within 30 s, /health/live p95 < 200 ms, admitted asks' p95 <= 3 x
   the single-client p95.

Results go to bench/results/hardening.json under the label.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import REPO, RESULTS_DIR, git_info, log, machine_info, now_iso, percentile
from bench.fuzz import excerpt

OUT = RESULTS_DIR / "hardening.json"
KEY = "bench-key"
BODY_MB = 150
PARALLEL = 4
QUESTION = "What INR range should warfarin target in women with atrial fibrillation?"
SINGLE_ASKS = 20
WARM_ASKS = 5


def rss_mb(pid: int) -> float:
    """The process's resident set size in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def body_chunks(total_mb: int) -> Iterator[bytes]:
    """A multipart-looking body, 1 MB at a time (the sender holds only one chunk)."""
    yield b"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n"
    chunk = b"\0" * (1 << 20)
    for _ in range(total_mb):
        yield chunk


def send_large(url: str, declared: bool) -> str:
    """One 150 MB unauthenticated POST; the status it got, or how the connection ended."""
    import httpx

    headers = {"Content-Type": "multipart/form-data; boundary=x"}
    if declared:
        headers["Content-Length"] = str(BODY_MB * (1 << 20) + 71)
    try:
        response = httpx.post(url, content=body_chunks(BODY_MB), headers=headers, timeout=120, trust_env=False)
        return str(response.status_code)
    except Exception as exc:  # noqa: BLE001 - a server that answers early and closes may break the upload
        return f"closed ({type(exc).__name__})"


def memory_under_bodies(url: str, pid: int, declared: bool) -> dict[str, Any]:
    """RSS of `pid` while 4 large unauthenticated bodies are sent to `url` in parallel."""
    before = rss_mb(pid)
    peak = before
    with ThreadPoolExecutor(PARALLEL) as pool:
        futures = [pool.submit(send_large, url, declared) for _ in range(PARALLEL)]
        while not all(f.done() for f in futures):
            peak = max(peak, rss_mb(pid))
            time.sleep(0.02)
        outcomes = Counter(f.result() for f in futures)
    time.sleep(0.5)
    after = rss_mb(pid)
    return {"declared_length": declared, "outcomes": dict(outcomes), "rss_before_mb": round(before, 1),
            "rss_peak_mb": round(peak, 1), "rss_after_mb": round(after, 1), "growth_mb": round(peak - before, 1)}


class Asking:
    """What the burst asks: the workspace, and the questions in turn (one question, or the dev questions)."""

    def __init__(self, workspace: str, questions: list[str]) -> None:
        self.workspace = workspace
        self._next = itertools.cycle(questions)
        self._lock = threading.Lock()

    def question(self) -> str:
        with self._lock:
            return next(self._next)


def timed_ask(url: str, asking: Asking, start: threading.Barrier | None = None) -> tuple[int, float]:
    """(status, seconds) of one ask with the key; the client is made before the start (its SSL context costs ~10 ms
    of CPU, which 200 threads would otherwise spend inside the measured window)."""
    import httpx

    question = asking.question()
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {KEY}"}, trust_env=False) as client:
        if start is not None:
            start.wait()
        began = time.monotonic()
        try:
            status = client.post(f"{url}/ask", json={"question": question, "workspace": asking.workspace}).status_code
        except Exception:  # noqa: BLE001 - counted as unanswered
            status = 0
        return status, time.monotonic() - began


def raw_request(host: str, question: str, workspace: str) -> bytes:
    """One `POST /ask` with the key, as bytes on the wire."""
    body = json.dumps({"question": question, "workspace": workspace}).encode()
    head = (f"POST /ask HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


async def raw_ask(host: str, port: int, request: bytes, start: Any) -> tuple[int, float]:
    """(status, seconds) of one ask on a connection opened before `start` is set: the request is written whole
    (bytes made in advance) and the response read to its end, so the client spends next to no CPU in the window."""
    import asyncio

    reader, writer = await asyncio.open_connection(host, port)
    await start.wait()
    began = time.monotonic()
    try:
        writer.write(request)
        await writer.drain()
        response = await reader.read()  # Connection: close: until the server closes
        status = int(response.split(b" ", 2)[1]) if response else 0
    except (OSError, ValueError, IndexError):
        status = 0
    elapsed = time.monotonic() - began
    writer.close()
    return status, elapsed


def raw_burst(url: str, asks: int, asking: Asking) -> list[tuple[int, float]]:
    """`asks` asks sent at once from one event loop, their connections opened first."""
    import asyncio
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    requests = [raw_request(f"{host}:{port}", asking.question(), asking.workspace) for _ in range(asks)]

    async def run() -> list[tuple[int, float]]:
        start = asyncio.Event()
        tasks = [asyncio.create_task(raw_ask(host, port, request, start)) for request in requests]
        await asyncio.sleep(1.0)  # every connection open and idle
        start.set()
        return list(await asyncio.gather(*tasks))

    return asyncio.run(run())


POLLER = """
import json, os, sys, time, httpx
url, stop = sys.argv[1], sys.argv[2]
seconds = []
with httpx.Client(timeout=30, trust_env=False) as client:
    while not os.path.exists(stop):
        began = time.monotonic()
        client.get(url)
        seconds.append(time.monotonic() - began)
        time.sleep(0.05)
print(json.dumps(seconds))
"""


def burst(url: str, asks: int, folder: Path, asking: Asking, raw: bool = True) -> dict[str, Any]:
    """Single-client latency, then `asks` at once with /health/live polled beside them (from a process of its own,
    so that the clients here do not slow the poller down): from one event loop on connections opened beforehand
    (`raw`), or from as many threads with an httpx client each (as measured before 2026-11-27)."""
    import subprocess

    for _ in range(WARM_ASKS):
        timed_ask(url, asking)
    single = [timed_ask(url, asking)[1] for _ in range(SINGLE_ASKS)]
    load_single = [round(x, 2) for x in os.getloadavg()]
    stop = folder / "stop-polling"
    poller = subprocess.Popen([sys.executable, "-c", POLLER, f"{url}/health/live", str(stop)], stdout=subprocess.PIPE)
    began = time.monotonic()
    if raw:
        results = raw_burst(url, asks, asking)
    else:
        start = threading.Barrier(asks)
        with ThreadPoolExecutor(asks) as pool:
            futures = [pool.submit(timed_ask, url, asking, start) for _ in range(asks)]
            results = [f.result() for f in futures]
    wall = time.monotonic() - began
    stop.touch()
    live_s: list[float] = json.loads(poller.communicate(timeout=60)[0])
    admitted = [s for status, s in results if status == 200]
    single_p95 = percentile(single, 95)
    return {
        "loadavg_before_single": load_single, "loadavg_after_burst": [round(x, 2) for x in os.getloadavg()],
        "clients": "raw" if raw else "threads", "asks": asks, "statuses": dict(Counter(str(status) for status, _ in results)), "wall_s": round(wall, 1),
        "slowest_answer_s": round(max(s for _, s in results), 2),
        "answered_within_30s": sum(1 for status, s in results if status in (200, 429, 503) and s <= 30),
        "single_client": {"asks": SINGLE_ASKS, "p50_ms": round(percentile(single, 50) * 1000),
                          "p95_ms": round(single_p95 * 1000)},
        "admitted": {"asks": len(admitted), "p50_ms": round(percentile(admitted, 50) * 1000) if admitted else None,
                     "p95_ms": round(percentile(admitted, 95) * 1000) if admitted else None,
                     "p95_over_single_p95": round(percentile(admitted, 95) / single_p95, 2) if admitted else None},
        "health_live": {"polls": len(live_s), "p50_ms": round(percentile(live_s, 50) * 1000, 1),
                        "p95_ms": round(percentile(live_s, 95) * 1000, 1), "max_ms": round(max(live_s) * 1000, 1)},
    }


def admission_environ(admission: dict[str, Any]) -> dict[str, str]:
    """The API's admission settings from the options given (the defaults for the others)."""
    names = {"concurrent": "MAX_CONCURRENT_ASKS", "queued": "MAX_QUEUED_ASKS", "wait_s": "MAX_ASK_WAIT_S",
             "wait_asks": "MAX_ASK_WAIT_ASKS"}
    return {f"WORKSPACE_API__{names[k]}": str(v) for k, v in admission.items() if v is not None}


def seeded_dev(root: Path) -> tuple[Path, Asking]:
    """A copy of bench.streaming's prepared data dir (the 5 dev PDFs) as the stack's data dir."""
    from bench import streaming

    prepared = streaming.CACHE_DIR / "streaming"
    streaming.prepare(prepared, 5)
    data = root / "data"
    shutil.copytree(prepared, data, ignore=shutil.ignore_patterns("run"))
    return data, Asking(streaming.WORKSPACE, list(streaming.questions()))


def seed_excerpt(client: Any, pdf: Path) -> None:
    """The two-page excerpt uploaded and ingested by the worker."""
    from api_stack import wait_settled

    assert client.post("/workspaces", json={"name": "Bench"}).status_code == 201
    with pdf.open("rb") as stream:
        sent = client.post("/workspaces/Bench/documents", files={"file": (pdf.name, stream, "application/pdf")})
    assert sent.status_code == 202, sent.text
    assert [d["status"] for d in wait_settled(client, "Bench", 300)] == ["ready"]


def run(asks: int, workspace: str, admission: dict[str, Any], bodies_too: bool, raw: bool) -> dict[str, Any]:
    """Start the stack, seed it, measure."""
    sys.path[:0] = [str(REPO / "tests" / "api"), str(REPO / "tests")]  # the test helpers (api_stack, fake_openai)
    import httpx
    from api_stack import Api, Process, environ, start_chroma, start_worker

    with tempfile.TemporaryDirectory(prefix="bench-hardening-") as folder:
        root = Path(folder)
        if workspace == "dev":
            data, asking = seeded_dev(root)
            chroma, chroma_url, token = start_chroma(data)  # it serves the copied store (data/chroma)
        else:
            data, asking = root / "data", Asking("Bench", [QUESTION])
            chroma, chroma_url, token = start_chroma(root)
        env = environ(WORKSPACE_CHROMA_URL=chroma_url, WORKSPACE_STORAGE__CHROMA_TOKEN=token,
                      WORKSPACE_QUEUE__POLL_MAX_DELAY_S="0.1", WORKSPACE_API__KEYS=KEY, **admission_environ(admission))
        children: list[Process | Api] = [chroma]
        try:
            children.append(start_worker(data, env))
            api = Api(data, env, "api-bench")
            children.append(api)
            api.wait_ready()
            if workspace == "excerpt":
                headers = {"Authorization": f"Bearer {KEY}"}
                with httpx.Client(base_url=api.url, headers=headers, timeout=120, trust_env=False) as client:
                    seed_excerpt(client, excerpt(root))
            if not bodies_too:
                log(f"burst of {asks} asks ...")
                return {"burst": burst(api.url, asks, root, asking, raw)}
            log("bodies ...")
            bodies = {
                "api_declared": memory_under_bodies(f"{api.url}/ask", api.child.process.pid, True),
                "api_chunked": memory_under_bodies(f"{api.url}/ask", api.child.process.pid, False),
                "chroma_gate_chunked": memory_under_bodies(f"{chroma_url}/api/v2/tenants", chroma.process.pid, False),
                "chroma_gate_declared": memory_under_bodies(f"{chroma_url}/api/v2/tenants", chroma.process.pid, True),
            }
            log(f"burst of {asks} asks ...")
            return {"bodies": bodies, "burst": burst(api.url, asks, root, asking, raw)}
        finally:
            for child in reversed(children):
                child.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=200, help="asks fired at once (default 200)")
    parser.add_argument("--workspace", choices=("dev", "excerpt"), default="dev", help="what is asked (default dev)")
    parser.add_argument("--concurrent", type=int, help="WORKSPACE_API__MAX_CONCURRENT_ASKS (default: the setting's)")
    parser.add_argument("--queued", type=int, help="WORKSPACE_API__MAX_QUEUED_ASKS (default: the setting's)")
    parser.add_argument("--wait", type=float, help="WORKSPACE_API__MAX_ASK_WAIT_S (default: the setting's)")
    parser.add_argument("--wait-asks", type=float, help="WORKSPACE_API__MAX_ASK_WAIT_ASKS (default: the setting's)")
    parser.add_argument("--skip-bodies", action="store_true", help="only the burst")
    parser.add_argument("--threads", action="store_true",
                        help="burst from a thread per ask with an httpx client each (the client's CPU then competes "
                        "with the server's on the same cores), not from one event loop")
    parser.add_argument("--label", default="default")
    args = parser.parse_args()
    from workspace_app.config import ApiSettings

    defaults = ApiSettings()
    admission = {"concurrent": args.concurrent, "queued": args.queued, "wait_s": args.wait, "wait_asks": args.wait_asks}
    used = {"concurrent": defaults.max_concurrent_asks, "queued": defaults.max_queued_asks,
            "wait_s": defaults.max_ask_wait_s, "wait_asks": defaults.max_ask_wait_asks} | {
        k: v for k, v in admission.items() if v is not None}
    machine = machine_info()
    figures = {"workspace": args.workspace, "admission": used,
               **run(args.asks, args.workspace, admission, not args.skip_bodies, not args.threads)}
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[args.label] = {"when": now_iso(), "git": git_info(), "machine": machine, **figures}
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    log(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
