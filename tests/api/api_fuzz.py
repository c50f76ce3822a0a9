"""Property-based fuzzing of every API route from the API's own OpenAPI schema (schemathesis + hypothesis), against
a real `workspace-app api` process; shared by `test_api_fuzz.py` (in `make test`) and `bench/fuzz.py` (a larger run
whose figures are recorded).

What is sent, per operation of /openapi.json:
- its coverage cases (schemathesis's deterministic boundary values: empty and longest strings, numbers at and past
  each limit, wrong types, missing required fields, methods the route does not have), as generated and, for reads
  and questions, once more aimed at the seeded data;
- reads (GET) and questions (`/ask`, `/v1/chat/completions`, `/api/chat`, `/api/generate`, a patient question):
  random valid and invalid requests, with path parameters drawn at random and, in passes of their own, pinned to the
  seeded workspace, document, chat, note, patient, event and import (questions name the seeded workspace in their
  body), so the fuzz reaches the answer engine and the stores, not only 404s;
- writes (every other POST, PATCH, DELETE): random requests that violate the schema (bodies, parameters) pinned to
  the seeded ids, which must all be refused, and random valid requests whose path parameters are drawn at random
  (no such workspace, document, chat...), which must be refused or create something new. Valid writes to the
  seeded ids would rename or delete the data the check below guards, by design of the API: the contract tests
  cover those. So a valid upload into the seeded workspace is not fuzzed here either.

"No change to data" means: every catalog row and every stored file that existed before the fuzz is still there,
unchanged, and any new row belongs to a workspace a fuzz request created (a 201 from `POST /workspaces`), is an
answer kept in a chat (a 200 from a question naming the chat) or is a cache derived from the sources (the suggested
questions a read computes once and keeps). `snapshot` and `changes` compute that.

Hypothesis stops a pass early when it runs out of distinct requests (an operation without parameters has one
valid request); a pass with no invalid request at all (only string path parameters, no body) is listed in
`FuzzReport.nothing_invalid`, not sent.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import requests
import schemathesis
from api_stack import Api, Process, environ, start_chroma, start_worker, wait_settled
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

FUZZ_KEY = "fuzz-key"
WORKSPACE = "Fuzz"
QUESTION_ROUTES = {
    ("POST", "/ask"), ("POST", "/v1/chat/completions"), ("POST", "/api/chat"), ("POST", "/api/generate"),
    ("POST", "/workspaces/{workspace}/patients/{patient_id}/ask"),
}
REQUEST_TIMEOUT_S = 60.0
QUESTION = "What INR range should warfarin target in women with atrial fibrillation?"


@dataclass(frozen=True)
class Seeded:
    """The small workspace the fuzz aims at: its ids by path-parameter name."""

    path_parameters: dict[str, str]


@dataclass
class FuzzReport:
    """What the fuzz sent and got: counts by operation and status, and every 5xx with how to reproduce it."""

    requests: int = 0
    by_operation: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    by_pass: dict[str, Counter[int]] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    created_workspaces: set[str] = field(default_factory=set)
    chats_answered: set[str] = field(default_factory=set)
    nothing_invalid: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests, "operations": len(self.by_operation),
            "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
            "by_pass": {label: {str(k): v for k, v in sorted(c.items())} for label, c in sorted(self.by_pass.items())},
            "server_errors": self.server_errors,
            "workspaces_created": len(self.created_workspaces), "nothing_invalid": self.nothing_invalid,
        }


@contextmanager
def fuzz_stack(root: Path, pdf: Path) -> Iterator[tuple[str, Path]]:
    """Chroma (behind its gate), a worker and an API with a key on a data dir of its own under `root`; yields (API URL,
    data dir). The offline extractive answerer (no language model) answers."""
    chroma, url, token = start_chroma(root)
    env = environ(
        WORKSPACE_CHROMA_URL=url, WORKSPACE_STORAGE__CHROMA_TOKEN=token, WORKSPACE_QUEUE__POLL_MAX_DELAY_S="0.1",
        WORKSPACE_API__KEYS=FUZZ_KEY, WORKSPACE_INGEST__MAX_FILE_MB="2",
    )
    children: list[Process | Api] = [chroma]
    try:
        children.append(start_worker(root / "data", env))
        api = Api(root / "data", env, "api-fuzz")
        children.append(api)
        yield api.wait_ready().url, root / "data"
    finally:
        for child in reversed(children):
            child.stop()


def seed(client: httpx.Client, pdf: Path, data_dir: Path) -> Seeded:
    """One workspace with one ingested PDF, a chat and a note, and one patient's events imported through the API: the
    data the fuzz must leave as it found it."""
    assert client.post("/workspaces", json={"name": WORKSPACE}).status_code == 201
    with pdf.open("rb") as stream:
        sent = client.post(f"/workspaces/{WORKSPACE}/documents", files={"file": (pdf.name, stream, "application/pdf")})
    assert sent.status_code == 202, sent.text
    documents = wait_settled(client, WORKSPACE, 300)
    assert [d["status"] for d in documents] == ["ready"], documents
    chat = client.post(f"/workspaces/{WORKSPACE}/chats", json={"title": "fuzz"}).json()
    note = client.post(f"/workspaces/{WORKSPACE}/notes", json={"title": "fuzz", "body": "a note"}).json()
    job = import_events(client, data_dir)
    return Seeded({
        "workspace": WORKSPACE, "document": documents[0]["id"], "chat_id": chat["id"], "note_id": note["id"],
        "model_id": WORKSPACE, "patient_id": PATIENT, "event_id": "fuzz1", "import_id": job,
    })


PATIENT = "P-fuzz"


def import_events(client: httpx.Client, data_dir: Path) -> str:
    """A patient's three events from a CSV under the default import root, imported by the worker; the import's id."""
    source = data_dir / "imports" / "fuzz-events.csv"
    source.parent.mkdir(exist_ok=True)
    source.write_text(
        "event_id,patient_id,timestamp,event_type,sub_type,content\n"
        f"fuzz1,{PATIENT},2150-04-01 08:00:00,lab,Chemistry,Potassium 3.0 mmol/L (low; ref 3.5-5.1)\n"
        f"fuzz2,{PATIENT},2150-04-01 09:00:00,order,Medication,Warfarin 5 mg PO daily\n"
        f"fuzz3,{PATIENT},2150-04-02 08:00:00,lab,Hematology,INR 2.4\n",
        encoding="utf-8",
    )
    queued = client.post("/patients/imports", json={"path": str(source)})
    assert queued.status_code == 202, queued.text
    job = str(queued.json()["id"])
    deadline = time.monotonic() + 120
    while (status := client.get(f"/patients/imports/{job}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert (status["status"], status["events"]) == ("done", 3), status
    return job


def snapshot(data_dir: Path) -> dict[str, Any]:
    """Every catalog row (by table, with the workspace it belongs to where it has one) and every stored file's digest."""
    tables: dict[str, set[tuple[str, str]]] = {}
    with sqlite3.connect(f"file:{data_dir / 'catalog.sqlite'}?mode=ro", uri=True) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
                                          "'%VIRTUAL%' AND name NOT LIKE 'sqlite_%'")]
        for name in names:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info('{name}')")]
            owner = "workspace_id" if "workspace_id" in columns else ("id" if name == "workspaces" else None)
            rows = db.execute(f"SELECT * FROM '{name}'").fetchall()
            tables[name] = {
                (str(row[columns.index(owner)]) if owner else "", hashlib.sha256(repr(row).encode()).hexdigest())
                for row in rows
            }
    files = {str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted((data_dir / "files").rglob("*")) if p.is_file()}
    return {"tables": tables, "files": files}


def changes(before: dict[str, Any], after: dict[str, Any], new_workspaces: set[str], chats: set[str]) -> list[str]:
    """What the fuzz changed that it was not allowed to (see the module docstring): removed or altered rows and files,
    and new rows outside the workspaces it created and the chats it asked in."""
    found: list[str] = []
    for table, rows in before["tables"].items():
        gone = rows - after["tables"].get(table, set())
        if gone:
            found.append(f"{table}: {len(gone)} rows removed or changed")
    for table, rows in after["tables"].items():
        if table not in before["tables"] and any(table.startswith(f"fts_{w}_") for w in new_workspaces):
            continue  # the keyword index of a workspace the fuzz created (one FTS5 table set per workspace)
        added = rows - before["tables"].get(table, set())
        allowed = table in DERIVED_TABLES or (table in CHAT_TABLES and chats)
        stray = [r for r in added if r[0] not in new_workspaces and not allowed]
        if stray:
            found.append(f"{table}: {len(stray)} rows added outside the workspaces the fuzz created")
    if before["files"] != after["files"]:
        found.append(f"files: {sorted(set(before['files'].items()) ^ set(after['files'].items()))[:5]}")
    return found


CHAT_TABLES = {"chat_messages"}  # answers kept in a chat a question named (allowed when such a question was answered)
# Suggested questions, computed from the sources on first read and kept (per workspace before, per source now).
DERIVED_TABLES = {"workspace_suggestions", "document_suggestions"}


def operations(url: str) -> list[Any]:
    """The API's operations, from the running process's /openapi.json."""
    spec = httpx.get(f"{url}/openapi.json", headers=auth(), timeout=30, trust_env=False).json()
    schema = schemathesis.openapi.from_dict(spec)
    return [result.ok() for result in schema.get_all_operations()]


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {FUZZ_KEY}"}


def plans(operation: Any, seeded: Seeded) -> list[tuple[str, GenerationMode, dict[str, str] | None]]:
    """(label, mode, pinned path parameters) of each pass over an operation (see the module docstring)."""
    method, path = operation.method.upper(), operation.path
    names = [p.name for p in operation.path_parameters]
    pinned = {n: seeded.path_parameters[n] for n in names if n in seeded.path_parameters}
    if method == "GET" or (method, path) in QUESTION_ROUTES:
        passes = [("valid", GenerationMode.POSITIVE, None), ("invalid", GenerationMode.NEGATIVE, None)]
        if pinned or (method, path) in QUESTION_ROUTES:  # a question names its workspace in the body
            passes += [("valid-seeded", GenerationMode.POSITIVE, pinned), ("invalid-seeded", GenerationMode.NEGATIVE,
                                                                            pinned)]
        return passes
    random_target = "valid-random-target" if names else "valid"
    return [(random_target, GenerationMode.POSITIVE, None), ("invalid-seeded", GenerationMode.NEGATIVE, pinned)]


def aimed(case: Any, seeded: Seeded, pin_path: bool = False) -> Any:
    """The case with the workspace its body names (`workspace`, or `model` for the OpenAI and Ollama routes) set to
    the seeded one, its last chat message the user's (with a question when it has no text), and with `pin_path` its path parameters set to the seeded ids
    too: so that it reaches the data and the answer engine instead of a 404 or a 400."""
    if isinstance(case.body, dict):
        for name in ("workspace", "model"):
            if name in case.body:
                case.body[name] = seeded.path_parameters["workspace"]
        messages = case.body.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
            # The chat routes answer the last message when it is the user's and says something (else a 400).
            messages[-1]["role"] = "user"
            if not isinstance(messages[-1].get("content"), str) or not messages[-1]["content"].strip():
                messages[-1]["content"] = QUESTION
    if pin_path and case.path_parameters:
        for name in case.path_parameters:
            if name in seeded.path_parameters:
                case.path_parameters[name] = seeded.path_parameters[name]
    return case


def fuzz(url: str, seeded: Seeded, examples: int, report: FuzzReport | None = None) -> FuzzReport:
    """Every operation's coverage cases (schemathesis's deterministic boundary values: empty, longest, wrong type,
    missing, one past each limit), then up to `examples` random requests per pass (hypothesis stops early when it
    runs out of distinct ones). Every response's status is counted, every 5xx kept with a curl line."""
    report = report or FuzzReport()
    with requests.Session() as session:
        session.trust_env = False  # no proxy from the environment: the API is on loopback
        target = Target(url, session, seeded)
        for operation in operations(url):
            _coverage_pass(target, operation, report)
            for label, mode, pinned in plans(operation, seeded):
                _fuzz_pass(target, operation, mode, pinned, examples, report, f"{operation.label} [{label}]")
    return report


def _coverage_pass(target: Target, operation: Any, report: FuzzReport) -> None:
    """The coverage cases as generated and, for reads and questions, once more aimed at the seeded data."""
    schema = operation.schema
    cases = schema.iter_coverage_cases(
        operation, generation_modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
        generation_config=schema.config.generation_for(operation=operation),
    )
    reads = operation.method.upper() == "GET" or (operation.method.upper(), operation.path) in QUESTION_ROUTES
    for case in cases:
        record(target, case, report, f"{operation.label} [coverage]")
        if reads:
            record(target, aimed(case, target.seeded, pin_path=True), report, f"{operation.label} [coverage-seeded]")


def record(target: Target, case: Any, report: FuzzReport, label: str) -> None:
    """Send one case and count its answer."""
    status, text = send(target, case)
    report.requests += 1
    report.by_operation[case.operation.label] += 1
    report.by_status[status] += 1
    report.by_pass.setdefault(label, Counter())[status] += 1
    if status >= 500:
        report.server_errors.append(f"{label}: {status} {text[:300]!r}\n    "
                                    f"{case.as_curl_command(headers=auth(), base_url=target.url)[:2000]}")
    remember_writes(case, status, text, report)


@dataclass(frozen=True)
class Target:
    """Where the generated requests go."""

    url: str
    session: requests.Session
    seeded: Seeded


def _fuzz_pass(target: Target, operation: Any, mode: GenerationMode, pinned: dict[str, str] | None,
               examples: int, report: FuzzReport, label: str) -> None:
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=pinned or None)
    if label.endswith("[valid-seeded]"):
        strategy = strategy.map(lambda case: aimed(case, target.seeded))

    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=True)
    @given(case=strategy)
    def run(case: Any) -> None:
        record(target, case, report, label)

    try:
        run()
    except Unsatisfiable:
        report.nothing_invalid.append(label)


def send(target: Target, case: Any) -> tuple[int, str]:
    """The generated request (headers, query, body as generated) with the key; (status, body text)."""
    for _ in range(3):  # 429: the admission queue is full (not expected with one client): wait as told
        response = case.call(base_url=target.url, session=target.session, headers=auth(), timeout=REQUEST_TIMEOUT_S)
        if response.status_code != 429:
            break
        time.sleep(float(response.headers.get("retry-after", ["1"])[0]))
    return response.status_code, response.content.decode("utf-8", "replace")


def remember_writes(case: Any, status: int, text: str, report: FuzzReport) -> None:
    """Note what a successful request was allowed to create: a workspace, an answer kept in a chat."""
    if case.method.upper() == "POST" and case.path == "/workspaces" and status == 201:
        report.created_workspaces.add(str(json.loads(text)["id"]))
    body = case.body if isinstance(case.body, dict) else {}
    if status == 200 and body.get("chat"):
        report.chats_answered.add(str(body["chat"]))
