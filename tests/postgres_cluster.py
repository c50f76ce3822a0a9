"""A throwaway PostgreSQL cluster for the tests marked `postgres`, registered as a plugin by tests/conftest.py.

The session starts one cluster (Debian's `initdb` + `pg_ctl` from /usr/lib/postgresql/<version>/bin, installed by
`make system-deps`) in a temporary directory, listening on a free loopback port with trust authentication, without
fsync; each test gets a database of its own (`postgres_url`), dropped after it. PostgreSQL refuses to run as root:
when the tests run as root (CI runs `make test` as root), the cluster's directory is given to the `postgres` user
that the Debian package creates, and initdb/pg_ctl run as that user through `runuser -u postgres --`.

Without the binaries the tests skip, saying how to install them, except under CI (the `CI` variable set), where
they fail: CI installs PostgreSQL, so a skip there would hide a broken set-up.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

RUN_AS = "postgres"  # the Debian package's system user, used when the tests run as root


def postgres_bin() -> Path | None:
    """The bin directory of the newest PostgreSQL installed from Debian packages, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresCluster:
    """One cluster in its own directory: started by `start`, stopped and removed by `stop`."""

    def __init__(self, bin_dir: Path, options: str = "") -> None:
        """`options`: more server settings (`-c name=value ...`)."""
        self.bin_dir = bin_dir
        self.options = options
        self.folder = Path(tempfile.mkdtemp(prefix="pg-cluster-"))
        self.port = free_port()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            user = pwd.getpwnam(RUN_AS)
            os.chown(self.folder, user.pw_uid, user.pw_gid)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        """The URL of one database of the cluster, as the superuser `postgres`."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str) -> None:
        command = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self._as_root:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        result = subprocess.run(
            command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
            cwd=self.folder,  # the postgres user may not enter the caller's directory
        )
        if result.returncode != 0:
            log_file = self.folder / "server.log"
            log = log_file.read_text(errors="replace") if log_file.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed: {result.stdout}{result.stderr}{log}")

    def start(self) -> None:
        """initdb, then pg_ctl start (waiting until it accepts connections)."""
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
        options = (
            f"-c port={self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.folder} "
            f"-c fsync=off -c synchronous_commit=off -c full_page_writes=off {self.options}"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-o", options, "-w", "start")

    def stop(self) -> None:
        """pg_ctl stop (fast: open connections are cut), then remove the directory."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def create_database(self) -> str:
        """A new empty database; returns its name."""
        import psycopg

        name = f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, closing whatever connections a test left open to it."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    @contextmanager
    def database(self) -> Iterator[str]:
        """The URL of a new, empty database, dropped afterwards."""
        name = self.create_database()
        try:
            yield self.url(name)
        finally:
            self.drop_database(name)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """The session's PostgreSQL cluster (started on first use)."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        message = "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): `make system-deps` installs it"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI must have it)")
        pytest.skip(message)
    cluster = PostgresCluster(bin_dir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """The URL of a new, empty database for one test, dropped after it."""
    with postgres_cluster.database() as url:
        yield url
