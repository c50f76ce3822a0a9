"""Private by default: the data dir and everything in it is its user's alone (also an older, looser one once
opened), and serve's Chroma answers only requests carrying the data dir's token."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from test_ownership import serving, started, stopped, workspace_app  # noqa: F401 - serving is a fixture

pytestmark = pytest.mark.slow

LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
NOTE = "# Tilt-table testing\n\nA tilt-table angle of 70 degrees for 30 to 40 minutes gives the best yield.\n"


def readable_by_others(data_dir: Path) -> list[str]:
    """Entries under data_dir (itself included) that group or others may read, write or enter."""
    loose = [data_dir, *data_dir.rglob("*")]
    return [f"{oct(stat.S_IMODE(p.lstat().st_mode))} {p}" for p in loose if not p.is_symlink() and p.lstat().st_mode & 0o077]


def status(url: str, headers: dict[str, str] | None = None) -> int:
    try:
        with LOOPBACK.open(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_cli_ingest_leaves_nothing_readable_by_others_and_tightens_an_old_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    os.chmod(data_dir, 0o755)
    old = data_dir / "files"
    old.mkdir(mode=0o755)
    os.chmod(old, 0o755)
    (old / "left-by-an-older-version.txt").write_text("x")
    os.chmod(old / "left-by-an-older-version.txt", 0o644)
    note = tmp_path / "tilt.md"
    note.write_text(NOTE, encoding="utf-8")

    assert workspace_app(data_dir, "workspace", "create", "W").returncode == 0
    ingested = workspace_app(data_dir, "ingest", "--workspace", "W", str(note), timeout=300)

    assert ingested.returncode == 0, ingested.stderr[-2000:]
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert any(p.suffix == ".sqlite" for p in data_dir.iterdir())
    assert readable_by_others(data_dir) == []


def test_serve_chroma_refuses_requests_without_the_token_and_its_clients_work(
    serving: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path  # noqa: F811 - the fixture
) -> None:
    data_dir, process = serving
    token_file = data_dir / "run" / "chroma.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    url = json.loads((data_dir / "run" / "serve.json").read_text())["chroma_url"]
    collections = f"{url}/api/v2/tenants/default_tenant/databases/default_database/collections"

    assert status(collections) == 401
    assert status(f"{url}/api/v2/heartbeat") == 401
    assert status(collections, {"Authorization": "Bearer not-the-token"}) == 401
    assert status(collections, {"X-Chroma-Token": token[:-1]}) == 401
    assert status(collections, {"Authorization": f"Bearer {token}"}) == 200

    note = tmp_path / "tilt.md"
    note.write_text(NOTE, encoding="utf-8")
    assert workspace_app(data_dir, "workspace", "create", "W").returncode == 0
    ingested = workspace_app(data_dir, "ingest", "--workspace", "W", str(note), timeout=300)  # through the gate
    assert ingested.returncode == 0, ingested.stderr[-2000:]
    with LOOPBACK.open(urllib.request.Request(collections, headers={"Authorization": f"Bearer {token}"})) as response:
        assert len(json.loads(response.read())) >= 1

    inner = re.search(r"on 127\.0\.0\.1:(\d+) \(private network namespace\)", (data_dir / "run" / "chroma.log").read_text())
    if inner:  # Chroma's own port is not reachable from here: only through the gate
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", int(inner.group(1)))) != 0

    assert stopped(process) == 0
    assert readable_by_others(data_dir) == []  # logs, run files, catalog, vectors


def test_serve_will_not_open_the_ui_to_other_machines_without_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_app.adapters.supervisor import free_port

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    refused = workspace_app(data_dir, "serve", "--host", "0.0.0.0", "--port", str(free_port()))

    assert refused.returncode == 2
    assert "The UI would listen on 0.0.0.0, where other machines can reach it, without a password." in refused.stderr
    assert "Set WORKSPACE_UI__PASSWORD, or leave out --host to listen on 127.0.0.1 only." in refused.stderr
    assert not (data_dir / "run").exists()  # refused before it started or owned anything

    monkeypatch.setenv("WORKSPACE_UI__PASSWORD", "correct horse")
    process = started(
        data_dir, "serve", "--host", "0.0.0.0", "--port", str(free_port()),
        ready=data_dir / "run" / "serve.json", log=tmp_path / "serve.log",
    )
    assert stopped(process) == 0
