"""One OCI call: driver errors mapped to ours, transient ones retried with tenacity.

Retry ownership: the SDK client is built with ``oci.retry.NoneRetryStrategy()``
(and no circuit breaker), so this module is the only layer that retries. It
retries 429 (``ProviderRateLimited``) and 5xx / read timeouts
(``ProviderTimeout``) with exponential backoff and jitter
(``embeddings.retry``); 4xx other than 429 and an unreachable endpoint fail at
once, so a wrong configuration never waits through a backoff schedule.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import structlog
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from backend.common.config import RetrySettings
from backend.common.errors import ProviderError, ProviderRateLimited, ProviderTimeout, ProviderUnavailable

log = structlog.get_logger(__name__)
T = TypeVar("T")


def is_read_timeout(exc: BaseException) -> bool:
    """True when an SDK ``RequestException`` wraps a read timeout.

    The SDK vendors its own copy of requests (``oci._vendor.requests``) and wraps
    its failures in ``oci.exceptions.RequestException``; the vendored
    ``ReadTimeout`` is not the PyPI ``requests.exceptions.ReadTimeout``, so the
    cause is checked against the vendored classes. A stall while the body is read
    comes as the vendored ``ConnectionError`` around urllib3's ``ReadTimeoutError``.
    """
    import urllib3
    from oci._vendor.requests import exceptions as vendored

    cause = exc.args[0] if exc.args else None
    if isinstance(cause, vendored.ReadTimeout):
        return True
    inner = cause.args[0] if isinstance(cause, vendored.ConnectionError) and cause.args else None
    return isinstance(inner, urllib3.exceptions.ReadTimeoutError)


def map_oci_error(exc: BaseException, what: str, endpoint: str) -> ProviderError:
    """The most specific ``ProviderError`` for an SDK exception; ``what`` names the call and batch."""
    import oci

    if isinstance(exc, oci.exceptions.ServiceError):
        detail = f"HTTP {exc.status} {exc.code}: {exc.message}"
        if exc.status == 429:
            return ProviderRateLimited(f"{what}: throttled by {endpoint} ({detail})", status=exc.status)
        if exc.status >= 500:
            return ProviderTimeout(f"{what}: {endpoint} failed ({detail})", status=exc.status)
        return ProviderError(f"{what}: rejected by {endpoint} ({detail})", status=exc.status)
    cause = exc.args[0] if exc.args else None
    if isinstance(exc, oci.exceptions.RequestException) and is_read_timeout(exc):
        return ProviderTimeout(f"{what}: {endpoint} did not answer in time")
    if isinstance(exc, (oci.exceptions.ConnectTimeout, oci.exceptions.RequestException)):
        return ProviderUnavailable(f"{what}: cannot reach OCI Generative AI at {endpoint} "
                                   f"({type(cause or exc).__name__})", endpoint=endpoint)
    return ProviderError(f"{what}: malformed response from {endpoint} ({type(exc).__name__}: {exc})")


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    log.warning("oci.retry", attempt=state.attempt_number, error=type(exc).__name__,
                wait_s=round(state.next_action.sleep, 3) if state.next_action else None)


def call_with_retry(fn: Callable[[], T], retry: RetrySettings, what: str, endpoint: str) -> T:
    """Run ``fn`` (one SDK call), mapping errors and retrying the transient ones."""
    import oci

    def attempt() -> T:
        try:
            return fn()
        except (oci.exceptions.ServiceError, oci.exceptions.RequestException, oci.exceptions.ConnectTimeout,
                ValueError, TypeError) as exc:
            raise map_oci_error(exc, what, endpoint) from exc

    retrying = Retrying(
        retry=retry_if_exception_type((ProviderRateLimited, ProviderTimeout)),
        stop=stop_after_attempt(retry.max_attempts),
        wait=wait_exponential_jitter(initial=retry.initial_wait_s, max=retry.max_wait_s, jitter=retry.initial_wait_s),
        before_sleep=_log_retry,
        reraise=True,
    )
    return retrying(attempt)


def chat_text(response: Any, chat_format: str, what: str, endpoint: str) -> str:
    """The answer text of a ``GenerativeAiInferenceClient.chat`` response in either chat format
    (Cohere's ``text``, the generic format's message content parts)."""
    chat = getattr(getattr(response, "data", None), "chat_response", None)
    if chat_format == "cohere":
        text = getattr(chat, "text", None)
    else:
        choices = getattr(chat, "choices", None) or []
        content = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
        text = "".join(getattr(part, "text", "") or "" for part in content) if content else None
    if not isinstance(text, str):
        raise ProviderError(f"{what}: malformed response from {endpoint}: no answer text")
    return text


#: How a dedicated AI cluster endpoint's OCID starts; a model field holding one names that endpoint.
ENDPOINT_OCID_PREFIX = "ocid1.generativeaiendpoint"


def chat_details(model: str, compartment_id: str | None, chat_request: Any) -> Any:
    """``ChatDetails`` for ``model``: a dedicated endpoint when it is an endpoint OCID, else on demand."""
    from oci.generative_ai_inference import models

    if model.startswith(ENDPOINT_OCID_PREFIX):
        serving: Any = models.DedicatedServingMode(endpoint_id=model)
    else:
        serving = models.OnDemandServingMode(model_id=model)
    return models.ChatDetails(compartment_id=compartment_id, serving_mode=serving, chat_request=chat_request)
