"""``ChatModel`` over any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server).

One POST to ``{base_url}/chat/completions`` per answer, with httpx. Throttling
(429), server errors (5xx) and timeouts are retried by tenacity with jittered
exponential backoff; everything else fails at once. Foreign errors become our
``ProviderError`` subclasses here, at the boundary, with the cause kept.
"""

from __future__ import annotations

from typing import Any

import httpx
import structlog
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from backend.common.config import ChatProviderSettings
from backend.common.errors import ConfigError, ProviderError, ProviderRateLimited, ProviderTimeout, ProviderUnavailable
from backend.core.types import ChatRequest

log = structlog.get_logger(__name__)


def user_message(request: ChatRequest) -> str:
    """The question and its numbered passages; ``[n]`` is the n-th citation."""
    if not request.context:
        return f"Question: {request.question}"
    passages = "\n\n".join(f"[{i}] (source: {c.source})\n{c.text}" for i, c in enumerate(request.context, start=1))
    return f"Context passages:\n\n{passages}\n\nQuestion: {request.question}"


def request_body(request: ChatRequest, settings: ChatProviderSettings) -> dict[str, Any]:
    return {
        "model": settings.model,
        "messages": [
            {"role": "system", "content": request.system_prompt},
            {"role": "user", "content": user_message(request)},
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
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if settings.api_key is not None:
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._client = httpx.Client(timeout=settings.timeout_s, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def generate(self, request: ChatRequest) -> str:
        retry = self._settings.retry
        retrying = Retrying(
            retry=retry_if_exception_type((ProviderRateLimited, ProviderTimeout)),
            stop=stop_after_attempt(retry.max_attempts),
            wait=wait_exponential_jitter(initial=retry.initial_wait_s, max=retry.max_wait_s),
            before_sleep=_log_retry,
            reraise=True,
        )
        return retrying(self._post, request_body(request, self._settings))

    def _post(self, body: dict[str, Any]) -> str:
        try:
            response = self._client.post(self._url, json=body)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"chat endpoint {self._url} did not answer within {self._settings.timeout_s}s") from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(f"chat endpoint {self._url} cannot be reached: {exc}") from exc
        status = response.status_code
        if status == 429:
            raise ProviderRateLimited(f"chat endpoint {self._url} throttled the request (HTTP 429)", status=status)
        if status >= 500:
            raise ProviderTimeout(f"chat endpoint {self._url} failed with HTTP {status}", status=status)
        if status >= 400:
            raise ProviderError(
                f"chat endpoint {self._url} rejected the request with HTTP {status}: {response.text[:200]}", status=status
            )
        return _content(response, self._url)


def _content(response: httpx.Response, url: str) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ProviderError(f"chat endpoint {url} answered without choices[0].message.content") from exc
    if content is not None and not isinstance(content, str):
        raise ProviderError(f"chat endpoint {url} answered a non-text message content ({type(content).__name__})")
    return content or ""


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    log.warning("chat.openai_compat.retry", attempt=state.attempt_number, error=type(exc).__name__)
