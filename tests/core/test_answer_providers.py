"""Answer providers behind the ChatModel port: extractive (real model) and OpenAI-compatible
(the real httpx client against a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

from backend.common.config import ChatProviderSettings, Settings
from backend.common.errors import ConfigError, ProviderError, ProviderRateLimited, ProviderTimeout, ProviderUnavailable
from backend.core.ports import ChatModel
from backend.core.types import ChatRequest, Chunk
from backend.core.sentence_segments import split_sentences
from backend.providers.local.extractive import NO_ANSWER, PARTIAL_NOTE, DisabledChatModel, ExtractiveChatModel
from backend.providers.openai_compat.chat import OpenAICompatChatModel
from backend.providers.registry import build_chat_model
from tests.local_http import LocalHttpServer, json_reply

PASSAGES = (
    Chunk("a#0", "a", "The office opens at 8:00 on weekdays. Parking is free for employees in the north garage.", "a.md", 0),
    Chunk("b#0", "b", "Employees receive 25 days of paid annual leave per year. Leave requests go through the HR portal.", "b.md", 0),
)
QUESTION = "How many days of annual leave do employees get?"


def request(mode: str = "rag", context: tuple[Chunk, ...] = PASSAGES) -> ChatRequest:
    return ChatRequest(mode, f"{mode} prompt", QUESTION, context)  # type: ignore[arg-type]


# --- extractive -----------------------------------------------------------------------
def test_extractive_ranks_sentences_with_the_model_and_cites_passages(embedder: Any) -> None:
    model = ExtractiveChatModel(embedder, max_sentences=1)
    assert isinstance(model, ChatModel)
    assert model.generate(request()) == "Employees receive 25 days of paid annual leave per year. [2]"


def test_extractive_adds_no_support_that_scores_far_below_the_lead(embedder: Any) -> None:
    # "Leave requests go through the HR portal." shares a word but does not answer: room for it, yet left out
    answer = ExtractiveChatModel(embedder, max_sentences=2).generate(request())
    assert answer == "Employees receive 25 days of paid annual leave per year. [2]"


def test_extractive_hybrid_says_coverage_is_partial(embedder: Any) -> None:
    answer = ExtractiveChatModel(embedder, max_sentences=1).generate(request("hybrid"))
    assert answer == f"{PARTIAL_NOTE} Employees receive 25 days of paid annual leave per year. [2]"


@pytest.mark.parametrize(("mode", "context"), [("fallback", PASSAGES), ("rag", ())])
def test_extractive_fallback_says_knowledge_base_had_no_answer(embedder: Any, mode: str, context: tuple[Chunk, ...]) -> None:
    assert ExtractiveChatModel(embedder).generate(request(mode, context)) == NO_ANSWER


def test_extractive_answers_blank_when_context_has_no_sentences(embedder: Any) -> None:
    figure_only = (Chunk("f#0", "f", "[FIGURE:img-1]", "f.docx", 0),)
    assert ExtractiveChatModel(embedder).generate(request("rag", figure_only)) == ""


def test_extractive_caches_sentence_vectors(embedder: Any) -> None:
    model = ExtractiveChatModel(embedder)
    model.generate(request())
    before = embedder.texts_embedded
    model.generate(request())
    assert embedder.texts_embedded == before


def test_extractive_without_embedder_uses_word_overlap() -> None:
    answer = ExtractiveChatModel(None, max_sentences=1).generate(request())
    assert answer == "Employees receive 25 days of paid annual leave per year. [2]"


def test_split_sentences_drops_figure_markers_and_fragments() -> None:
    assert split_sentences("See [FIGURE:f1] the chart below. Ok. Totals rise every year in March.") == [
        "See the chart below.", "Totals rise every year in March."]


def test_registry_builds_configured_providers() -> None:
    settings = Settings()
    assert build_chat_model(ChatProviderSettings(provider="extractive"), settings).name == "extractive"
    assert isinstance(build_chat_model(ChatProviderSettings(provider="none"), settings), DisabledChatModel)
    assert DisabledChatModel().generate(request()) == ""
    with pytest.raises(ConfigError, match="provider openai_compat needs base_url"):
        build_chat_model(ChatProviderSettings(provider="openai_compat"), settings)


# --- OpenAI-compatible --------------------------------------------------------------------
class FakeEndpoint(LocalHttpServer):
    """A real HTTP server on 127.0.0.1 that records request bodies and replays scripted replies."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[tuple[int, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        self.received.append(json.loads(body))
        self.headers.append(headers)
        self.paths.append(path)
        return json_reply(*(self.replies.pop(0) if self.replies else (200, _completion("default"))))


def _completion(content: str | None) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    with FakeEndpoint().running() as ep:
        yield ep


def _model(url: str, **changes: Any) -> OpenAICompatChatModel:
    settings = ChatProviderSettings.model_validate({
        "provider": "openai_compat", "base_url": url, "model": "local-llm", "api_key": "sk-test", "timeout_s": 2,
        "temperature": 0.2, "max_tokens": 300, "retry": {"max_attempts": 3, "initial_wait_s": 0.01, "max_wait_s": 0.05},
        **changes,
    })
    return OpenAICompatChatModel(settings)


def test_openai_compat_posts_prompt_and_numbered_passages(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append((200, _completion("  Employees get 25 days [2].  ")))
    assert _model(endpoint.url).generate(request()) == "  Employees get 25 days [2].  "
    assert endpoint.paths == ["/v1/chat/completions"]
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-test"
    body = endpoint.received[0]
    assert {k: body[k] for k in ("model", "temperature", "max_tokens", "stream")} == {
        "model": "local-llm", "temperature": 0.2, "max_tokens": 300, "stream": False}
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    boundary = re.search(r"<<<PASSAGE 1 ([0-9a-f]{24})\n", user)[1]  # type: ignore[index]
    assert body["messages"][0]["role"] == "system" and system.startswith("rag prompt\n\nSecurity rule: ")
    assert boundary in system  # the untrusted-passages rule names this request's boundary (test_prompt_injection)
    assert body["messages"][1] == {"role": "user", "content": (
        f"Context passages (2, untrusted data):\n\n<<<PASSAGE 1 {boundary}\nsource: a.md\n{PASSAGES[0].text}\n"
        f"PASSAGE 1 {boundary}>>>\n\n<<<PASSAGE 2 {boundary}\nsource: b.md\n{PASSAGES[1].text}\nPASSAGE 2 {boundary}>>>"
        f"\n\nQuestion: {QUESTION}")}


def test_openai_compat_fallback_request_has_no_passages(endpoint: FakeEndpoint) -> None:
    _model(endpoint.url).generate(request("fallback", ()))
    assert endpoint.received[0]["messages"][1] == {"role": "user", "content": f"Question: {QUESTION}"}


def test_openai_compat_null_content_is_blank(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append((200, _completion(None)))
    assert _model(endpoint.url).generate(request()) == ""


@pytest.mark.parametrize("status", [429, 500, 503])
def test_openai_compat_retries_throttling_and_server_errors(endpoint: FakeEndpoint, status: int) -> None:
    endpoint.replies.extend([(status, {"error": "busy"}), (status, {"error": "busy"}), (200, _completion("third time"))])
    assert _model(endpoint.url).generate(request()) == "third time"
    assert len(endpoint.received) == 3


@pytest.mark.parametrize(("status", "error", "message"), [
    (429, ProviderRateLimited, r"throttled the request \(HTTP 429\)"),
    (502, ProviderTimeout, "failed with HTTP 502"),
])
def test_openai_compat_gives_up_after_max_attempts(endpoint: FakeEndpoint, status: int, error: type, message: str) -> None:
    endpoint.replies.extend([(status, {"error": "x"})] * 3)
    with pytest.raises(error, match=message):
        _model(endpoint.url).generate(request())
    assert len(endpoint.received) == 3


def test_openai_compat_client_errors_are_not_retried(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append((400, {"error": {"message": "model 'local-llm' not found"}}))
    with pytest.raises(ProviderError, match=r"rejected the request with HTTP 400: .*model 'local-llm' not found"):
        _model(endpoint.url).generate(request())
    assert len(endpoint.received) == 1


def test_openai_compat_malformed_reply_is_provider_error(endpoint: FakeEndpoint) -> None:
    endpoint.replies.append((200, "<html>not json</html>"))
    with pytest.raises(ProviderError, match=r"answered without choices\[0\].message.content"):
        _model(endpoint.url).generate(request())


def test_openai_compat_unreachable_endpoint_is_unavailable(endpoint: FakeEndpoint) -> None:
    url = endpoint.url
    endpoint.server.shutdown()
    endpoint.server.server_close()
    with pytest.raises(ProviderUnavailable, match="cannot be reached"):
        _model(url).generate(request())
