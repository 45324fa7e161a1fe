"""What the public endpoints may tell whom.

/readyz and /openapi.json stay open for probes and clients, but alias, version,
model and domain names help an attacker map the deployment. They go only to a
caller with a valid credential (a configured API key, or a principal with access
control); everyone else, and everyone on a server without credentials, gets the
same answers with the names left out.
"""

from __future__ import annotations

import hmac

from flask import request

from backend.api.runtime import current_runtime
from backend.api import access

API_KEY_HEADER = "X-API-Key"


def caller_may_see_names() -> bool:
    settings = current_runtime().settings
    if settings.access.enabled:
        return access.principal_or_none() is not None
    given = (request.headers.get(API_KEY_HEADER) or "").encode()
    matched = False
    for key in settings.server.api_keys:
        matched |= hmac.compare_digest(given, key.get_secret_value().encode())
    return bool(given) and matched


def domains_of_caller() -> frozenset[str] | None:
    """The domains a known caller may use, when that is not every one (a principal without
    ``*``): /openapi.json lists only those (issue 49 L6). None: every domain."""
    if not current_runtime().settings.access.enabled:
        return None
    principal = access.principal_or_none()
    if principal is None or "*" in principal.domains:
        return None
    return frozenset(principal.domains)
