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

from flask import current_app, g, request

from backend.api import metrics
from backend.common.config import AccessSettings
from backend.common.errors import Forbidden, Unauthorized
from backend.core.access import Principal, principal_for_key, principal_for_token
from backend.core.types import Visibility

API_KEY_HEADER = "X-API-Key"


def _settings() -> AccessSettings:
    return current_app.extensions["rag"].settings.access  # type: ignore[no-any-return]


def authenticate() -> None:
    """Set ``g.rag_principal`` from the request's credential; ``Unauthorized`` (401) otherwise."""
    access = _settings()
    try:
        g.rag_principal = _principal(access)
    except Unauthorized:
        metrics.count_denial("unauthenticated")
        raise


def _principal(access: AccessSettings) -> Principal:
    key = request.headers.get(API_KEY_HEADER)
    bearer = request.headers.get("Authorization") or ""
    if key:
        principal = principal_for_key(access, key)
        if principal is None:
            raise Unauthorized(f"{API_KEY_HEADER} header is wrong; it names no principal", field=API_KEY_HEADER)
        return principal
    if bearer:
        scheme, _, token = bearer.partition(" ")
        if not access.jwt.enabled or scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("Authorization must be 'Bearer <token>' and access.jwt.enabled must be true",
                               field="Authorization")
        return principal_for_token(access, token.strip())
    accepted = f"{API_KEY_HEADER} or Authorization: Bearer" if access.jwt.enabled else API_KEY_HEADER
    raise Unauthorized(f"no credential; this server requires {accepted}", field=API_KEY_HEADER)


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
