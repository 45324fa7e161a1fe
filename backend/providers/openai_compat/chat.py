"""``ChatModel`` over any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server).

One POST to ``{base_url}/chat/completions`` per answer, with httpx; ``stream`` asks
with ``"stream": true`` and yields the tokens of the server-sent events as they come
(``data: {choices: [{delta: {content}}]}`` ... ``data: [DONE]``). Throttling
(429), server errors (5xx) and timeouts are retried by tenacity with jittered
exponential backoff; everything else fails at once. Foreign errors become our
``ProviderError`` subclasses here, at the boundary, with the cause kept.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
from tenacity import Retrying

from backend.common import telemetry
from backend.common.config import ChatProviderSettings
from backend.common.errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from backend.core.prompt import build_prompt
from backend.core.types import ChatRequest
from backend.providers.http_json import check_status, json_client, post_json, transient_retrying, transport_errors


def request_body(request: ChatRequest, settings: ChatProviderSettings) -> dict[str, Any]:
    """The mode's system prompt (with the untrusted-passages rule) and the fenced passages
    plus question as the user message (``backend.core.prompt``)."""
    prompt = build_prompt(request)
    return {
        "model": settings.model,
        "messages": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ],
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "stream": False,
    }


class OpenAICompatChatModel:
    """Answers through ``/chat/completions``; ``transport`` lets tests plug httpx's own."""

    name = "openai_compat"

    def __init__(self, settings: ChatProviderSettings, transport: httpx.BaseTransport | None = None) -> None:
        if not settings.base_url:
            raise ConfigError("llm: provider openai_compat needs base_url (e.g. http://127.0.0.1:8000/v1)", field="base_url")
        if not settings.model:
            raise ConfigError("llm: provider openai_compat needs model", field="model")
        self._settings = settings
        self.model_id = settings.model  # gen_ai.request.model of the answer span
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._client = json_client(settings.api_key, settings.timeout_s, transport)

    def close(self) -> None:
        self._client.close()

    def _retrying(self) -> Retrying:
        return transient_retrying(self._settings.retry, "chat.openai_compat.retry")

    def generate(self, request: ChatRequest) -> str:
        return self._retrying()(self._post, request_body(request, self._settings))

    def stream(self, request: ChatRequest) -> Iterator[str]:
        """The answer's tokens as the endpoint streams them. Errors before the first token
        are raised like ``generate``'s (retried the same way); the stream itself is not retried."""
        response = self._retrying()(self._open_stream, {**request_body(request, self._settings), "stream": True})
        try:
            yield from _stream_tokens(response, self._url, self._settings.timeout_s)
        finally:
            response.close()

    def _open_stream(self, body: dict[str, Any]) -> httpx.Response:
        with transport_errors("chat endpoint", self._url, self._settings.timeout_s):
            response = self._client.send(self._client.build_request("POST", self._url, json=body), stream=True)
        if response.status_code >= 400:
            response.read()
            response.close()
            check_status(response, "chat endpoint", self._url)
        return response

    def _post(self, body: dict[str, Any]) -> str:
        response = post_json(self._client, self._url, body, "chat endpoint", self._settings.timeout_s)
        if telemetry.enabled():
            _record_usage(response)
        return _content(response, self._url)


def _stream_tokens(response: httpx.Response, url: str, timeout_s: float) -> Iterator[str]:
    """The ``delta.content`` of each ``data:`` line of an OpenAI-style event stream, up to ``[DONE]``."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        response.read()  # a server that ignores "stream": the whole answer at once
        yield _content(response, url)
        return
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                choice = json.loads(data)["choices"][0]
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise ProviderError(f"chat endpoint {url} streamed an event without choices[0]: {data[:120]}") from exc
            content = (choice.get("delta") or {}).get("content") if isinstance(choice, dict) else None
            if content:
                yield str(content)
    except httpx.TimeoutException as exc:
        raise ProviderTimeout(f"chat endpoint {url} stopped streaming for more than {timeout_s}s") from exc
    except httpx.TransportError as exc:
        raise ProviderUnavailable(f"chat endpoint {url} broke off the stream: {exc}") from exc


def _record_usage(response: httpx.Response) -> None:
    """The token counts and model the endpoint reports, on the answer span (GenAI conventions)."""
    try:
        payload = response.json()
    except ValueError:
        return
    usage = payload.get("usage") if isinstance(payload, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    model = payload.get("model") if isinstance(payload, dict) else None
    telemetry.annotate({
        "gen_ai.response.model": model if isinstance(model, str) else None,
        "gen_ai.usage.input_tokens": usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None,
        "gen_ai.usage.output_tokens": usage.get("completion_tokens")
        if isinstance(usage.get("completion_tokens"), int) else None,
    })


def _content(response: httpx.Response, url: str) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ProviderError(f"chat endpoint {url} answered without choices[0].message.content") from exc
    if content is not None and not isinstance(content, str):
        raise ProviderError(f"chat endpoint {url} answered a non-text message content ({type(content).__name__})")
    return content or ""
