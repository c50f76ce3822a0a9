"""A local HTTP server speaking the OpenAI chat-completions protocol (plain and streamed), for LLM tests.

Replies are scripted: `server.replies` is a list of texts (or callables of the request) used in order, the
last one repeating; `server.status` makes every request fail with that HTTP status. Requests are recorded.
A streamed reply waits `piece_delay_s` before each piece (a model writing slowly) and records in `last_piece_at`
the `time.monotonic()` at which it sent its last piece.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | Callable[[dict[str, Any]], str]


class FakeOpenAI:
    """State shared with the handler: scripted replies, an optional failure status, recorded requests."""

    def __init__(self) -> None:
        self.replies: list[Reply] = ["ok"]
        self.status: int | None = None
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self.piece_delay_s = 0.0
        self.last_piece_at = 0.0

    def next_reply(self, request: dict[str, Any]) -> str:
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        return reply(request) if callable(reply) else reply


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            fake.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
            if fake.status is not None:
                self._json(fake.status, {"error": {"message": "scripted failure", "type": "invalid_request_error"}})
                return
            text = fake.next_reply(body)
            if body.get("stream"):
                self._stream(text, body.get("model", "m"))
            else:
                self._json(200, {
                    "id": "c1", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

        def _json(self, status: int, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, text: str, model: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
            for piece in pieces:
                time.sleep(fake.piece_delay_s)
                chunk = {
                    "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            fake.last_piece_at = time.monotonic()
            done = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()

    return Handler


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAI]:
    """Run the fake server on a free loopback port; `fake.url` is the base URL to give the client."""
    fake = FakeOpenAI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
