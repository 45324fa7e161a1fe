"""Who a request runs as, and what it may use and see (docs/ACCESS_CONTROL.md).

With ``access.enabled`` every request outside the public endpoints must name a
principal: ``X-API-Key`` (a key configured for one principal) or, with
``access.jwt.enabled``, ``Authorization: Bearer <JWT>``. Unknown or missing
credentials answer 401; a domain the principal may not use answers 403; every
denial is counted in ``rag_access_denials_total{reason}``. The credential itself
is never logged or stored: only the principal's name reaches the logs and the
interactions table.
"""

from __future__ import annotations

from flask import g, request

from backend.api.runtime import current_runtime
from backend.api import metrics
from backend.common.config import AccessSettings
from backend.common.errors import Forbidden, Unauthorized
from backend.core.access import Principal, principal_from_credentials
from backend.core.types import Visibility

API_KEY_HEADER = "X-API-Key"


def _settings() -> AccessSettings:
    return current_runtime().settings.access


def authenticate() -> None:
    """Set ``g.rag_principal`` from the request's credential; ``Unauthorized`` (401) otherwise."""
    access = _settings()
    try:
        g.rag_principal = _principal(access)
    except Unauthorized:
        metrics.count_denial("unauthenticated")
        raise


#: the blueprint whose clients send their API key as ``Authorization: Bearer`` (OpenAI clients)
BEARER_KEY_BLUEPRINTS = frozenset({"openai_v1"})


def _principal(access: AccessSettings) -> Principal:
    return principal_from_credentials(access, request.headers.get(API_KEY_HEADER),
                                      request.headers.get("Authorization"),
                                      bearer_keys=request.blueprint in BEARER_KEY_BLUEPRINTS)


def current_principal() -> Principal | None:
    """The request's principal, or None when access control is off."""
    return g.get("rag_principal") if _settings().enabled else None


def visibility_for(domain: str | None) -> Visibility | None:
    """What the request may see in ``domain`` (None: the default alias); 403 if it may not
    use the domain. None when access control is off (no enforcement)."""
    principal = current_principal()
    if principal is None:
        if _settings().enabled:  # an endpoint that skipped authentication must never see everything
            raise Unauthorized("no principal for this request", field=API_KEY_HEADER)
        return None
    try:
        principal.check_domain(domain)
    except Forbidden:
        metrics.count_denial("domain")
        raise
    return principal.visibility


def principal_or_none() -> Principal | None:
    """The principal a valid credential names, else None, counting no denial: for public
    endpoints (/readyz, /openapi.json) that tell a known caller more."""
    try:
        return _principal(_settings())
    except Unauthorized:
        return None
