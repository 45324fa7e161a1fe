"""A real OpenAI-compatible HTTP endpoint on 127.0.0.1 for the enrichment tests: it records
each request and answers chunk requests with a fixed proposal, summary requests with a summary."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest

PROPOSAL: dict[str, Any] = {"summary": "What the passage rules.", "content_type": "policy",
            "metadata": {"department": "Nope", "audience": ["staff", "aliens"]},
            "questions": ["How many days do I get?", "Who approves the request?", "How many days do I get?"]}


def completion(content: Any) -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content)
    return {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}


def default_reply(body: dict[str, Any]) -> tuple[int, Any]:
    name = body.get("response_format", {}).get("json_schema", {}).get("name")
    if name == "summary":
        user = body["messages"][-1]["content"]
        return 200, completion({"summary": f"Summary of {len(user)} characters."})
    return 200, completion(PROPOSAL)


class Endpoint:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: Callable[[dict[str, Any]], tuple[int, Any]] = default_reply
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, payload = endpoint.reply(body)
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chunk_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["body"]["response_format"]["json_schema"]["name"] == "chunk_enrichment"]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    ep = Endpoint()
    thread = threading.Thread(target=ep.server.serve_forever, daemon=True)
    thread.start()
    yield ep
    ep.server.shutdown()
    ep.server.server_close()
    thread.join(timeout=5)
