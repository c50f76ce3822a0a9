"""Offline means offline: the whole product (serve: Chroma server, worker, UI; the CLI ingesting and asking
through it) makes no attempt to reach anything outside the machine.

Two nets catch an attempt. Every Python process we start loads a `sitecustomize` that records and refuses any
resolution of, or connection to, a host that is not loopback. When the test may create namespaces (root), the
run also happens in a network namespace of its own whose resolver is a recorder on 127.0.0.1:53, which catches
native code too (onnxruntime's telemetry resolves its host from C++). Both nets are first shown to catch a
deliberate lookup, so a silent run means something.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

CLI = Path(sys.executable).parent / "workspace-app"

SITECUSTOMIZE = '''
import os, socket

_RECORD = os.environ["OFFLINE_RECORD"]
_LOCAL = ("127.", "::1", "localhost", "0.0.0.0", "/")  # "/": a Unix socket path


def _note(what, host):
    host = str(host)
    if not host or host.startswith(_LOCAL) or host in ("::", "ip6-localhost"):
        return
    with open(_RECORD, "a", encoding="utf-8") as out:
        out.write(f"{what} {host} pid={os.getpid()}\\n")
    raise OSError(f"offline test: {what} {host} refused")


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_sendto = socket.socket.sendto


def getaddrinfo(host, *args, **kwargs):
    _note("resolve", host if host is not None else "")
    return _getaddrinfo(host, *args, **kwargs)


def _target(address):
    return address[0] if isinstance(address, tuple) else ""


def connect(self, address):
    _note("connect", _target(address))
    return _connect(self, address)


def connect_ex(self, address):
    _note("connect", _target(address))
    return _connect_ex(self, address)


def sendto(self, data, *args):
    _note("send", _target(args[-1]))
    return _sendto(self, data, *args)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.socket.sendto = sendto
'''

DNS_RECORDER = '''
import socket, sys, threading

out = open(sys.argv[1], "a", buffering=1)


def name(data):
    i, parts = 12, []
    while i < len(data) and data[i]:
        parts.append(data[i + 1:i + 1 + data[i]].decode(errors="replace"))
        i += data[i] + 1
    return ".".join(parts)


udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 53))
tcp = socket.socket()
tcp.bind(("127.0.0.1", 53))
tcp.listen()


def serve_tcp():
    while True:
        conn, _ = tcp.accept()
        out.write("dns " + name(conn.recv(4096)[2:]) + "\\n")
        conn.close()


threading.Thread(target=serve_tcp, daemon=True).start()
while True:
    data, peer = udp.recvfrom(4096)
    out.write("dns " + name(data) + "\\n")
    udp.sendto(data[:2] + bytes([0x81, 0x85]) + data[4:6] + bytes(6) + data[12:], peer)  # REFUSED
'''

# The product as a user runs it, in one shell script: serve, then the CLI through it, the UI page, then Ctrl-C.
FLOW = '''
set -e
"$CLI" --data-dir "$DATA" serve --port "$UI_PORT" > "$WORK/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 300); do grep -q "is running at" "$WORK/serve.log" && break; sleep 1; done
grep -q "is running at" "$WORK/serve.log"
"$CLI" --data-dir "$DATA" workspace create W > /dev/null
"$CLI" --data-dir "$DATA" ingest -w W "$PDF" > "$WORK/ingest.json" 2> /dev/null
"$CLI" --data-dir "$DATA" ask -w W --json "Should aspirin be used in healthy women under 65?" > "$WORK/ask.json"
"$PYTHON" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$UI_PORT/', timeout=30).read()"
sleep 20  # telemetry flushes on a timer
kill -INT $serve
wait $serve
'''


def _namespace_available() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return False
    probe = subprocess.run(["unshare", "-n", "-m", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _harness(work: Path) -> tuple[list[str], dict[str, str], Path, Path]:
    """(command prefix, environment, record of Python attempts, record of DNS queries) for a run in the nets."""
    hooks = work / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    python_record, dns_record = work / "python-attempts.txt", work / "dns-queries.txt"
    python_record.touch()
    dns_record.touch()
    home = work / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "PYTHONWARNINGS": "ignore",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH", "")])),
        "OFFLINE_RECORD": str(python_record),
    }
    if not _namespace_available():
        return [], env, python_record, dns_record
    (work / "dns.py").write_text(DNS_RECORDER, encoding="utf-8")
    (work / "resolv.conf").write_text("nameserver 127.0.0.1\n", encoding="utf-8")
    enter = textwrap.dedent(f"""
        ip link set lo up
        mount --bind {work / 'resolv.conf'} /etc/resolv.conf
        {sys.executable} -S {work / 'dns.py'} {dns_record} < /dev/null > /dev/null 2>&1 &
        recorder=$!
        sleep 0.5
        "$@"
        status=$?
        kill $recorder
        exit $status
    """)
    (work / "enter.sh").write_text(enter, encoding="utf-8")
    return ["unshare", "-n", "-m", "sh", str(work / "enter.sh")], env, python_record, dns_record


def test_both_nets_catch_a_deliberate_lookup(tmp_path: Path) -> None:
    prefix, env, python_record, dns_record = _harness(tmp_path)
    code = "import socket\ntry:\n    socket.getaddrinfo('example.org', 443)\nexcept OSError:\n    pass\n"
    subprocess.run([*prefix, sys.executable, "-c", code], env=env, check=False, timeout=60)
    assert "resolve example.org" in python_record.read_text(encoding="utf-8")
    if prefix:
        subprocess.run([*prefix, "getent", "hosts", "example.net"], env=env, check=False, timeout=60)
        assert "dns example.net" in dns_record.read_text(encoding="utf-8")


def test_serve_ingest_and_ask_make_no_outside_attempt(tmp_path: Path, excerpt: Any) -> None:
    from workspace_app.adapters.supervisor import free_port

    prefix, env, python_record, dns_record = _harness(tmp_path)
    env.update({
        "CLI": str(CLI), "PYTHON": sys.executable, "DATA": str(tmp_path / "data"), "WORK": str(tmp_path),
        "UI_PORT": str(free_port()), "PDF": str(excerpt("mosca-2011-women-cvd.pdf", 3, 4)),
    })
    (tmp_path / "flow.sh").write_text(FLOW, encoding="utf-8")
    run = subprocess.run(
        [*prefix, "sh", str(tmp_path / "flow.sh")], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    serve_log = (tmp_path / "serve.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, run.stderr[-2000:] + serve_log[-3000:]
    assert '"status": "ready"' in (tmp_path / "ingest.json").read_text(encoding="utf-8")
    assert '"refused": false' in (tmp_path / "ask.json").read_text(encoding="utf-8")
    assert python_record.read_text(encoding="utf-8") == "", "a Python process tried to reach outside"
    assert dns_record.read_text(encoding="utf-8") == "", "a process looked up an outside host"
    written = sorted(str(p.relative_to(tmp_path / "home")) for p in (tmp_path / "home").rglob("*"))
    assert not [p for p in written if p.startswith(".cache/Microsoft")], written
