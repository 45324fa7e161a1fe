"""``Reranker`` over a ``/rerank`` HTTP endpoint (Cohere-compatible servers, text-embeddings-inference).

One POST to ``{base_url}/rerank`` per search, with httpx. ``api: cohere`` sends
``{model, query, documents, top_n}`` and reads ``{results: [{index, relevance_score}]}``;
``api: tei`` sends ``{query, texts}`` and reads ``[{index, score}]``. Throttling (429),
server errors (5xx) and timeouts are retried by tenacity with jittered exponential
backoff (``retrieval.rerank.retry``); anything else fails at once as ``ProviderError``.
"""

from __future__ import annotations

from typing import Any, Sequence

import httpx

from backend.common.config import RerankSettings
from backend.common.errors import ConfigError, ProviderError
from backend.providers.http_json import json_client, post_json, transient_retrying


def request_body(query: str, texts: Sequence[str], settings: RerankSettings) -> dict[str, Any]:
    if settings.api == "tei":
        return {"query": query, "texts": list(texts), "truncate": True}
    body: dict[str, Any] = {"query": query, "documents": list(texts), "top_n": len(texts)}
    if settings.model:
        body["model"] = settings.model
    return body


def parse_scores(payload: Any, expected: int, url: str) -> list[float]:
    """One score per input text, in input order, from either response shape."""
    items = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise ProviderError(f"rerank endpoint {url}: malformed response, expected a list of results")
    scores: list[float | None] = [None] * expected
    for item in items:
        try:
            index = int(item["index"])
            score = float(item["relevance_score"] if "relevance_score" in item else item["score"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"rerank endpoint {url}: malformed result {str(item)[:120]}") from exc
        if not 0 <= index < expected:
            raise ProviderError(f"rerank endpoint {url}: result index {index} outside 0..{expected - 1}")
        scores[index] = score
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:
        raise ProviderError(f"rerank endpoint {url}: no score for {len(missing)} of {expected} texts "
                            f"(first index {missing[0]})")
    return [float(s) for s in scores if s is not None]


class HttpReranker:
    """``transport`` lets tests plug httpx's own; the tests use a real local server."""

    def __init__(self, settings: RerankSettings, transport: httpx.BaseTransport | None = None) -> None:
        if not settings.base_url:
            raise ConfigError("retrieval.rerank.base_url is required with provider 'http'", field="base_url")
        self._settings = settings
        self._url = settings.base_url.rstrip("/") + "/rerank"
        self.name = settings.model or self._url
        self._client = json_client(settings.api_key, settings.timeout_s, transport)

    def close(self) -> None:
        self._client.close()

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        retrying = transient_retrying(self._settings.retry, "rerank.retry")
        return retrying(self._post, request_body(query, texts, self._settings), len(texts))

    def _post(self, body: dict[str, Any], expected: int) -> list[float]:
        response = post_json(self._client, self._url, body, "rerank endpoint", self._settings.timeout_s)
        try:
            payload = response.json()
        except ValueError as exc:
            raise ProviderError(f"rerank endpoint {self._url}: response is not JSON") from exc
        return parse_scores(payload, expected, self._url)
