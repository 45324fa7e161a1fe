"""``Enricher`` over an OpenAI-compatible ``/chat/completions`` endpoint (vLLM, Ollama,
llama.cpp server, hosted APIs).

One request per chunk with ``response_format: {"type": "json_schema", ...}`` (the schema of
``backend.core.enrichment.reply_schema``: the allowed content types and enum values), the
answer validated by pydantic; one request per page / document summary. The client, the
status mapping and the retry policy are the chat adapter's (``backend.providers.http_json``);
requests are paced by a token bucket (``enrichment.rate_limit_per_min``).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import httpx

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.common.errors import ConfigError, ProviderError
from backend.providers.http_json import json_client, post_json, transient_retrying
from backend.providers.json_chat_enricher import JsonChatEnricher


class OpenAICompatEnricher(JsonChatEnricher):
    def __init__(self, settings: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
                 content_types: Sequence[str], *, limiter: Any = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not settings.base_url or not settings.model:
            raise ConfigError("enrichment: provider openai_compat needs base_url and model", field="enrichment")
        super().__init__(settings, schema, content_types)
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._client = json_client(settings.api_key, settings.timeout_s, transport)
        self._limiter = limiter
        self.model_id = f"openai_compat/{settings.model}"

    def close(self) -> None:
        self._client.close()

    @property
    def _where(self) -> str:
        return f"enrichment endpoint {self._url}"

    def _ask(self, messages: list[dict[str, str]], name: str, schema: Mapping[str, Any]) -> str:
        body = {
            "model": self._settings.model, "messages": messages, "temperature": self._settings.temperature,
            "max_tokens": self._settings.max_tokens, "stream": False,
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema),
                                                                       "strict": True}},
        }
        retrying = transient_retrying(self._settings.retry, "enrich.openai_compat.retry")
        return retrying(self._post, body)

    def _post(self, body: dict[str, Any]) -> str:
        if self._limiter is not None:
            self._limiter.acquire()
        self.calls += 1
        response = post_json(self._client, self._url, body, "enrichment endpoint", self._settings.timeout_s)
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"enrichment endpoint {self._url} answered without choices[0].message.content") from exc
        if not isinstance(content, str):
            raise ProviderError(f"enrichment endpoint {self._url} answered a non-text message content")
        return content
