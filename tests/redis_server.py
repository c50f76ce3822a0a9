"""A throwaway redis-server for the tests of the Redis queue, registered as a plugin by tests/conftest.py.

Each test module that asks for `redis_url` gets its own server (the queue's name is fixed, so two modules must not
share one): Debian's redis-server (installed by `make system-deps`) on a free loopback port, without persistence.
Without the binary the tests skip, saying how to install it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from local_process import running
from postgres_cluster import free_port


def _pings(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port).ping())
    except redis.ConnectionError:
        return False


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a redis-server of this module's own, stopped after it."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (make setup installs it with apt-get as root)")
    folder = tmp_path_factory.mktemp("redis")
    port = free_port()
    argv = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)]
    with running(argv, lambda: _pings(port), folder / "redis.log", f"redis-server on port {port}", 30, poll_s=0.1):
        yield f"redis://127.0.0.1:{port}/0"
