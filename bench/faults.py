"""Fault benchmark (issue 11): the faults a machine meets, each on a fresh data dir with real processes, and what
became of the documents without anyone stepping in.

    .venv/bin/python -m bench.faults [--only CASE ...] [--quick]

Every case ingests the same sources through a real `workspace-app worker` (or CLI) talking to a real Chroma
server, injects its fault, and waits for the documents to settle. It reports for each document its final state
and its chunks, keyword rows and vectors compared with an undisturbed run (lost = missing, duplicated = extra),
the seconds from the end of the fault until everything was ready (recovery without a person), and the errors
a user would have seen. A killed worker is started again after 1 s, as `serve`'s supervisor does.

Cases: undisturbed; Chroma held down for 5 s and for 60 s while vectors are written; kill -9 of the worker at
parsing, embedding, indexing and graph; kill -9 of a CLI ingest (a worker takes its job over); kill -9 of the
Chroma server mid-run (back at once); 8 concurrent asks and 16 concurrent writers during ingestion; two `serve`
on one data dir started 2 s apart; kill -9 of the UI under `serve`.

Results: bench/results/faults.json and the table in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import CORPUS_DIR, RESULTS_DIR, git_info, machine_info, now_iso
from bench.common.serving import CLI, LOOPBACK, free_port, healthy, stop

OUT = RESULTS_DIR / "faults.json"
# Sources: a long excerpt (its stages last long enough to be hit) and a short one.
SOURCES = (("kusumoto-2018-bradycardia.pdf", 10, 34), ("mosca-2011-women-cvd.pdf", 3, 6))
WORKSPACE = "Faults"
SETTLE_S = 600.0
GOOD_STATES = ("ready", "refused")
ENV = {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore",
    "WORKSPACE_QUEUE__SWEEP_S": "2", "WORKSPACE_QUEUE__LEASE_TIMEOUT_S": "10",
    "WORKSPACE_EMBEDDING__BATCH_SIZE": "8",
}


@dataclass
class Outcome:
    """What one case ended with."""

    case: str
    states: dict[str, str] = field(default_factory=dict)
    lost: int = 0
    duplicated: int = 0
    recovery_s: float | None = None
    user_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing lost or duplicated, every part ready (a second serve refused, as it must be), back within 60 s;
        a case that broke before it could say so is not ok."""
        return bool(self.states) and self.lost == 0 and self.duplicated == 0 and all(
            s in GOOD_STATES for s in self.states.values()
        ) and (self.recovery_s is None or self.recovery_s <= 60)


# Processes


def _environ(data_dir: Path, chroma: Chroma | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKSPACE_")}
    env.update(ENV)
    env["WORKSPACE_DATA_DIR"] = str(data_dir)
    if chroma is not None:
        env["WORKSPACE_CHROMA_URL"] = chroma.url
        env["WORKSPACE_STORAGE__CHROMA_TOKEN"] = chroma.token
    env.update(extra)
    return env


class Chroma:
    """A Chroma server on its own folder and port, stopped and started by the cases."""

    def __init__(self, folder: Path) -> None:
        from workspace_app.adapters.supervisor import chroma_spec, chroma_token

        self.url = f"http://127.0.0.1:{free_port()}"
        self.folder = folder
        self.token = chroma_token(folder)
        self.argv = chroma_spec(folder, self.url, self.token).argv
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = open(self.folder / "chroma.log", "ab")  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(self.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        _wait(lambda: _answers(f"{self.url}/api/v2/heartbeat", self.token), 60, "the Chroma server")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


class Worker:
    """A `workspace-app worker`, restartable."""

    def __init__(self, data_dir: Path, chroma: Chroma, log: Path) -> None:
        self.data_dir, self.chroma, self.log = data_dir, chroma, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = open(self.log, "ab")  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(
            [str(CLI), "--data-dir", str(self.data_dir), "worker"], stdout=out, stderr=out,
            stdin=subprocess.DEVNULL, env=_environ(self.data_dir, self.chroma),
        )
        _wait(lambda: "consuming with" in self.log.read_text(errors="replace"), 120, "the worker")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(60)


def _answers(url: str, token: str) -> bool:
    try:
        with LOOPBACK.open(urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}), timeout=2) as response:
            return 200 <= int(response.status) < 300
    except OSError:
        return False


def _wait(condition: Callable[[], object], timeout_s: float, what: str, poll_s: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


# The data dir under test


class Site:
    """A fresh data dir with a Chroma server and a client app in this process (to submit and to inspect)."""

    def __init__(self, folder: Path, sources: list[Path]) -> None:
        from workspace_app.adapters.wiring import build_app
        from workspace_app.config import Settings

        self.folder = folder
        self.data_dir = folder / "data"
        self.sources = sources
        (folder / "chroma").mkdir(parents=True)
        self.chroma = Chroma(folder / "chroma")
        self.chroma.start()
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        settings.storage.data_dir = self.data_dir
        settings.storage.chroma_url, settings.storage.chroma_token = self.chroma.url, self.chroma.token
        self.app = build_app(settings)
        self.app.workspaces.create(WORKSPACE)
        self.worker = Worker(self.data_dir, self.chroma, folder / "worker.log")

    def submit(self) -> list[str]:
        return [self.app.documents.submit(WORKSPACE, path).document_id or "" for path in self.sources]

    def documents(self) -> list[Any]:
        return self.app.documents.list(WORKSPACE)

    def settled(self) -> bool:
        found = self.documents()
        return len(found) == len(self.sources) and not any(d.is_active for d in found)

    def wait_stage(self, stage: str, timeout_s: float = 300) -> str:
        """Until a document is at `stage`; returns its id."""
        hit: list[str] = []

        def at_stage() -> bool:
            hit.extend(d.id for d in self.documents() if d.stage == stage and d.status == "running")
            return bool(hit)

        _wait(at_stage, timeout_s, f"a document at {stage}", poll_s=0.02)
        return hit[0]

    def counts(self) -> dict[str, tuple[int, int, int, bool]]:
        """Per source name: (chunks, keyword rows, vectors, chunk ids exactly <id>-00000..)."""
        found = {}
        with sqlite3.connect(self.data_dir / "catalog.sqlite") as db:
            for document in self.documents():
                ids = self.app.catalog.document_chunk_ids(document.id)
                expected = [f"{document.id}-{n:05d}" for n in range(len(ids))]
                vectors = self.app.vectors.count(document.workspace_id, document.id)
                found[document.name] = (len(ids), _keyword_rows(db, document.id), vectors, ids == expected)
        return found

    def close(self) -> None:
        self.worker.kill(signal.SIGTERM)
        self.app.catalog.close()
        self.chroma.kill()


def _keyword_rows(db: sqlite3.Connection, document_id: str) -> int:
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'fts_*' AND name NOT GLOB 'fts_*_*'"
    )]
    return sum(
        db.execute(f"SELECT COUNT(*) FROM {t} WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
                   (document_id,)).fetchone()[0]
        for t in tables
    )


@contextmanager
def site(root: Path, name: str, sources: list[Path]) -> Iterator[Site]:
    made = Site(root / name, sources)
    try:
        yield made
    finally:
        made.close()


def judge(case: str, made: Site, baseline: dict[str, tuple[int, int, int, bool]], fault_end: float | None) -> Outcome:
    """Wait for the documents to settle, then compare them with the undisturbed run."""
    outcome = Outcome(case)
    try:
        _wait(made.settled, SETTLE_S, "the documents to settle", poll_s=0.2)
        if fault_end is not None:
            outcome.recovery_s = round(max(0.0, time.monotonic() - fault_end), 1)
    except TimeoutError as exc:
        outcome.notes.append(str(exc))
    for document in made.documents():
        outcome.states[document.name] = document.status
        if document.status == "failed":
            outcome.user_errors.append(f"{document.name}: {document.error}")
    for name, (chunks, rows, vectors, exact) in made.counts().items():
        want = baseline.get(name, (0, 0, 0, True))[0]
        for got in (chunks, rows, vectors):
            outcome.lost += max(0, want - got)
            outcome.duplicated += max(0, got - want)
        if not exact:
            outcome.notes.append(f"{name}: chunk ids not exactly <id>-00000..")
    return outcome


# Cases


def undisturbed(root: Path, sources: list[Path]) -> tuple[Outcome, dict[str, tuple[int, int, int, bool]]]:
    with site(root, "undisturbed", sources) as made:
        made.worker.start()
        made.submit()
        outcome = judge("undisturbed", made, {}, None)
        baseline = made.counts()
    outcome.lost = outcome.duplicated = 0
    return outcome, baseline


def chroma_down(root: Path, sources: list[Path], baseline: dict[str, Any], seconds: float) -> Outcome:
    case = f"Chroma down {seconds:.0f} s during vector writes"
    with site(root, f"chroma-down-{seconds:.0f}", sources) as made:
        made.worker.start()
        made.submit()
        made.wait_stage("embedding")
        made.chroma.kill()
        time.sleep(seconds)
        made.chroma.start()
        outcome = judge(case, made, baseline, time.monotonic())
        retried = [d for d in made.documents() if d.attempt > 1]
        outcome.notes.append(f"{len(retried)} document(s) needed more than one try")
        return outcome


def kill_worker(root: Path, sources: list[Path], baseline: dict[str, Any], stage: str) -> Outcome:
    with site(root, f"kill-worker-{stage}", sources) as made:
        made.worker.start()
        made.submit()
        made.wait_stage(stage)
        made.worker.kill()
        fault_end = time.monotonic()
        time.sleep(1.0)  # serve's supervisor restarts a crashed child after 1 s
        made.worker.start()
        return judge(f"kill -9 worker at {stage}", made, baseline, fault_end)


def kill_cli_ingest(root: Path, sources: list[Path], baseline: dict[str, Any]) -> Outcome:
    with site(root, "kill-cli", sources) as made:
        made.worker.start()
        process = subprocess.Popen(
            [str(CLI), "--data-dir", str(made.data_dir), "ingest", "-w", WORKSPACE, *map(str, sources)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_environ(made.data_dir, made.chroma),
        )
        made.wait_stage("embedding")
        process.kill()
        process.wait()
        fault_end = time.monotonic()
        # The CLI added the first file only: the rest are given to the worker, as a user would re-run them.
        made.app.documents.submit(WORKSPACE, sources[1])
        return judge("kill -9 CLI ingest at embedding", made, baseline, fault_end)


def kill_chroma_mid_run(root: Path, sources: list[Path], baseline: dict[str, Any]) -> Outcome:
    with site(root, "kill-chroma", sources) as made:
        made.worker.start()
        made.submit()
        made.wait_stage("indexing")
        made.chroma.kill()
        time.sleep(1.0)  # serve's supervisor restarts it after 1 s
        made.chroma.start()
        return judge("kill -9 Chroma at indexing (back after 1 s)", made, baseline, time.monotonic())


def concurrent(root: Path, sources: list[Path], baseline: dict[str, Any]) -> Outcome:
    """8 asks at once and 16 writers (notes) at once, while the worker ingests."""
    with site(root, "concurrent", sources[1:]) as made:
        made.worker.start()
        made.app.documents.ingest(WORKSPACE, sources[1])  # something to answer from
        made.app.documents.submit(WORKSPACE, sources[0])
        errors: list[str] = []

        def ask() -> None:
            try:
                made.app.answers.ask(WORKSPACE, "Should aspirin be used in healthy women under 65?")
            except Exception as exc:  # noqa: BLE001 - counted, shown in the results
                errors.append(f"ask: {exc}")

        def write(n: int) -> None:
            try:
                made.app.notes.add_note(WORKSPACE, f"Note {n}", f"Written by writer {n}.")
            except Exception as exc:  # noqa: BLE001 - counted, shown in the results
                errors.append(f"note {n}: {exc}")

        threads = [threading.Thread(target=ask) for _ in range(8)]
        threads += [threading.Thread(target=write, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        made.sources = sources
        outcome = judge("8 concurrent asks, 16 concurrent writers", made, baseline, None)
        notes = made.app.notes.list_notes(WORKSPACE)
        outcome.lost += max(0, 16 - len(notes))
        outcome.duplicated += max(0, len(notes) - 16)
        outcome.user_errors += errors
        return outcome


def two_serves(root: Path) -> Outcome:
    outcome = Outcome("two serve on one data dir, 2 s apart")
    data_dir = root / "two-serves" / "data"
    data_dir.mkdir(parents=True)
    first = _serve(data_dir, root / "two-serves" / "first.log")
    time.sleep(2.0)
    second = _serve(data_dir, root / "two-serves" / "second.log")
    try:
        code = second.wait(120)
        said = (root / "two-serves" / "second.log").read_text(errors="replace").strip().splitlines()
        outcome.notes.append(f"second serve exited {code}: {said[-1] if said else ''}")
        outcome.states["second serve"] = "refused" if code != 0 else "ran"
    except subprocess.TimeoutExpired:
        outcome.states["second serve"] = "ran"
        outcome.notes.append("the second serve kept running beside the first")
    finally:
        for process in (second, first):
            stop(process, 60)
    outcome.states["first serve"] = "ready"
    return outcome


def kill_ui(root: Path) -> Outcome:
    outcome = Outcome("kill -9 of the UI under serve")
    data_dir = root / "kill-ui" / "data"
    data_dir.mkdir(parents=True)
    port = free_port()
    process = _serve(data_dir, root / "kill-ui" / "serve.log", port)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(lambda: _serve_ready(data_dir), 600, "serve to be ready")  # the UI warm, not only answering
        pid = _child_pid(process.pid, "workspace_app.adapters.ui")
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        _wait(lambda: not healthy(url), 30, "the UI to go down")
        _wait(lambda: healthy(url), 300, "the UI to come back")
        outcome.recovery_s = round(time.monotonic() - killed, 1)
        outcome.states["UI"] = "ready"
    except TimeoutError as exc:
        outcome.states["UI"] = "down"
        outcome.notes.append(str(exc))
    finally:
        stop(process, 60)
    return outcome


def _serve(data_dir: Path, log: Path, port: int | None = None) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115 - the child keeps it
    return subprocess.Popen(
        [str(CLI), "--data-dir", str(data_dir), "serve", "--port", str(port or free_port())],
        stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=_environ(data_dir, None),
    )


def _serve_ready(data_dir: Path) -> bool:
    """Whether serve's run file says every child is ready."""
    try:
        return bool(json.loads((data_dir / "run" / "serve.json").read_text()).get("ready"))
    except (OSError, ValueError):
        return False


def _child_pid(parent: int, needle: str) -> int:
    found = subprocess.run(["pgrep", "-P", str(parent), "-f", needle], capture_output=True, text=True, check=False)
    return int(found.stdout.split()[0])


# Running


def excerpts(folder: Path) -> list[Path]:
    import pymupdf

    made = []
    for name, first, last in SOURCES:
        target = folder / f"{Path(name).stem}-p{first}-{last}.pdf"
        with pymupdf.open(CORPUS_DIR / name) as source, pymupdf.open() as new:
            new.insert_pdf(source, from_page=first - 1, to_page=last - 1)
            new.save(target)
        made.append(target)
    return made


CASES = ("chroma-5", "chroma-60", "kill-parsing", "kill-embedding", "kill-indexing", "kill-graph", "kill-cli",
         "kill-chroma", "concurrent", "two-serves", "kill-ui")


def run(only: list[str]) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="faults-"))
    sources = excerpts(root)
    base, baseline = undisturbed(root, sources)
    outcomes = [base]
    for case in only:
        started = time.monotonic()
        try:
            outcome = _case(case, root, sources, baseline)
        except Exception as exc:  # noqa: BLE001 - a case that breaks is reported, the others still run
            outcome = Outcome(case, notes=[f"the case broke: {type(exc).__name__}: {exc}"])
        outcome.notes.append(f"case took {time.monotonic() - started:.0f} s")
        print(json.dumps(outcome.__dict__ | {"ok": outcome.ok}, ensure_ascii=False), flush=True)
        outcomes.append(outcome)
    return {
        "baseline": {name: list(counts[:3]) for name, counts in baseline.items()},
        "cases": [o.__dict__ | {"ok": o.ok} for o in outcomes],
        "root": str(root),
    }


def _case(case: str, root: Path, sources: list[Path], baseline: dict[str, Any]) -> Outcome:
    if case.startswith("chroma-"):
        return chroma_down(root, sources, baseline, float(case.split("-")[1]))
    if case.startswith("kill-") and case[5:] in ("parsing", "embedding", "indexing", "graph"):
        return kill_worker(root, sources, baseline, case[5:])
    return {
        "kill-cli": lambda: kill_cli_ingest(root, sources, baseline),
        "kill-chroma": lambda: kill_chroma_mid_run(root, sources, baseline),
        "concurrent": lambda: concurrent(root, sources, baseline),
        "two-serves": lambda: two_serves(root),
        "kill-ui": lambda: kill_ui(root),
    }[case]()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=CASES, default=list(CASES))
    args = parser.parse_args(argv)
    started = time.monotonic()
    results = run(args.only)
    results.update(
        benchmark="faults", created=now_iso(), git=git_info(), machine=machine_info(),
        wall_s=round(time.monotonic() - started, 1),
        targets={
            "lost": sum(c["lost"] for c in results["cases"]), "duplicated": sum(c["duplicated"] for c in results["cases"]),
            "failed_by_a_passing_fault": sum(
                s == "failed" for c in results["cases"] for s in c["states"].values()
            ),
            "slowest_recovery_s": max((c["recovery_s"] or 0) for c in results["cases"]),
        },
    )
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(results["targets"]))
    return 0 if all(c["ok"] for c in results["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
