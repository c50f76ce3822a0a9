"""The team deployment's servers for a benchmark, each throwaway in a folder of its own: a PostgreSQL cluster (Debian's
initdb + pg_ctl, as user `postgres` when run as root), a redis-server and a Chroma server behind serve's token gate.

The PostgreSQL cluster is the tests' own (tests/postgres_cluster.py, without its pytest fixtures).
"""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common.serving import LOOPBACK, free_port


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll until the condition holds; SystemExit naming what did not come."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not come within {timeout_s:.0f} s")
        time.sleep(0.1)


@contextmanager
def postgres() -> Iterator[Callable[[str], str]]:
    """A PostgreSQL cluster on a free loopback port (trust authentication, no fsync) in a temporary folder of its own,
    the tests' throwaway cluster (tests/postgres_cluster.py); yields `database(name)`, which creates a database and
    returns its URL."""
    from tests.postgres_cluster import PostgresCluster, postgres_bin

    bin_dir = postgres_bin()
    if bin_dir is None:
        raise SystemExit("PostgreSQL is not installed: `make system-deps` installs it")
    cluster = PostgresCluster(bin_dir, "-c max_connections=200")  # 16 users' API processes and the workers

    def database(name: str) -> str:
        import psycopg

        with psycopg.connect(cluster.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return cluster.url(name)

    try:
        cluster.start()
        yield database
    finally:
        cluster.stop()


@contextmanager
def redis(folder: Path) -> Iterator[str]:
    """A redis-server on a free loopback port without persistence; yields its URL."""
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("redis-server is not installed: `make system-deps` installs it")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    argv = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)]
    with open(folder / "redis.log", "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:
        import redis as client

        def pings() -> bool:
            try:
                return bool(client.Redis(port=port).ping())
            except client.ConnectionError:
                return False

        wait_for(pings, 30, "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def chroma(folder: Path) -> Iterator[tuple[str, str]]:
    """A Chroma server behind serve's token gate; yields (URL, token)."""
    from workspace_app.adapters.supervisor import chroma_spec, chroma_token

    folder.mkdir(parents=True, exist_ok=True)
    url, token = f"http://127.0.0.1:{free_port()}", chroma_token(folder)
    spec = chroma_spec(folder, url, token)
    with open(folder / "chroma.log", "wb") as log:
        process = subprocess.Popen(spec.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)

    def beats() -> bool:
        request = urllib.request.Request(f"{url}/api/v2/heartbeat", headers=spec.ready_headers)
        try:
            with LOOPBACK.open(request, timeout=2) as response:
                return int(response.status) == 200
        except OSError:
            return False

    try:
        wait_for(beats, 60, "the Chroma server")
        yield url, token
    finally:
        process.terminate()
        process.wait(30)
