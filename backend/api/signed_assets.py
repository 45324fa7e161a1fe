"""Short-lived signed ``/assets`` URLs, so a figure loads in an ``<img>`` with no header.

When API keys (or access control) are on, ``/assets`` needs ``X-API-Key``, which an
``<img>`` cannot send. An answer therefore links each figure as
``/assets/<ref>?exp=<unix time>&sig=<hex>``: ``sig`` is HMAC-SHA256 over the reference
and the expiry, under ``server.asset_url_secret`` (default: a key derived from the
configured API keys and shared secrets, the same in every worker; with none of them, as
with JWT verified by a public key alone, a random key kept in
``server.asset_url_secret_file``, never a key anyone could compute). A valid, unexpired
signature stands in for the key on that one asset; it was only issued in an answer whose
reader could see the figure. Without keys the plain ``/assets/<ref>`` URL is used.

A signed link is a bearer capability for one figure until it expires (``server.asset_url_ttl_s``):
an ``<img>`` sends no credential, so whoever holds the link loads the figure. With access control
the principal it was issued to is signed into it (``&p=<name>``, issue 49 L4): a request that
does carry a credential must be that principal's (another principal's key falls back to its own
visibility check), and the serving is logged with the link's principal.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path
from urllib.parse import quote

from backend.common.config import Settings
from backend.common.errors import ConfigError

KEY_BYTES = 32


def signing_required(settings: Settings) -> bool:
    return bool(settings.server.api_keys) or settings.access.enabled


def signing_key(settings: Settings) -> bytes:
    if settings.server.asset_url_secret is not None:
        return settings.server.asset_url_secret.get_secret_value().encode()
    keys = [k.get_secret_value() for k in settings.server.api_keys]
    keys += [p.api_key.get_secret_value() for _, p in sorted(settings.access.principals.items()) if p.api_key]
    if settings.access.jwt.secret is not None:
        keys.append(settings.access.jwt.secret.get_secret_value())
    if not any(keys):  # nothing secret to derive from: a public constant would let anyone sign any link
        return file_key(settings.resolve_path(settings.server.asset_url_secret_file))
    return hashlib.sha256(("rag-asset-url\n" + "\n".join(keys)).encode()).digest()


_FILE_KEYS: dict[Path, tuple[tuple[int, int, int], bytes]] = {}


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:  # missing, or a path that cannot be reached: creating it says why
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_mode)


def file_key(path: Path) -> bytes:
    """The random key kept in ``path``: created once with mode 0600 (``O_EXCL``, so workers
    starting together agree on one), read afterwards; cached until the file changes (inode,
    time, mode), so deleting it rotates the key for every worker."""
    stamp = _stamp(path)
    cached = _FILE_KEYS.get(path)
    if cached is not None and stamp is not None and cached[0] == stamp:
        return cached[1]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if stamp is None:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass  # another worker created it first: read that one
            else:
                with os.fdopen(fd, "w") as out:
                    out.write(secrets.token_hex(KEY_BYTES))
        key = bytes.fromhex(path.read_text().strip())
        mode = path.stat().st_mode & 0o777
    except (OSError, ValueError) as exc:
        raise ConfigError(f"server.asset_url_secret_file: cannot create or read the asset-link key {path}: {exc}; "
                          "set RAG_SERVER__ASSET_URL_SECRET or a writable path", field="server.asset_url_secret_file") from exc
    if len(key) < 16:
        raise ConfigError(f"server.asset_url_secret_file: {path} holds {len(key)} bytes; delete it to make a new key",
                          field="server.asset_url_secret_file")
    if mode & 0o077:
        raise ConfigError(f"server.asset_url_secret_file: {path} is readable by others (mode {mode:o}); "
                          "chmod 600 it", field="server.asset_url_secret_file")
    _FILE_KEYS[path] = (_stamp(path) or (0, 0, 0), key)
    return key


def signature(settings: Settings, image_ref: str, expires: int, principal: str | None = None) -> str:
    message = f"{image_ref}\n{expires}" + (f"\n{principal}" if principal else "")
    return hmac.new(signing_key(settings), message.encode(), hashlib.sha256).hexdigest()


def asset_url(settings: Settings, image_ref: str, now: float | None = None, *, principal: str | None = None) -> str:
    """The URL a page uses for the figure ``image_ref`` (signed when keys are on). With access
    control the principal it was issued to is part of the signature and the link (``p``): the
    link names who leaked it, and a request with another principal's credential is refused."""
    path = "/assets/" + quote(image_ref, safe="/")
    if not signing_required(settings):
        return path
    expires = int((now if now is not None else time.time()) + settings.server.asset_url_ttl_s)
    url = f"{path}?exp={expires}&sig={signature(settings, image_ref, expires, principal)}"
    return url + (f"&p={quote(principal, safe='')}" if principal else "")


def verify(settings: Settings, image_ref: str, expires: str | None, sig: str | None, now: float | None = None,
           principal: str | None = None) -> bool:
    """Whether ``exp``/``sig`` sign ``image_ref`` for ``principal`` (the link's ``p``) and have not
    expired (constant-time compare)."""
    if not expires or not sig or not expires.isdigit() or len(expires) > 12:
        return False
    if int(expires) < (now if now is not None else time.time()):
        return False
    return hmac.compare_digest(sig.encode(), signature(settings, image_ref, int(expires), principal).encode())
