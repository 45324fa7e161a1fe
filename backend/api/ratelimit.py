"""Per-client rate limit (flask-limiter): one budget per API key across the whole API.

The client is the principal (access control), else the API key (its SHA-256, never the
key itself), else the client address; the check runs after authentication, so a
key counted is a valid one. Over ``server.rate_limit.limit`` a request answers 429
with ``Retry-After``. Probes and scrapers (/healthz, /readyz, /metrics) and the chat page's
static files are exempt.
Counts live in ``server.rate_limit.storage_uri``: in memory, each gunicorn worker
counts alone; a shared store (redis) makes the limit global.

Beside it, the per-principal quotas (``quotas``: per minute and per day, per principal or role, or per
API key; ``core/services/quotas.py``) are counted in the store, so across workers without any shared
backend; past one a request answers 429 ``quota_exceeded`` with ``Retry-After``.
"""

from __future__ import annotations

import hashlib

from flask import Flask, Response, g, request
from flask_limiter import Limiter

from backend.api.runtime import current_runtime
from backend.common.config import Settings
from backend.common.errors import QuotaExceeded
from backend.core.services.quotas import QuotaSubject, subject_for

API_KEY_HEADER = "X-API-Key"
EXEMPT = frozenset({"health.healthz", "health.readyz", "metrics.metrics_endpoint", "static"})
EXTENSION = "rag_limiter"


def client_key() -> str:
    principal = g.get("rag_principal")
    if principal is not None:
        return f"principal:{principal.name}"
    settings: Settings = current_runtime().settings
    key = request.headers.get(API_KEY_HEADER)
    if settings.server.api_keys and key:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"addr:{request.remote_addr or 'unknown'}"


def _exempt() -> bool:
    return request.endpoint in EXEMPT


def _retry_after_only_when_limited(response: Response) -> Response:
    """flask-limiter sends ``Retry-After`` on every response; it means something only on a 429."""
    if response.status_code != 429:
        response.headers.pop("Retry-After", None)
    return response


#: what the quotas never count: probes, the scraper, the page's files, the schema, the admin link
QUOTA_EXEMPT = EXEMPT | {"openapi.openapi_document", "web.index", "admin_session.login"}


def quota_subject() -> QuotaSubject | None:
    """The request's principal, else its API key (``X-API-Key`` or a bearer key), else None."""
    principal = g.get("rag_principal")
    if principal is not None:
        return subject_for(principal.name, principal.roles)
    settings: Settings = current_runtime().settings
    if not settings.server.api_keys:
        return None
    scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
    return subject_for(None, api_key=request.headers.get(API_KEY_HEADER)
                       or (token.strip() if scheme.lower() == "bearer" else None))


def _check_quota() -> None:
    if request.endpoint in QUOTA_EXEMPT or request.endpoint is None:
        return
    try:
        current_runtime().quotas.check(quota_subject())
    except QuotaExceeded as exc:
        g.rag_retry_after = exc.context.get("retry_after")
        raise


def _retry_after_of_quota(response: Response) -> Response:
    retry_after = g.get("rag_retry_after")
    if response.status_code == 429 and retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def init_app(app: Flask, settings: Settings) -> None:
    """Register the limiter and the quotas; call after the authentication hook so they run after it."""
    if settings.quotas.enabled:
        app.before_request(_check_quota)
        app.after_request(_retry_after_of_quota)
    limits = settings.server.rate_limit
    if not limits.enabled:
        return
    # after_request hooks run last-registered first: this one must run after the limiter's
    app.after_request(_retry_after_only_when_limited)
    app.extensions[EXTENSION] = Limiter(
        client_key, app=app, application_limits=[limits.limit], application_limits_exempt_when=_exempt,
        storage_uri=limits.storage_uri, headers_enabled=True, strategy="moving-window",
    )
