"""Offline means offline: a real CLI ingest of a real PDF and an ask make no outside network lookup.

The CLI runs in a subprocess whose `sitecustomize.py` (tests/e2e/netguard) refuses and records any Python-level
lookup of, or connection to, a host that is not loopback, and whose LD_PRELOAD guard (netguard.c, compiled here
when a C compiler is present) does the same for native code: onnxruntime's telemetry, loaded by `import pymupdf`,
resolves mobile.events.data.microsoft.com from a libcurl thread ~10 s after start, never through Python.
The same telemetry writes a device id under $XDG_CACHE_HOME/Microsoft at once, which is checked too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NETGUARD = Path(__file__).parent / "netguard"


def native_guard(folder: Path) -> Path | None:
    """The LD_PRELOAD guard, compiled into `folder`; None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    library = folder / "netguard.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", library, NETGUARD / "netguard.c", "-ldl"], check=True)
    return library


def guarded_environ(tmp_path: Path, record: Path) -> dict[str, str]:
    """No developer settings and no HF_HUB_OFFLINE (the defaults must be offline by themselves), every guard on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "ORT_DISABLE_TELEMETRY", "ANONYMIZED_TELEMETRY"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(NETGUARD), env.get("PYTHONPATH", "")) if p)
    env["NETGUARD_RECORD"] = str(record)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PYTHONWARNINGS"] = "ignore"
    library = native_guard(tmp_path)
    if library is not None:
        env["LD_PRELOAD"] = str(library)
    return env


def test_ingest_and_ask_make_no_outside_network_attempt(
    tmp_path: Path, excerpt: Callable[[str, int, int], Path]
) -> None:
    pdf = excerpt("shen-2017-syncope.pdf", 1, 2)
    data, record = tmp_path / "data", tmp_path / "network-attempts.txt"
    env = guarded_environ(tmp_path, record)

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data), *map(str, args)]
        return subprocess.run(argv, check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

    assert run("workspace", "create", "W").returncode == 0
    ingested = run("ingest", "--workspace", "W", pdf)
    assert ingested.returncode == 0, ingested.stderr[-2000:]
    assert json.loads(ingested.stdout.splitlines()[-1])["status"] == "ready"
    asked = run("ask", "--workspace", "W", "--json", "What is syncope?")
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert json.loads(asked.stdout)["question"] == "What is syncope?"

    attempts = record.read_text().splitlines() if record.exists() else []
    assert attempts == [], f"outside network attempts: {attempts}"
    assert not (tmp_path / "cache" / "Microsoft").exists(), "onnxruntime telemetry initialised (device id written)"


def test_serve_and_its_children_make_no_outside_network_attempt(tmp_path: Path) -> None:
    """Chroma (behind its gate), the worker and the Streamlit UI, started by serve, with an ingest through them."""
    from workspace_app.adapters.supervisor import free_port

    data, record = tmp_path / "data", tmp_path / "network-attempts.txt"
    env = guarded_environ(tmp_path, record)
    note = tmp_path / "tilt.md"
    note.write_text("# Tilt\n\nA tilt-table angle of 70 degrees gives the best diagnostic yield.\n", encoding="utf-8")
    cli = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data)]
    with (tmp_path / "serve.log").open("wb") as log:
        serve = subprocess.Popen([*cli, "serve", "--port", str(free_port())], env=env, cwd=tmp_path, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 240
        while not _ready(data / "run" / "serve.json"):
            assert serve.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(0.5)
        for args in (["workspace", "create", "W"], ["ingest", "--workspace", "W", str(note)]):
            done = subprocess.run([*cli, *args], check=False, capture_output=True, text=True, env=env, timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]
        time.sleep(12)  # onnxruntime's uploader would look its host up ~10 s after a process starts
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(60)

    attempts = record.read_text().splitlines() if record.exists() else []
    assert attempts == [], f"outside network attempts: {attempts}"
    assert not (tmp_path / "cache" / "Microsoft").exists()


def _ready(run_file: Path) -> bool:
    try:
        return bool(json.loads(run_file.read_text()).get("ready"))
    except (OSError, ValueError):
        return False
