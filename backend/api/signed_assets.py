"""Short-lived signed ``/assets`` URLs, so a figure loads in an ``<img>`` with no header.

When API keys (or access control) are on, ``/assets`` needs ``X-API-Key``, which an
``<img>`` cannot send. An answer therefore links each figure as
``/assets/<ref>?exp=<unix time>&sig=<hex>``: ``sig`` is HMAC-SHA256 over the reference
and the expiry, under ``server.asset_url_secret`` (default: a key derived from the
configured API keys, the same in every worker). A valid, unexpired signature stands in
for the key on that one asset; it was only issued in an answer whose reader could see
the figure. Without keys the plain ``/assets/<ref>`` URL is used.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from urllib.parse import quote

from backend.common.config import Settings


def signing_required(settings: Settings) -> bool:
    return bool(settings.server.api_keys) or settings.access.enabled


def _secret(settings: Settings) -> bytes:
    if settings.server.asset_url_secret is not None:
        return settings.server.asset_url_secret.get_secret_value().encode()
    keys = [k.get_secret_value() for k in settings.server.api_keys]
    keys += [p.api_key.get_secret_value() for _, p in sorted(settings.access.principals.items()) if p.api_key]
    if settings.access.jwt.secret is not None:
        keys.append(settings.access.jwt.secret.get_secret_value())
    return hashlib.sha256(("rag-asset-url\n" + "\n".join(keys)).encode()).digest()


def signature(settings: Settings, image_ref: str, expires: int) -> str:
    return hmac.new(_secret(settings), f"{image_ref}\n{expires}".encode(), hashlib.sha256).hexdigest()


def asset_url(settings: Settings, image_ref: str, now: float | None = None) -> str:
    """The URL a page uses for the figure ``image_ref`` (signed when keys are on)."""
    path = "/assets/" + quote(image_ref, safe="/")
    if not signing_required(settings):
        return path
    expires = int((now if now is not None else time.time()) + settings.server.asset_url_ttl_s)
    return f"{path}?exp={expires}&sig={signature(settings, image_ref, expires)}"


def verify(settings: Settings, image_ref: str, expires: str | None, sig: str | None, now: float | None = None) -> bool:
    """Whether ``exp``/``sig`` sign ``image_ref`` and have not expired (constant-time compare)."""
    if not expires or not sig or not expires.isdigit() or len(expires) > 12:
        return False
    if int(expires) < (now if now is not None else time.time()):
        return False
    return hmac.compare_digest(sig.encode(), signature(settings, image_ref, int(expires)).encode())
