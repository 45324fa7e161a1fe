"""A local stand-in for the OCI Generative AI inference service (127.0.0.1 only).

The real ``oci`` SDK talks to it over HTTP with a real config file and a throwaway
RSA key, so requests are really signed; the server records each request (path,
headers, JSON body) and answers from a handler the test sets, like the service.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

Reply = tuple[int, Any]


@dataclass
class SseEvents:
    """A reply sent as ``text/event-stream``: one ``data:`` line per event (a streamed chat)."""

    events: list[Any]

    def encode(self) -> bytes:
        return "".join(f"data: {json.dumps(e)}\n\n" for e in self.events).encode()


@dataclass
class FakeOciService:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    handler: Callable[[dict[str, Any], int], Reply] = lambda body, n: (500, {"code": "Unset", "message": "no handler"})

    def reset(self, handler: Callable[[dict[str, Any], int], Reply]) -> None:
        self.requests.clear()
        self.handler = handler


def _make_handler(service: FakeOciService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            service.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            status, payload = service.handler(body, len(service.requests))
            sse = isinstance(payload, SseEvents)
            raw = payload.encode() if sse else payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "text/event-stream" if sse else "application/json")
                self.send_header("opc-request-id", f"req-{len(service.requests)}")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a read-timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


@pytest.fixture(scope="module")
def oci_service() -> Iterator[FakeOciService]:
    service = FakeOciService()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(service))
    service.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def oci_config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real OCI config file whose API key is a fresh 2048-bit RSA key."""
    folder = tmp_path_factory.mktemp("oci")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption())
    (folder / "key.pem").write_bytes(pem)
    config = folder / "config"
    config.write_text(
        "[DEFAULT]\n"
        "user=ocid1.user.oc1..testuser\n"
        "fingerprint=11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00\n"
        "tenancy=ocid1.tenancy.oc1..testtenancy\n"
        "region=us-chicago-1\n"
        f"key_file={folder / 'key.pem'}\n"
    )
    return config


KEY_ID = "ocid1.tenancy.oc1..testtenancy/ocid1.user.oc1..testuser/11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00"


def verify_signature(request: dict[str, Any], key_file: Path) -> list[str]:
    """Check the request's HTTP signature with the public half of the test key;
    returns the signed header names (raises ``InvalidSignature`` if it does not verify)."""
    import base64
    import re

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    auth = request["headers"]["authorization"]
    fields = dict(re.findall(r'(\w+)="([^"]*)"', auth))
    names = fields["headers"].split()
    lines = [f"(request-target): post {request['path']}" if n == "(request-target)" else f"{n}: {request['headers'][n]}"
             for n in names]
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    key.public_key().verify(base64.b64decode(fields["signature"]), "\n".join(lines).encode(),  # type: ignore[union-attr]
                            padding.PKCS1v15(), hashes.SHA256())  # type: ignore[call-arg]
    return names
