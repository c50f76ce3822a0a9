"""Team deployment benchmark (issue 30, targets): workers on two machines with one killed, and users asking at once
through the API on PostgreSQL against SQLite.

    .venv/bin/python -m bench.workers [--docs 13] [--users 16] [--asks-per-user 3] [--skip-kill] [--skip-users]
                                      [--label latest]

Every server is started here, throwaway: a PostgreSQL cluster, a redis-server and a Chroma server behind serve's
token gate (bench/common/services.py), with a shared dir standing in for the mounted volume.

1. kill: two `workspace-app worker` processes with default settings, each in its own working directory and data
   dir; the second runs under another host name (`unshare --user --uts`, when the kernel allows it), so its death is
   seen only as a remote worker's is, by its lease going stale (`WORKSPACE_QUEUE__LEASE_TIMEOUT_S`, 30 s; the
   survivor sweeps every `WORKSPACE_QUEUE__SWEEP_S`, 10 s). The `--docs` smallest corpus PDFs (all 13 by default) are
   queued from a third machine's CLI; once a document is ready and the second worker is embedding one, it gets SIGKILL. Then, until
   every document has settled: lost (queued but not ready at the end), duplicated (a document whose chunk rows,
   distinct chunk ids, keyword rows or vectors are not all its chunk count), double-processed (a document the
   workers' logs say became ready more than once), and for each job the killed worker held, the seconds from the
   kill until the survivor freed its lease and queued it again ("recovered", target <= 60 s) and until the
   survivor started it ("taken over": later when the survivor is busy and other jobs were queued before it).
2. users: the same `--user-docs` ingested by the CLI into a SQLite catalog and into a PostgreSQL one; for each, a
   `workspace-app api` with `--users` API keys, and that many clients, one key each, asking `--asks-per-user`
   questions one after another, all starting at once. A client told to wait (429/503 `too_busy`, the API's
   admission bounds at their defaults) waits the Retry-After and asks again, as the API asks it to; an error is an
   ask that does not end in 200. p50/p95 are each ask's whole time, waits included, and a single client's
   (one after another) beside them.

Results: bench/results/workers.json under the label, and the table in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import CORPUS_DIR, RESULTS_DIR, all_inputs, git_info, log, machine_info, now_iso, percentile
from bench.common.services import chroma, postgres, redis, wait_for
from bench.common.serving import free_port

OUT = RESULTS_DIR / "workers.json"
REMOTE_HOST = "machine-b"
USER_DOCS = ("arnett-2014-guideline-strategies.pdf", "mosca-2011-women-cvd.pdf", "zh-acute-af-ed-2024.pdf")
QUESTIONS = (
    "Should aspirin be used in women with coronary heart disease?",
    "What INR range should warfarin target in women with atrial fibrillation?",
    "What lifestyle changes are recommended to prevent cardiovascular disease in women?",
    "How are the classes of recommendation and levels of evidence defined?",
    "急性房颤患者在急诊如何控制心室率？",
    "When should hormone therapy not be used for cardiovascular prevention?",
)
SETTLED = ("ready", "failed", "cancelled")


def other_host_prefix() -> list[str]:
    """The argv prefix that runs a command under another host name, or [] where the kernel forbids it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    prefix = [unshare, "--user", "--map-root-user", "--uts", "sh", "-c", f'hostname {REMOTE_HOST} && exec "$@"', "-"]
    probe = subprocess.run([*prefix, "hostname"], capture_output=True, text=True, check=False, timeout=30)
    return prefix if probe.returncode == 0 and probe.stdout.strip() == REMOTE_HOST else []


class Machine:
    """A working directory with its own data dir; its processes get only the deployment's settings."""

    def __init__(self, root: Path, settings: dict[str, str], prefix: list[str] | None = None) -> None:
        self.root = root
        self.data_dir = root / "data"
        root.mkdir(parents=True, exist_ok=True)
        self.settings = settings
        self.prefix = prefix or []
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = root / "process.log"

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **self.settings})
        return env

    def argv(self, *args: str | Path) -> list[str]:
        return [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(self.data_dir), *map(str, args)]

    def run(self, *args: str | Path, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=timeout, env=self.environ(),
                              cwd=self.root, check=False)
        if done.returncode != 0:
            raise SystemExit(f"workspace-app {' '.join(map(str, args))[:80]} failed: {done.stderr[-2000:]}")
        return done

    def start(self, *args: str) -> None:
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen([*self.prefix, *self.argv(*args)], stdout=out, stderr=out,
                                            stdin=subprocess.DEVNULL, env=self.environ(), cwd=self.root)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def owner_prefix(self) -> str:
        return f"worker@{REMOTE_HOST if self.prefix else socket.gethostname()}:"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def document_rows(url: str) -> dict[str, dict[str, Any]]:
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(url) as db, db.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(
            "SELECT id, name, status, stage, lease_owner, chunks, chunks_embedded, pages FROM documents"
        ).fetchall()
    return {row["id"]: row for row in rows}


# 1. Two workers, one killed


def kill_run(
    root: Path, database: Any, redis_url: str, chroma_at: tuple[str, str], docs: int, out: dict[str, Any]
) -> None:
    """Queue `docs` PDFs for two workers on two 'machines', kill one mid-document, and check the outcome; what is
    measured goes into `out` as it comes (a run stopped half-way keeps it)."""
    url = database("kill")
    deployment = {
        "WORKSPACE_CATALOG__URL": url, "WORKSPACE_QUEUE__BACKEND": "redis", "WORKSPACE_QUEUE__REDIS_URL": redis_url,
        "WORKSPACE_STORAGE__CHROMA_URL": chroma_at[0], "WORKSPACE_STORAGE__CHROMA_TOKEN": chroma_at[1],
        "WORKSPACE_SHARED__DIR": str(root / "mnt"),
    }
    prefix = other_host_prefix()
    front, here = Machine(root / "front", deployment), Machine(root / "machine-a", deployment)
    remote = Machine(root / "machine-b", deployment, prefix)
    files = sorted(all_inputs(), key=lambda path: path.stat().st_size)[:docs]  # the smallest first
    front.run("workspace", "create", "W")
    started = time.monotonic()
    try:
        for machine in (here, remote):
            machine.start("worker")
        wait_for(lambda: all("consuming with" in m.log() for m in (here, remote)), 600, "both workers")
        log(f"workers consuming after {time.monotonic() - started:.0f} s; the second on host "
            f"{REMOTE_HOST if prefix else 'this one (no UTS namespace here)'}")
        queued = front.run("ingest", "-w", "W", "--no-wait", *files)
        ids = [json.loads(line)["document_id"] for line in queued.stdout.splitlines()]
        queued_at = time.monotonic()
        out.update(documents=len(files), remote_host_name=REMOTE_HOST if prefix else None)
        held, killed_at = kill_when_mid_document(url, remote, docs)
        out["killed_after_s"] = round(killed_at - queued_at, 1)
        log(f"killed the second worker {killed_at - queued_at:.0f} s after queueing; it held {len(held)} job(s)")
        out["jobs_held_by_killed_worker"] = []
        follow_recovery(url, held, here, remote, killed_at, out["jobs_held_by_killed_worker"])
        wait_for(lambda: all(r["status"] in SETTLED for r in document_rows(url).values()), 4 * 3600, "every document")
        wall = time.monotonic() - queued_at
    finally:
        here.stop()
        remote.stop(signal.SIGKILL)
    outcome = check_documents(url, ids, deployment, root / "reader", [here, remote])
    log(f"settled in {wall:.0f} s: {json.dumps(outcome['totals'])}")
    out.update(pages=sum(r["pages"] for r in document_rows(url).values()), wall_s_from_queueing=round(wall, 1),
               **outcome)


def kill_when_mid_document(url: str, remote: Machine, docs: int) -> tuple[list[str], float]:
    """Wait until a document is ready (when more than 3 are queued) and the remote worker is embedding one; kill it.
    Returns the jobs it held and when it was killed."""
    need_ready = 1 if docs > 3 else 0
    while True:
        rows = document_rows(url).values()
        mine = [r for r in rows if r["status"] == "running" and (r["lease_owner"] or "").startswith(remote.owner_prefix())]
        ready = sum(r["status"] == "ready" for r in rows)
        if ready >= need_ready and any(r["stage"] == "embedding" and r["chunks_embedded"] > 0 for r in mine):
            assert remote.process is not None
            remote.process.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            remote.process.wait(60)
            return [str(r["id"]) for r in mine], killed_at
        if all(r["status"] in SETTLED for r in rows) and rows:
            raise SystemExit("every document settled before the second worker could be killed mid-document")
        time.sleep(0.05)


def follow_recovery(
    url: str, held: list[str], here: Machine, remote: Machine, killed_at: float, out: list[dict[str, Any]]
) -> None:
    """For each job the killed worker held, into `out` as they come: seconds until its lease was freed and the job
    queued again, and until the survivor ran it."""
    rows = document_rows(url)
    timeline = {job: {"document": rows[job]["name"]} for job in held}
    out.extend(timeline.values())
    deadline = time.monotonic() + 4 * 3600
    while any("taken_over_s" not in t for t in timeline.values()) and time.monotonic() < deadline:
        rows = document_rows(url)
        for job, seen in timeline.items():
            owner, status = rows[job]["lease_owner"] or "", rows[job]["status"]
            elapsed = round(time.monotonic() - killed_at, 1)
            if "recovered_s" not in seen and not owner.startswith(remote.owner_prefix()):
                seen["recovered_s"] = elapsed
                log(f"job {job} ({seen['document']}) recovered {elapsed} s after the kill")
            if "taken_over_s" not in seen and (owner.startswith(here.owner_prefix()) or status in SETTLED):
                seen["taken_over_s"] = elapsed
                log(f"job {job} ({seen['document']}) taken over {elapsed} s after the kill")
        time.sleep(0.2)


def check_documents(
    url: str, ids: list[str], deployment: dict[str, str], reader_dir: Path, workers: list[Machine]
) -> dict[str, Any]:
    """Lost, duplicated and double-processed documents, from the catalog, Chroma and the workers' logs."""
    import psycopg

    rows = document_rows(url)
    with psycopg.connect(url) as db:
        chunk_rows: dict[str, int] = dict(db.execute("SELECT document_id, COUNT(*) FROM chunks GROUP BY document_id").fetchall())
        distinct: dict[str, int] = dict(db.execute("SELECT document_id, COUNT(DISTINCT id) FROM chunks GROUP BY document_id").fetchall())
        keyword: dict[str, int] = dict(db.execute(
            "SELECT c.document_id, COUNT(*) FROM keyword_lengths k JOIN chunks c ON c.id = k.chunk_id "
            "GROUP BY c.document_id"
        ).fetchall())
    vectors = vector_counts(deployment, reader_dir, rows)
    ready_runs = Counter(job for worker in workers for job in re.findall(r"job (\w+) ready in", worker.log()))
    per_document: list[dict[str, Any]] = []
    for job in ids:
        row = rows.get(job)
        counts = {"chunks": row["chunks"] if row else 0, "chunk_rows": chunk_rows.get(job, 0),
                  "distinct_chunk_ids": distinct.get(job, 0), "keyword_rows": keyword.get(job, 0),
                  "vectors": vectors.get(job, 0)}
        per_document.append({
            "document": row["name"] if row else job, "status": row["status"] if row else "missing", **counts,
            "lost": row is None or row["status"] != "ready", "duplicated": len(set(counts.values())) > 1,
            "ready_runs": ready_runs.get(job, 0),
        })
    totals = {
        "lost": sum(d["lost"] for d in per_document), "duplicated": sum(d["duplicated"] for d in per_document),
        "double_processed": sum(d["ready_runs"] > 1 for d in per_document),
        "unexpected_documents": len(set(rows) - set(ids)), "chunks": sum(d["chunks"] for d in per_document),
    }
    return {"totals": totals, "per_document": per_document}


def vector_counts(deployment: dict[str, str], data_dir: Path, rows: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Vectors per document in the Chroma server, read through the app's own index (a 'reader' machine)."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import load_settings

    saved = dict(os.environ)
    os.environ.update(deployment)
    try:
        app = build_app(load_settings(data_dir))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        workspace = app.workspaces.get("W")
        return {job: app.vectors.count(workspace.id, job) for job in rows}
    finally:
        app.catalog.close()


# 2. Users at once through the API


def users_run(root: Path, database: Any, chroma_at: tuple[str, str], users: int, asks: int) -> dict[str, Any]:
    """The same workspace on SQLite and on PostgreSQL, asked by `users` clients at once through the API."""
    results = {}
    for kind in ("sqlite", "postgresql"):
        settings = {"WORKSPACE_STORAGE__CHROMA_URL": chroma_at[0], "WORKSPACE_STORAGE__CHROMA_TOKEN": chroma_at[1]}
        if kind == "postgresql":
            settings["WORKSPACE_CATALOG__URL"] = database("users")
        machine = Machine(root / f"users-{kind}", settings)
        started = time.monotonic()
        machine.run("workspace", "create", "W")
        machine.run("ingest", "-w", "W", *(CORPUS_DIR / name for name in USER_DOCS))
        log(f"{kind}: {len(USER_DOCS)} documents ingested in {time.monotonic() - started:.0f} s")
        results[kind] = ask_at_once(machine, users, asks)
        log(f"{kind}: {json.dumps(results[kind])}")
    return {"documents": list(USER_DOCS), "users": users, "asks_per_user": asks, **results}


def ask_at_once(machine: Machine, users: int, asks: int) -> dict[str, Any]:
    """Start the API with one key per user; a single client's latency, then every user at once."""
    import httpx

    keys = [f"bench-user-{n:02d}-{os.urandom(6).hex()}" for n in range(users)]
    machine.settings["WORKSPACE_API__KEYS"] = ",".join(keys)
    port = free_port()
    machine.start("api", "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _live(base), 300, "the API")
        with httpx.Client(base_url=base, timeout=300, trust_env=False,
                          headers={"Authorization": f"Bearer {keys[0]}"}) as client:
            for question in QUESTIONS:  # warm: models loaded, sentence vectors read
                ask(client, question)
            single = [ask(client, q)["seconds"] for q in QUESTIONS]
        barrier = threading.Barrier(users)
        outcomes: list[dict[str, Any]] = []
        lock = threading.Lock()

        def user(number: int) -> None:
            with httpx.Client(base_url=base, timeout=300, trust_env=False,
                              headers={"Authorization": f"Bearer {keys[number]}"}) as client:
                barrier.wait()
                for k in range(asks):
                    result = ask(client, QUESTIONS[(number + k) % len(QUESTIONS)])
                    with lock:
                        outcomes.append(result)

        threads = [threading.Thread(target=user, args=(n,)) for n in range(users)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
    finally:
        machine.stop(signal.SIGINT)
    seconds = [o["seconds"] for o in outcomes]
    return {
        "single_client": latency(single), "asks": len(outcomes), "errors": sum(o["status"] != 200 for o in outcomes),
        "statuses": dict(Counter(str(o["status"]) for o in outcomes)), "busy_replies": sum(o["busy"] for o in outcomes),
        "wall_s": round(wall, 1), "asks_per_s": round(len(outcomes) / wall, 2), **latency(seconds),
    }


def ask(client: Any, question: str, tries: int = 30) -> dict[str, Any]:
    """One POST /ask, asked again after Retry-After while the API says it is busy; its whole time and outcome."""
    import httpx

    started, busy, status = time.perf_counter(), 0, 0
    for _ in range(tries):
        try:
            response = client.post("/ask", json={"question": question, "workspace": "W"})
            status = response.status_code
        except httpx.HTTPError as exc:
            status = type(exc).__name__  # type: ignore[assignment]
            break
        if status not in (429, 503) or response.json().get("error", {}).get("code") != "too_busy":
            break
        busy += 1
        time.sleep(float(response.headers.get("Retry-After", "1")))
    return {"seconds": time.perf_counter() - started, "status": status, "busy": busy}


def _live(base: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base}/health/live", timeout=5, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


def latency(seconds: list[float]) -> dict[str, float]:
    """p50/p95/max in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1), "max_ms": round(max(ms), 1)}


def targets(record: dict[str, Any]) -> dict[str, bool]:
    """The issue's targets, for the parts that ran."""
    checked = {}
    if "totals" in record.get("kill", {}):
        kill = record["kill"]
        checked["none_lost_duplicated_or_double_processed"] = not any(
            kill["totals"][k] for k in ("lost", "duplicated", "double_processed", "unexpected_documents"))
        checked["recovered_within_60s"] = all(j.get("recovered_s", 1e9) <= 60 for j in kill["jobs_held_by_killed_worker"])
    if "users" in record:
        checked["users_on_postgresql_no_errors"] = record["users"]["postgresql"]["errors"] == 0
    return checked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=13, help="corpus PDFs queued in the kill run (default all 13)")
    parser.add_argument("--users", type=int, default=16, help="clients asking at once (default 16)")
    parser.add_argument("--asks-per-user", type=int, default=3)
    parser.add_argument("--skip-kill", action="store_true")
    parser.add_argument("--skip-users", action="store_true")
    parser.add_argument("--label", default="latest")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))  # what was measured is still written
    record: dict[str, Any] = {"when": now_iso(), "git": git_info(), "machine": machine_info()}
    root = Path(tempfile.mkdtemp(prefix="bench-workers-"))
    try:
        with postgres() as database, redis(root / "redis") as redis_url, chroma(root / "chroma") as at:
            if not args.skip_users:
                record["users"] = users_run(root, database, at, args.users, args.asks_per_user)
            if not args.skip_kill:
                kill_run(root, database, redis_url, at, args.docs, record.setdefault("kill", {}))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - keep what was measured; the file says what stopped it
        record["stopped_by"] = f"{type(exc).__name__}: {exc}"
        log(record["stopped_by"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    record["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    record["targets"] = targets(record) if "stopped_by" not in record else {}
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[args.label] = record
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(record["targets"], indent=2))


if __name__ == "__main__":
    main()
