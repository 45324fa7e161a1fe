"""What every JSON-over-HTTP provider adapter shares (the OpenAI-compatible chat and enricher, the
``/rerank`` endpoint): one client with the bearer key, one mapping of transport failures and HTTP
statuses onto the retryable provider errors, and one retry policy over them."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import httpx
import structlog
from pydantic import SecretStr
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from backend.common.config import RetrySettings
from backend.common.errors import ProviderError, ProviderRateLimited, ProviderTimeout, ProviderUnavailable

log = structlog.get_logger(__name__)


def json_client(api_key: SecretStr | None, timeout_s: float, transport: httpx.BaseTransport | None) -> httpx.Client:
    """``transport`` lets tests plug httpx's own; the key is sent as a bearer token."""
    headers = {"Content-Type": "application/json"}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key.get_secret_value()}"
    return httpx.Client(timeout=timeout_s, headers=headers, transport=transport)


def check_status(response: httpx.Response, what: str, url: str) -> None:
    """Our error for an HTTP error status (429 and 5xx are the retryable ones); nothing for a success."""
    status = response.status_code
    if status == 429:
        raise ProviderRateLimited(f"{what} {url} throttled the request (HTTP 429)", status=status)
    if status >= 500:
        raise ProviderTimeout(f"{what} {url} failed with HTTP {status}", status=status)
    if status >= 400:
        raise ProviderError(f"{what} {url} rejected the request with HTTP {status}: {response.text[:200]}",
                            status=status)


@contextmanager
def transport_errors(what: str, url: str, timeout_s: float) -> Iterator[None]:
    """httpx's timeout and connection failures as our retryable errors, naming the endpoint."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise ProviderTimeout(f"{what} {url} did not answer within {timeout_s}s") from exc
    except httpx.TransportError as exc:
        raise ProviderUnavailable(f"{what} {url} cannot be reached: {exc}") from exc


def post_json(client: httpx.Client, url: str, body: dict[str, Any], what: str, timeout_s: float) -> httpx.Response:
    """One POST of ``body``; a failure to answer or an HTTP error status raises as above."""
    with transport_errors(what, url, timeout_s):
        response = client.post(url, json=body)
    check_status(response, what, url)
    return response


def transient_retrying(retry: RetrySettings, event: str) -> Retrying:
    """Retry rate limits and timeouts with exponential backoff, logging ``event`` before each wait."""

    def log_retry(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(event, attempt=state.attempt_number, error=type(exc).__name__,
                    wait_s=round(state.next_action.sleep, 3) if state.next_action else None)

    return Retrying(
        retry=retry_if_exception_type((ProviderRateLimited, ProviderTimeout)),
        stop=stop_after_attempt(retry.max_attempts),
        wait=wait_exponential_jitter(initial=retry.initial_wait_s, max=retry.max_wait_s),
        before_sleep=log_retry,
        reraise=True,
    )
