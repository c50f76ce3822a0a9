"""API hardening benchmark (issue 27, targets): memory under unauthenticated large bodies, and answers under a burst.

    .venv/bin/python -m bench.hardening [--asks 200] [--queued N] [--label default]

A Chroma server (behind its gate), a worker and `workspace-app api` start on a temporary data dir as in the API
tests (the stack of `tests/api/api_stack.py`), with the default admission bounds; one workspace holds a two-page
guideline excerpt. Then:

1. bodies: the API (keys set) gets 4 parallel 150 MB `POST /ask` bodies as `multipart/form-data` without a key,
   once with the length declared and once chunked; the Chroma gate gets the same without its token. The RSS
   (VmRSS) of the receiving process before, at its peak (polled every 20 ms) and after. Target: growth < 20 MB.
2. burst: the single-client ask latency (20 asks one after another), then `--asks` asks fired at once (a barrier)
   while `/health/live` is polled every 50 ms from another process. Admitted asks' latency includes their wait in
   the admission queue (WORKSPACE_API__MAX_QUEUED_ASKS, 16 by default; `--queued` sets it). Targets: every ask answered (200, 429 or 503) within 30 s,
   /health/live p95 < 200 ms, admitted asks' p95 <= 3 x the single-client p95.

Results go to bench/results/hardening.json under the label.
"""

from __future__ import annotations

import argparse
import json
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


def timed_ask(url: str, start: threading.Barrier | None = None) -> tuple[int, float]:
    """(status, seconds) of one ask with the key; the client is made before the start (its SSL context costs ~10 ms
    of CPU, which 200 threads would otherwise spend inside the measured window)."""
    import httpx

    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {KEY}"}, trust_env=False) as client:
        if start is not None:
            start.wait()
        began = time.monotonic()
        try:
            status = client.post(f"{url}/ask", json={"question": QUESTION, "workspace": "Bench"}).status_code
        except Exception:  # noqa: BLE001 - counted as unanswered
            status = 0
        return status, time.monotonic() - began


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


def burst(url: str, asks: int, folder: Path) -> dict[str, Any]:
    """Single-client latency, then `asks` at once with /health/live polled beside them (from a process of its own,
    so that the 200 client threads here do not slow the poller down)."""
    import subprocess

    single = [timed_ask(url)[1] for _ in range(SINGLE_ASKS)]
    start = threading.Barrier(asks)
    stop = folder / "stop-polling"
    poller = subprocess.Popen([sys.executable, "-c", POLLER, f"{url}/health/live", str(stop)], stdout=subprocess.PIPE)
    began = time.monotonic()
    with ThreadPoolExecutor(asks) as pool:
        futures = [pool.submit(timed_ask, url, start) for _ in range(asks)]
        results = [f.result() for f in futures]
    wall = time.monotonic() - began
    stop.touch()
    live_s: list[float] = json.loads(poller.communicate(timeout=60)[0])
    admitted = [s for status, s in results if status == 200]
    single_p95 = percentile(single, 95)
    return {
        "asks": asks, "statuses": dict(Counter(str(status) for status, _ in results)), "wall_s": round(wall, 1),
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


def run(asks: int, queued: int | None) -> dict[str, Any]:
    """Start the stack, seed it, measure."""
    sys.path[:0] = [str(REPO / "tests" / "api"), str(REPO / "tests")]  # the test helpers (api_stack, fake_openai)
    import httpx
    from api_stack import Api, Process, environ, start_chroma, start_worker, wait_settled

    with tempfile.TemporaryDirectory(prefix="bench-hardening-") as folder:
        root = Path(folder)
        pdf = excerpt(root)
        chroma, chroma_url, token = start_chroma(root)
        env = environ(WORKSPACE_CHROMA_URL=chroma_url, WORKSPACE_STORAGE__CHROMA_TOKEN=token,
                      WORKSPACE_QUEUE__POLL_MAX_DELAY_S="0.1", WORKSPACE_API__KEYS=KEY,
                      **({} if queued is None else {"WORKSPACE_API__MAX_QUEUED_ASKS": str(queued)}))
        children: list[Process | Api] = [chroma]
        try:
            children.append(start_worker(root / "data", env))
            api = Api(root / "data", env, "api-bench")
            children.append(api)
            api.wait_ready()
            headers = {"Authorization": f"Bearer {KEY}"}
            with httpx.Client(base_url=api.url, headers=headers, timeout=120, trust_env=False) as client:
                assert client.post("/workspaces", json={"name": "Bench"}).status_code == 201
                with pdf.open("rb") as stream:
                    sent = client.post("/workspaces/Bench/documents", files={"file": (pdf.name, stream, "application/pdf")})
                assert sent.status_code == 202, sent.text
                assert [d["status"] for d in wait_settled(client, "Bench", 300)] == ["ready"]
                timed_ask(api.url)  # warm
            log("bodies ...")
            bodies = {
                "api_declared": memory_under_bodies(f"{api.url}/ask", api.child.process.pid, True),
                "api_chunked": memory_under_bodies(f"{api.url}/ask", api.child.process.pid, False),
                "chroma_gate_chunked": memory_under_bodies(f"{chroma_url}/api/v2/tenants", chroma.process.pid, False),
                "chroma_gate_declared": memory_under_bodies(f"{chroma_url}/api/v2/tenants", chroma.process.pid, True),
            }
            log(f"burst of {asks} asks ...")
            return {"bodies": bodies, "burst": burst(api.url, asks, root)}
        finally:
            for child in reversed(children):
                child.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=200, help="asks fired at once (default 200)")
    parser.add_argument("--queued", type=int, help="WORKSPACE_API__MAX_QUEUED_ASKS (default: the setting's, 16)")
    parser.add_argument("--label", default="default")
    args = parser.parse_args()
    figures = {"max_queued_asks": args.queued, **run(args.asks, args.queued)}
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[args.label] = {"when": now_iso(), "git": git_info(), "machine": machine_info(), **figures}
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    log(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
