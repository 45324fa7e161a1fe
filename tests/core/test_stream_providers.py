"""Token streaming of the LLM providers: the real httpx client and the real ``oci`` SDK
against local HTTP endpoints that answer with server-sent events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import ChatProviderSettings
from backend.common.errors import ProviderError
from backend.core.types import ChatRequest, Chunk
from backend.providers.openai_compat.chat import OpenAICompatChatModel
from tests.local_http import LocalHttpServer
from tests.providers.oci_fake_service import (  # noqa: F401 - fixtures
    FakeOciService,
    SseEvents,
    oci_config_file,
    oci_service,
)
from tests.providers.test_oci_chat import model_for

REQUEST = ChatRequest("rag", "Answer from the passages.", "How many vacation days?",
                      (Chunk("c1", "d1", "Employees get 25 vacation days.", "hr/leave.md", 0),))


class SseEndpoint(LocalHttpServer):
    """A real HTTP server on 127.0.0.1 replaying scripted (status, content type, body) replies."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[tuple[int, str, bytes]] = []
        self.received: list[dict[str, Any]] = []

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        self.received.append(json.loads(body))
        return self.replies.pop(0)


def sse_tokens(tokens: list[str]) -> tuple[int, str, bytes]:
    events = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    events += [{"choices": [{"index": 0, "delta": {"content": t}}]} for t in tokens]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return 200, "text/event-stream", body.encode()


def completion(content: str) -> tuple[int, str, bytes]:
    return 200, "application/json", json.dumps({"choices": [{"message": {"content": content}}]}).encode()


@pytest.fixture
def sse_endpoint() -> Iterator[SseEndpoint]:
    with SseEndpoint().running() as ep:
        yield ep


def openai_model(url: str) -> OpenAICompatChatModel:
    return OpenAICompatChatModel(ChatProviderSettings.model_validate({
        "provider": "openai_compat", "base_url": url, "model": "local-llm", "timeout_s": 2,
        "retry": {"max_attempts": 3, "initial_wait_s": 0.01, "max_wait_s": 0.05}}))


def test_openai_compat_streams_the_tokens_of_the_event_stream(sse_endpoint: SseEndpoint) -> None:
    sse_endpoint.replies.append(sse_tokens(["Employees ", "get 25 ", "days [1]."]))
    assert list(openai_model(sse_endpoint.url).stream(REQUEST)) == ["Employees ", "get 25 ", "days [1]."]
    assert sse_endpoint.received[0]["stream"] is True
    assert sse_endpoint.received[0]["messages"][1]["content"].endswith("Question: How many vacation days?")


def test_openai_compat_stream_retries_throttling_before_the_first_token(sse_endpoint: SseEndpoint) -> None:
    sse_endpoint.replies += [(429, "application/json", b'{"error": "slow down"}'), sse_tokens(["ok"])]
    assert list(openai_model(sse_endpoint.url).stream(REQUEST)) == ["ok"]
    assert len(sse_endpoint.received) == 2


def test_openai_compat_server_without_streaming_answers_in_one_piece(sse_endpoint: SseEndpoint) -> None:
    sse_endpoint.replies.append(completion("All at once [1]."))
    assert list(openai_model(sse_endpoint.url).stream(REQUEST)) == ["All at once [1]."]


def test_openai_compat_malformed_event_is_a_provider_error(sse_endpoint: SseEndpoint) -> None:
    sse_endpoint.replies.append((200, "text/event-stream", b'data: {"nothing": 1}\n\n'))
    with pytest.raises(ProviderError, match="streamed an event without choices"):
        list(openai_model(sse_endpoint.url).stream(REQUEST))


@pytest.mark.parametrize("chat_format,events,expected", [
    ("cohere", [{"apiFormat": "COHERE", "text": "You get "}, {"apiFormat": "COHERE", "text": "25 days [1]."},
                {"apiFormat": "COHERE", "text": "You get 25 days [1].", "finishReason": "COMPLETE"}],
     ["You get ", "25 days [1]."]),
    ("generic", [{"index": 0, "message": {"role": "ASSISTANT", "content": [{"type": "TEXT", "text": "25 "}]}},
                 {"index": 0, "message": {"role": "ASSISTANT", "content": [{"type": "TEXT", "text": "days [1]."}]}},
                 {"index": 0, "finishReason": "stop"}],
     ["25 ", "days [1]."]),
])
def test_oci_streams_text_events_with_is_stream(oci_service: FakeOciService, oci_config_file: Path,  # noqa: F811
                                                chat_format: str, events: list[Any], expected: list[str]) -> None:
    oci_service.reset(lambda body, n: (200, SseEvents(events)))
    assert list(model_for(oci_service, oci_config_file, chat_format).stream(REQUEST)) == expected
    assert oci_service.requests[0]["body"]["chatRequest"]["isStream"] is True


def test_oci_stream_of_a_model_that_sends_only_the_final_event(oci_service: FakeOciService,  # noqa: F811
                                                               oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(lambda body, n: (200, SseEvents([{"apiFormat": "COHERE", "text": "Whole answer.",
                                                        "finishReason": "COMPLETE"}])))
    assert list(model_for(oci_service, oci_config_file, "cohere").stream(REQUEST)) == ["Whole answer."]
