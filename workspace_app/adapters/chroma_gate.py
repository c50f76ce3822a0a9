"""The Chroma server of `serve`, behind a token: `python -m workspace_app.adapters.chroma_gate --port P
--token-file F -- chroma run --path DIR`.

chromadb 1.5's server (`chroma run`, Rust) has no authentication, and its Python server (token authn built in)
needs FastAPI, which we don't ship. So this gate listens on 127.0.0.1:P, refuses every request without
`Authorization: Bearer <token>` (or `X-Chroma-Token: <token>`) before reading a byte of its body, refuses a body
over `MAX_BODY_BYTES`, and forwards the others to `chroma run` listening on an inner port. The inner port must not be a way around the gate: the gate moves itself into a new
user + network namespace before it starts Chroma, so Chroma's loopback is private to the two of them (the gate's
listening socket, made before the move, stays in the host's namespace). Where the kernel forbids unprivileged
namespaces the gate says so in its log and Chroma's inner port is on the host's loopback.
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import hmac
import http.client
import os
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import threading
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from pathlib import Path

HOST = "127.0.0.1"
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
CREDENTIALS = {"authorization", "x-chroma-token", "host"}
# Our largest request is an upsert of 2,000 vectors (~20 MB of JSON at 512 dimensions); nothing sane is near this.
MAX_BODY_BYTES = 256 << 20
# A hung Chroma (stopped, swapping) must not hold a gate thread for ever; the API's clients give up after a few
# seconds on their own (WORKSPACE_STORAGE__CHROMA_TIMEOUT_S), the worker's large upserts take seconds, not minutes.
RELAY_TIMEOUT_S = 120.0


class BodyTooLargeError(Exception):
    """A request body over `MAX_BODY_BYTES`: refused with 413, the rest of it unread."""


def token_ok(headers: Message, token: str) -> bool:
    """True when the request carries the token (compared in constant time)."""
    given = headers.get("X-Chroma-Token") or ""
    bearer = headers.get("Authorization") or ""
    if bearer.startswith("Bearer "):
        given = bearer[len("Bearer "):].strip()
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def handler_for(token: str, inner_port: int) -> type[BaseHTTPRequestHandler]:
    """A request handler that checks the token and forwards to Chroma on the inner port."""
    local = threading.local()

    class Gate(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            if not token_ok(self.headers, token):  # before a byte of the body is read
                self._refuse(401, b'{"error":"Unauthorized","message":"a valid token is required"}')
                return
            try:
                body = self._body()
            except BodyTooLargeError:
                self._refuse(413, b'{"error":"PayloadTooLarge","message":"the request body is too large"}')
                return
            except ValueError:
                self._refuse(400, b'{"error":"BadRequest","message":"the body\'s length is not a number"}')
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | CREDENTIALS}
            try:
                status, reason, out_headers, data = _relay(local, inner_port, self.command, self.path, body, headers)
            except OSError:
                self._reply(502, b'{"error":"BadGateway","message":"the Chroma server is not answering"}')
                return
            self.send_response(status, reason)
            for key, value in out_headers:
                if key.lower() not in HOP_BY_HOP | {"content-length"}:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _body(self) -> bytes | None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                return _read_chunked(self.rfile, MAX_BODY_BYTES)
            length = int(self.headers.get("Content-Length") or 0)  # ValueError when it is not a number
            if length < 0:
                raise ValueError("a negative Content-Length")
            if length > MAX_BODY_BYTES:
                raise BodyTooLargeError
            return self.rfile.read(length) if length else None

        def _refuse(self, status: int, data: bytes) -> None:
            """Answer and close the connection: the rest of the request's body is never read."""
            self.close_connection = True
            self._reply(status, data, {"Connection": "close"})

        def _reply(self, status: int, data: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return  # requests are not logged (their paths name collections)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

    return Gate


def _relay(
    local: threading.local, port: int, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, str, list[tuple[str, str]], bytes]:
    """One request to Chroma over this thread's kept-alive connection (reconnecting once if it was closed; OSError
    when Chroma does not answer within `RELAY_TIMEOUT_S`)."""
    for attempt in (1, 2):
        connection = getattr(local, "connection", None) or http.client.HTTPConnection(
            HOST, port, timeout=RELAY_TIMEOUT_S
        )
        local.connection = connection
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            local.connection = None
            if attempt == 2 or isinstance(exc, TimeoutError):  # a hung Chroma: asking again would wait as long
                raise OSError("Chroma did not answer") from None
    raise AssertionError("unreachable")


def _read_chunked(stream: BufferedIOBase, limit: int) -> bytes:
    """A chunked body, read no further than `limit` bytes (`BodyTooLargeError` past it)."""
    parts, total = [], 0
    while size := int(stream.readline().split(b";")[0].strip() or b"0", 16):
        total += size
        if total > limit:
            raise BodyTooLargeError
        parts.append(stream.read(size))
        stream.readline()
    while stream.readline() not in (b"\r\n", b"\n", b""):
        pass
    return b"".join(parts)


class GateServer(ThreadingHTTPServer):
    """HTTPServer without its reverse lookup of the listening address (`socket.getfqdn`): no name lookups."""

    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = HOST, int(self.server_address[1])


def enter_private_network() -> str | None:
    """Move this (single-threaded) process into new user and network namespaces with loopback up; None when
    done, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return os.strerror(ctypes.get_errno())
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH22x", b"lo", 0)
            flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
            fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))
    except OSError as exc:
        return str(exc)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    """Listen, isolate, start Chroma, gate requests until Chroma exits or we are told to stop."""
    from workspace_app.adapters.process import prepare_process

    prepare_process()
    parser = argparse.ArgumentParser(prog="chroma_gate")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("chroma", nargs=argparse.REMAINDER, help="-- chroma run --path DIR")
    args = parser.parse_args(argv)
    token = args.token_file.read_text().strip()
    chroma_argv = [a for a in args.chroma if a != "--"]
    server = GateServer((HOST, args.port), handler_for(token, 0))
    why_not = enter_private_network()
    if why_not:
        print(f"chroma gate: no private network namespace ({why_not}); Chroma's inner port is on the host's "
              "loopback", file=sys.stderr, flush=True)
    inner = free_port()
    server.RequestHandlerClass = handler_for(token, inner)
    chroma = subprocess.Popen([*chroma_argv, "--host", HOST, "--port", str(inner)], preexec_fn=_die_with_parent)  # noqa: PLW1509 - no threads yet
    print(f"chroma gate: 127.0.0.1:{args.port} -> Chroma pid {chroma.pid} on {HOST}:{inner}"
          f"{'' if why_not else ' (private network namespace)'}", file=sys.stderr, flush=True)
    threading.Thread(target=server.serve_forever, name="gate", daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: chroma.terminate())
    signal.signal(signal.SIGINT, lambda *_: chroma.terminate())
    code = chroma.wait()
    server.shutdown()
    return code


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


if __name__ == "__main__":
    raise SystemExit(main())
