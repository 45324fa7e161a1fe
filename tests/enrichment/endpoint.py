"""A real OpenAI-compatible HTTP endpoint on 127.0.0.1 for the enrichment tests: it records
each request and answers chunk requests with a fixed proposal, summary requests with a summary."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import pytest

from tests.local_http import LocalHttpServer, json_reply

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


class Endpoint(LocalHttpServer):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.reply: Callable[[dict[str, Any]], tuple[int, Any]] = default_reply

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        request = json.loads(body)
        self.requests.append({"path": path, "headers": headers, "body": request})
        return json_reply(*self.reply(request))

    def chunk_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["body"]["response_format"]["json_schema"]["name"] == "chunk_enrichment"]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with Endpoint().running() as ep:
        yield ep
