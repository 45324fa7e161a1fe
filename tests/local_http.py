"""A real HTTP server on 127.0.0.1 for the adapters of remote services (OpenAI-compatible chat,
enrichment, ``/rerank``, a web site to crawl): the client library under test talks real HTTP to it.
Each stand-in subclasses it and says how it answers a POST in ``respond`` or a GET in ``respond_get``
(``respond_read`` when it reads the request headers or answers HEAD)."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, TypeVar

S = TypeVar("S", bound="LocalHttpServer")


def json_reply(status: int, payload: Any) -> tuple[int, str, bytes]:
    """A JSON answer; a ``str`` payload is sent as it is (for malformed-body tests)."""
    return status, "application/json", payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()


class LocalHttpServer:
    """Bound at construction (``url`` is known at once), serving only inside ``running()``."""

    def __init__(self, url_suffix: str = "/v1") -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status, kind, raw = owner.respond(self.path, dict(self.headers), body)
                self.reply(status, {"Content-Type": kind}, raw)

            def do_GET(self) -> None:  # noqa: N802
                self.reply(*owner.respond_read("GET", self.path, dict(self.headers)))

            def do_HEAD(self) -> None:  # noqa: N802
                self.reply(*owner.respond_read("HEAD", self.path, dict(self.headers)), body=False)

            def reply(self, status: int, headers: dict[str, str], raw: bytes, body: bool = True) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                if body:
                    self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{url_suffix}"

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        """``(status, content type, raw body)`` for one POST."""
        raise NotImplementedError

    def respond_get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """``(status, headers, raw body)`` for one GET; a stand-in that serves pages overrides it."""
        return 405, {}, b"GET not served"

    def respond_read(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """A GET or HEAD (whose body is not sent) with its request headers; by default ``respond_get``'s answer.
        A stand-in that checks headers (a signature) or answers HEAD on its own terms overrides it."""
        return self.respond_get(path)

    @contextmanager
    def running(self: S) -> Iterator[S]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join(timeout=5)
