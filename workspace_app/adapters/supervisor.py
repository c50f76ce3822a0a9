"""Process supervisor behind `workspace-app serve`: starts the children, restarts crashes, stops cleanly.

Children are started in order from a list of `ChildSpec`; a child with a `ready_url` must answer it
before the next one starts. The list is the Chroma server, the ingestion worker, the HTTP API and the Streamlit
UI, all on 127.0.0.1. From the moment Chroma answers, the run file `<data_dir>/run/serve.json` tells
other processes on the same data dir (the CLI) where the Chroma server is (`"ready": true` once all are ready,
with the UI's and the API's URLs).
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from pydantic import SecretStr

from workspace_app.adapters.logs import rotate_log
from workspace_app.adapters.ownership import claim_data_dir, release_data_dir
from workspace_app.adapters.process import make_private, private_token
from workspace_app.config import Settings
from workspace_app.errors import DataDirBusyError

HOST = "127.0.0.1"
ANY_ADDRESS = ("0.0.0.0", "::", "")  # listening on every interface, loopback included
RUN_FILE = "run/serve.json"  # read by workspace_app.adapters.wiring.running_chroma_url
TOKEN_FILE = "run/chroma.token"  # read by workspace_app.adapters.wiring.chroma_location
APP_SCRIPT = Path(__file__).resolve().parents[2] / "app.py"  # the Streamlit entry at the repository root
READY_TIMEOUT_S = 30.0
UI_READY_TIMEOUT_S = 300.0  # the UI is ready once its models are loaded and warm (a slow disk, a busy CPU)
UI_WARM_FILE = "run/ui-warm.json"
STOP_TIMEOUT_S = 10.0
POLL_S = 0.5
MAX_BACKOFF_S = 30.0
STABLE_AFTER_S = 60.0  # a child that ran this long starts its backoff from scratch
REFUSED = 2  # the exit code of a serve refused by its settings (as `workspace-app api`'s)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never send loopback via a proxy


@dataclass(frozen=True)
class ChildSpec:
    """How to start one supervised process."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    ready_url: str | None = None
    log_path: Path | None = None
    cwd: Path | None = None
    ready_timeout_s: float = READY_TIMEOUT_S
    ready_file: Path | None = None  # written by the child once it is fully ready (after its ready_url answers)
    ready_headers: dict[str, str] = field(default_factory=dict)  # sent with the ready_url check (the Chroma token)


class Child:
    """One supervised process: started, watched, restarted with backoff, stopped."""

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.backoff_s = 1.0
        self.restart_at: float | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> None:
        """Start the process (output to its log file, if any)."""
        if self.spec.log_path is not None and self._log is None:
            self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            rotate_log(self.spec.log_path)
            self._log = open(self.spec.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            self.spec.argv, env={**os.environ, **self.spec.env}, cwd=self.spec.cwd,
            stdout=self._log, stderr=self._log, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads here
        )
        self.started_at = time.monotonic()
        self.restart_at = None

    def exited(self) -> bool:
        """True when the process has ended."""
        return self.process is None or self.process.poll() is not None

    def watch(self, now: float) -> None:
        """Schedule a restart when the process died; perform it when the backoff has passed; cap the log."""
        if self.spec.log_path is not None and self._log is not None:
            rotate_log(self.spec.log_path, copy=True)
        if self.restart_at is None and self.exited():
            self._schedule_restart(now)
        elif self.restart_at is not None and now >= self.restart_at:
            _say(f"restarting {self.spec.name}")
            self.start()

    def _schedule_restart(self, now: float) -> None:
        if now - self.started_at > STABLE_AFTER_S:
            self.backoff_s = 1.0
        code = self.process.returncode if self.process else None
        _say(f"{self.spec.name} exited (code {code}); restarting in {self.backoff_s:.0f} s")
        self.restart_at = now + self.backoff_s
        self.backoff_s = min(self.backoff_s * 2, MAX_BACKOFF_S)

    def stop(self) -> None:
        """Terminate, wait, kill if needed; close the log."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def serve(settings: Settings, ui_port: int = 8501, chroma_port: int | None = None, host: str = HOST) -> int:
    """Run Chroma, the worker, the API and the UI until Ctrl-C or SIGTERM; returns the process exit code.

    Serve owns the data dir (`ownership`) from before anything starts until everything has stopped. The UI listens
    on `host`; anything but loopback requires the UI password (settings `ui.password`). The API listens on
    `host` only when API keys are set (else on loopback), on `api.port` or, when that is taken, a free port."""
    data_dir = settings.storage.data_dir.resolve()
    # Settings refuse a blank password; with accounts on, everyone signs in with their own name and password.
    if not is_loopback(host) and settings.ui.password is None and not settings.accounts.enabled:
        _say(
            f"The UI would listen on {host}, where other machines can reach it, without a password. Set "
            "WORKSPACE_UI__PASSWORD, or leave out --host to listen on 127.0.0.1 only."
        )
        return REFUSED
    try:
        claim_data_dir(data_dir, "serve")
    except DataDirBusyError as exc:
        _say(exc.user_message)
        return 1
    try:
        make_private(data_dir)
        return _serve_owned(settings, data_dir, ui_port, chroma_port, host)
    finally:
        release_data_dir(data_dir)


def _serve_owned(settings: Settings, data_dir: Path, ui_port: int, chroma_port: int | None, host: str) -> int:
    problem = _startup_problem(ui_port)
    if problem:
        _say(problem)
        return 1
    chroma_url = settings.storage.chroma_url or f"http://{HOST}:{chroma_port or free_port()}"
    token = settings.storage.chroma_token if settings.storage.chroma_url else chroma_token(data_dir)
    api_port = settings.api.port if port_is_free(settings.api.port) else free_port()
    # The API leaves loopback only behind keys (with accounts on, each user's own).
    api_host = host if api_keys_set(settings) or settings.accounts.enabled else HOST
    specs = child_specs(settings, data_dir, chroma_url, ui_port, token, host, api_port, api_host)
    ui_url = f"http://{HOST if host in ANY_ADDRESS else host}:{ui_port}"
    api_url = f"http://{HOST if api_host in ANY_ADDRESS else api_host}:{api_port}"
    stop = threading.Event()
    children = [Child(spec) for spec in specs]
    servers = [c for c in children if c.spec.name == "chroma"]
    with _stop_on_signals(stop):
        try:
            # CLI commands become Chroma's clients as soon as it answers, not only once the UI is warm.
            if not _start_all(servers, stop):
                return 0 if stop.is_set() else 1
            _write_run_file(data_dir, chroma_url, ui_url, api_url)
            if not _start_all(children[len(servers):], stop):
                return 0 if stop.is_set() else 1
            print(f"Workspace is running at {ui_url}  (API: {api_url}, Ctrl-C to stop)", flush=True)
            _write_run_file(data_dir, chroma_url, ui_url, api_url, ready=True)
            _supervise(children, stop)
        finally:
            _stop_all(children)
            remove_run_file(data_dir)
    return 0


def child_specs(
    settings: Settings, data_dir: Path, chroma_url: str, ui_port: int, token: str | None = None, host: str = HOST,
    api_port: int | None = None, api_host: str = HOST,
) -> list[ChildSpec]:
    """The processes `serve` runs, in start order (the API only when given a port)."""
    specs = [] if settings.storage.chroma_url else [chroma_spec(data_dir, chroma_url, token or chroma_token(data_dir))]
    specs.append(worker_spec(data_dir, chroma_url, token))
    if api_port is not None:
        specs.append(api_spec(settings, data_dir, chroma_url, api_port, token, api_host))
    ui = ui_spec(data_dir, chroma_url, ui_port, token, host, allowed_hosts(host, settings.ui.allowed_hosts))
    if settings.ui.password is not None:  # the UI's cwd is the repository: a .env read by serve is not read there
        ui = replace(ui, env={**ui.env, "WORKSPACE_UI__PASSWORD": settings.ui.password.get_secret_value()})
    handed_on = {**stores_env(settings), **accounts_env(settings)}
    specs = [replace(spec, env={**spec.env, **handed_on}) for spec in specs]
    specs.append(replace(ui, env={**ui.env, **handed_on}))
    return specs


def stores_env(settings: Settings) -> dict[str, str]:
    """Where serve keeps the catalog, the queue and the shared files, for its children: they must all use the same
    stores, and a .env read by serve is not read by the UI (else the UI would open the SQLite catalog in the data dir
    while the worker took jobs from a PostgreSQL one)."""
    env = {
        "WORKSPACE_CATALOG__URL": settings.catalog.url, "WORKSPACE_QUEUE__BACKEND": settings.queue.backend,
        "WORKSPACE_QUEUE__REDIS_URL": settings.queue.redis_url,
    }
    if settings.shared.dir is not None:
        env["WORKSPACE_SHARED__DIR"] = str(settings.shared.dir.resolve())  # as serve sees it: the UI runs elsewhere
    if settings.shared.s3_url:  # the files in an object store: every child reads the same bucket
        env.update({f"WORKSPACE_SHARED__{name.upper()}": env_value(value)
                    for name, value in settings.shared.model_dump().items()
                    if name.startswith("s3_") and value is not None})
    return env


def accounts_env(settings: Settings) -> dict[str, str]:
    """The account settings serve runs with, for its children (a .env read by serve is not read by the UI); none
    with accounts off."""
    if not settings.accounts.enabled:
        return {}
    return {f"WORKSPACE_ACCOUNTS__{name.upper()}": env_value(value)
            for name, value in settings.accounts.model_dump().items() if value is not None}


def env_value(value: object) -> str:
    """A setting's value as an environment variable gives it (a secret's real value: the child's environment is
    readable by this user only, as for the UI's password)."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return str(value).lower() if isinstance(value, bool) else str(value)


def allowed_hosts(host: str, extra: str = "") -> list[str]:
    """The host names a server listening on `host` answers to (the Host header, any port; a guard against DNS
    rebinding): the loopback names, `host` itself unless it is every address, and the comma-separated `extra`."""
    names = [*LOOPBACK_NAMES, *([] if host in ANY_ADDRESS else [host.strip("[]")])]
    names += [name.strip() for name in extra.split(",") if name.strip()]
    return list(dict.fromkeys(name.lower().rstrip(".") for name in names))


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def chroma_spec(data_dir: Path, chroma_url: str, token: str) -> ChildSpec:
    """The local Chroma server persisting under the data dir, behind the token gate on the loopback URL
    (`chroma_gate`: chromadb's own server has no authentication)."""
    port = chroma_url.rsplit(":", 1)[1]
    argv = [
        sys.executable, "-m", "workspace_app.adapters.chroma_gate", "--port", port,
        "--token-file", str(data_dir / TOKEN_FILE), "--", _chroma_executable(), "run", "--path", str(data_dir / "chroma"),
    ]
    return ChildSpec(
        "chroma", argv, ready_url=f"{chroma_url}/api/v2/heartbeat", log_path=data_dir / "run" / "chroma.log",
        ready_headers={"Authorization": f"Bearer {token}"},
    )


def chroma_token(data_dir: Path) -> str:
    """The data dir's Chroma token: made once (random, readable by this user only), the same on every serve."""
    return private_token(data_dir / TOKEN_FILE)


def worker_spec(data_dir: Path, chroma_url: str, token: str | None = None) -> ChildSpec:
    """The ingestion worker, a client of the Chroma server; its log is `<data dir>/run/worker.log`."""
    argv = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data_dir), "worker"]
    env = _child_env(data_dir, chroma_url, token)
    return ChildSpec("worker", argv, env=env, log_path=data_dir / "run" / "worker.log")


def api_keys_set(settings: Settings) -> bool:
    """Whether API keys are configured (then the API may listen where the UI does)."""
    return bool(settings.api.keys and settings.api.keys.get_secret_value().strip(" ,"))


def api_spec(
    settings: Settings, data_dir: Path, chroma_url: str, port: int, token: str | None = None, host: str = HOST
) -> ChildSpec:
    """The HTTP API (`workspace-app api`), a client of the Chroma server; ready once /health answers (it loads the
    embedding model first). Its keys are passed on like the UI's password; its log is `<data dir>/run/api.log`."""
    argv = [
        sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data_dir), "api", "--port", str(port),
        "--host", host,
    ]
    env = _child_env(data_dir, chroma_url, token)
    if settings.api.keys is not None:
        env["WORKSPACE_API__KEYS"] = settings.api.keys.get_secret_value()
    if settings.api.cors_origins:
        env["WORKSPACE_API__CORS_ORIGINS"] = settings.api.cors_origins
    if settings.api.allowed_hosts:
        env["WORKSPACE_API__ALLOWED_HOSTS"] = settings.api.allowed_hosts
    ready = f"http://{HOST if host in ANY_ADDRESS or is_loopback(host) else host}:{port}/health/live"
    return ChildSpec("api", argv, env=env, ready_url=ready, log_path=data_dir / "run" / "api.log",
                     ready_timeout_s=UI_READY_TIMEOUT_S)


def ui_spec(
    data_dir: Path, chroma_url: str, ui_port: int, token: str | None = None, host: str = HOST,
    hosts: list[str] | None = None,
) -> ChildSpec:
    """The Streamlit UI, pointed at the data dir and the Chroma server through its environment. Its pages open
    at once; it is ready when it has written its warm file (App built, models loaded, one answer per workspace).
    Streamlit's own guards are on whatever a config file says: CORS (its WebSocket takes no other origin), XSRF
    tokens on uploads, and `hosts` (default: `allowed_hosts(host)`) as the only Host names its WebSocket accepts."""
    warm_file = data_dir / UI_WARM_FILE
    argv = [
        sys.executable, "-m", "workspace_app.adapters.ui", "--warm-file", str(warm_file), str(APP_SCRIPT),
        "--server.address", host, "--server.port", str(ui_port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.enableCORS", "true", "--server.enableXsrfProtection", "true",
    ]
    for name in hosts if hosts is not None else allowed_hosts(host):
        argv += ["--server.allowedHosts", name]
    ready = f"http://{HOST if host in ANY_ADDRESS or is_loopback(host) else host}:{ui_port}/_stcore/health"
    return ChildSpec("ui", argv, env=_child_env(data_dir, chroma_url, token), ready_url=ready, cwd=APP_SCRIPT.parent,
                     ready_timeout_s=UI_READY_TIMEOUT_S, ready_file=warm_file)


def _child_env(data_dir: Path, chroma_url: str, token: str | None = None) -> dict[str, str]:
    # The short names win only when the nested ones are unset, so set both to what this serve uses.
    env = {
        "WORKSPACE_DATA_DIR": str(data_dir), "WORKSPACE_STORAGE__DATA_DIR": str(data_dir),
        "WORKSPACE_CHROMA_URL": chroma_url, "WORKSPACE_STORAGE__CHROMA_URL": chroma_url,
    }
    if token:
        env["WORKSPACE_STORAGE__CHROMA_TOKEN"] = token  # a process's environment is readable by its user only
    return env


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    """True when nothing listens on the loopback port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex((HOST, port)) != 0


def answers(url: str, timeout_s: float = 2.0, headers: dict[str, str] | None = None) -> bool:
    """True when a GET on the URL returns a 2xx status."""
    try:
        with _LOOPBACK.open(urllib.request.Request(url, headers=headers or {}), timeout=timeout_s) as response:
            return 200 <= int(response.status) < 300
    except (OSError, ValueError):
        return False


def _startup_problem(ui_port: int) -> str | None:
    if not port_is_free(ui_port):
        return f"Port {ui_port} is in use. Choose another one with `workspace-app serve --port P`."
    return None


def run_file_pid(data_dir: Path) -> int | None:
    """The pid recorded in the run file (alive or not), or None when there is no readable run file."""
    try:
        return int(json.loads((data_dir / RUN_FILE).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _start_all(children: list[Child], stop: threading.Event) -> bool:
    """Start children in order, each ready before the next; False when one fails or we are told to stop."""
    for child in children:
        if child.spec.ready_file is not None:
            child.spec.ready_file.unlink(missing_ok=True)  # a file left by an earlier run says nothing of this one
        child.start()
        url = child.spec.ready_url
        if url and not _wait_until_ready(child, url, stop):
            if not stop.is_set():
                _say(f"{child.spec.name} did not start; see {child.spec.log_path or 'the output above'}.")
            return False
    return True


def _wait_until_ready(child: Child, url: str, stop: threading.Event) -> bool:
    """Wait for the child's ready URL to answer, then for its ready file (when it has one)."""
    deadline = time.monotonic() + child.spec.ready_timeout_s
    ready_file = child.spec.ready_file
    while time.monotonic() < deadline and not stop.is_set() and not child.exited():
        if answers(url, headers=child.spec.ready_headers) and (ready_file is None or ready_file.exists()):
            return True
        stop.wait(0.2)
    return False


def _supervise(children: list[Child], stop: threading.Event) -> None:
    while not stop.wait(POLL_S):
        now = time.monotonic()
        for child in children:
            child.watch(now)


def _stop_all(children: list[Child]) -> None:
    for child in reversed(children):
        child.stop()


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Turn SIGINT/SIGTERM into `stop` while serving; restore the previous handlers afterwards."""

    def handle(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _write_run_file(data_dir: Path, chroma_url: str, ui_url: str, api_url: str | None = None, ready: bool = False) -> None:
    """Atomically (a private temporary file renamed over it): readers see the old file or the whole new one.
    Written once Chroma answers, and again with `ready` true once every child is ready."""
    path = data_dir / RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    info = {"pid": os.getpid(), "chroma_url": chroma_url, "ui_url": ui_url, "api_url": api_url, "ready": ready}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
        out.write(json.dumps(info))
    os.replace(tmp, path)


def remove_run_file(data_dir: Path) -> bool:
    """Delete the run file only when this process wrote it (its pid is in it); True when deleted."""
    if run_file_pid(data_dir) != os.getpid():
        return False
    (data_dir / RUN_FILE).unlink(missing_ok=True)
    return True


def _die_with_parent() -> None:
    """Runs in the child before exec: ask Linux to SIGTERM it if the supervisor dies without cleaning up."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1  # SEE: man 2 PR_SET_PDEATHSIG
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _chroma_executable() -> str:
    beside = Path(sys.executable).parent / "chroma"
    return str(beside) if beside.exists() else (shutil.which("chroma") or "chroma")


def _say(message: str) -> None:
    print(f"workspace-app serve: {message}", file=sys.stderr, flush=True)
