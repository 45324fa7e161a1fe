"""Who the local admin is, and which requests a browser may not make for anyone (issue 49 H1, H2).

Without access control (the single-user default) the peer address alone is never trusted: any
web page the person opens can make their browser POST to 127.0.0.1 (cross-site request
forgery), and a reverse proxy on the same host connects from 127.0.0.1 for every client. So a
caller is the local admin only when all of these hold:

* it connects from 127.0.0.1 or ::1 and no proxy relayed it: none of :data:`RELAY_HEADERS` is
  present, even empty (nginx's plain ``proxy_pass`` adds none, so this alone is not enough);
* it presents the admin token: the ``rag_admin`` cookie, set by the link ``rag serve`` prints
  (``/admin/login?token=...``, as notebook servers do; ``HttpOnly``, ``SameSite=Strict``, so
  no script reads it and no other site's request carries it), or the ``X-RAG-Admin-Token``
  header (scripts). The token is random, kept in ``admin.token_file`` (0600, read by every
  worker), and replaced at each ``rag serve`` start, so a link of an earlier run stops working.

Whatever the credential, :func:`cross_site_problem` refuses (403) a state-changing request that
a browser marks as coming from another site: ``Sec-Fetch-Site`` other than ``same-origin``, or
an ``Origin`` naming another host. A write authenticated by the admin cookie must moreover carry
this server's ``Origin`` (every current browser sends one on a POST), because ``SameSite``
counts another port of the same host (another local web app) as the same site.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path
from typing import Mapping, Union
from urllib.parse import quote, urlsplit

import structlog
from flask import Blueprint, Flask, current_app, redirect, request
from werkzeug.datastructures import Headers
from werkzeug.wrappers import Response

from backend.common.config import Settings
from backend.common.errors import AdminLinkInvalid, ConfigError, CrossSiteRequest

log = structlog.get_logger(__name__)
bp = Blueprint("admin_session", __name__, url_prefix="/admin")
COOKIE = "rag_admin"
TOKEN_HEADER = "X-RAG-Admin-Token"
LOOPBACK = frozenset({"127.0.0.1", "::1"})
#: headers a relaying proxy adds; any of them, even empty, means the peer is not the person
RELAY_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP", "Via", "X-Forwarded-Host", "X-Forwarded-Proto",
                 "X-Forwarded-Port", "X-Forwarded-Server", "X-Forwarded-Prefix", "X-Original-Forwarded-For",
                 "True-Client-IP", "CF-Connecting-IP", "X-Client-IP", "X-Cluster-Client-IP", "Client-IP")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
EXTENSION = "rag_admin_token"
TOKEN_BYTES = 32
HeaderMap = Union[Headers, Mapping[str, str]]


# --- pure decisions -------------------------------------------------------------------
def relay_header(headers: HeaderMap) -> str | None:
    """The first relaying header present in ``headers`` (an empty value counts), or None."""
    present = {name.lower() for name in headers.keys()}
    return next((h for h in RELAY_HEADERS if h.lower() in present), None)


def cross_site_problem(method: str, headers: HeaderMap, *, cookie_auth: bool) -> str | None:
    """Why a request must be refused as cross-site, or None (pure). Safe methods always pass;
    ``cookie_auth``: the request is authenticated by the admin cookie, so it needs an ``Origin``."""
    if method.upper() in SAFE_METHODS:
        return None
    fetch_site = headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site.lower() != "same-origin":
        return f"the browser sent it from another site (Sec-Fetch-Site: {fetch_site[:40]})"
    origin = headers.get("Origin")
    host = (headers.get("Host") or "").lower()
    if origin is None:
        return ("a change authenticated by the admin cookie must come from this server's page (no Origin header)"
                if cookie_auth else None)
    if urlsplit(origin).netloc.lower() != host or origin.lower() == "null":
        return f"the browser sent it from another origin (Origin: {origin[:100]}, this server: {host[:100]})"
    return None


def admin_link(base_url: str, token: str) -> str:
    """The link that signs this browser in as the local admin."""
    return f"{base_url.rstrip('/')}/admin/login?token={quote(token)}"


def local_admin_possible(settings: Settings) -> bool:
    """Whether this configuration has a local admin at all (access control off, console on)."""
    return settings.admin.enabled and settings.admin.local_admin_without_access and not settings.access.enabled


# --- the token file -------------------------------------------------------------------
def token_path(settings: Settings) -> Path:
    configured = settings.admin.token_file
    if configured:
        return settings.resolve_path(configured)
    return settings.resolve_path(settings.knowledge_bases.dir) / "admin-token"


def _problem(path: Path, exc: Exception) -> ConfigError:
    return ConfigError(f"admin.token_file: cannot create or read the admin token {path}: {exc}; set admin.token_file "
                       "to a writable path", field="admin.token_file")


def read_token(settings: Settings) -> str:
    """The admin token in ``admin.token_file``, made (0600, ``O_EXCL``: workers starting together
    agree on one) when there is none; ``ConfigError`` when it cannot be made, is readable by
    others, or is too short."""
    path = token_path(settings)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(TOKEN_BYTES))
        token = path.read_text(encoding="ascii").strip()
        mode = path.stat().st_mode & 0o777
    except (OSError, ValueError) as exc:
        raise _problem(path, exc) from exc
    if mode & 0o077:
        raise ConfigError(f"admin.token_file: {path} is readable by others (mode {mode:o}); chmod 600 it",
                          field="admin.token_file")
    if len(token) < 32:
        raise ConfigError(f"admin.token_file: {path} holds a token of {len(token)} characters; delete it to make "
                          "a new one", field="admin.token_file")
    return token


def new_token(settings: Settings) -> str:
    """Replace the admin token (``rag serve`` at each start): earlier links and cookies stop working."""
    path = token_path(settings)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(TOKEN_BYTES))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _problem(path, exc) from exc
    return read_token(settings)


# --- per request ----------------------------------------------------------------------
def _token() -> str | None:
    return current_app.extensions.get(EXTENSION)  # type: ignore[no-any-return]


def _matches(given: str | None) -> bool:
    token = _token()
    return bool(token and given and hmac.compare_digest(given.encode(), token.encode()))


def is_local_peer() -> bool:
    """The peer is this machine and no proxy relayed the request."""
    return request.remote_addr in LOOPBACK and relay_header(request.headers) is None


def is_local_admin() -> bool:
    """The request is the local admin's: a local peer presenting the admin token (cookie or header)."""
    if _token() is None or not is_local_peer():
        return False
    return _matches(request.headers.get(TOKEN_HEADER)) or _matches(request.cookies.get(COOKIE))


def check_cross_site() -> None:
    """Before every request: ``CrossSiteRequest`` (403) for a state-changing one from another site."""
    cookie_auth = _matches(request.cookies.get(COOKIE)) and not _matches(request.headers.get(TOKEN_HEADER))
    problem = cross_site_problem(request.method, request.headers, cookie_auth=cookie_auth)
    if problem is not None:
        raise CrossSiteRequest(f"refused {request.method} {request.path}: {problem}", field="Origin")


@bp.get("/login")
def login() -> Response:
    """The link ``rag serve`` prints: the token becomes the ``rag_admin`` cookie, then the page."""
    if _token() is None:
        raise AdminLinkInvalid("this server has no local admin link (access control is on, "
                               "admin.local_admin_without_access is off, or admin.token_file could not be made or "
                               "read: the server log says why)", field="token")
    if not is_local_peer():
        raise AdminLinkInvalid("the admin link works only in a browser on the server's own machine, not through a "
                               "proxy", field="token")
    if not _matches(request.args.get("token")):
        raise AdminLinkInvalid("this admin link is not valid: `rag serve` prints a new one at each start",
                               field="token")
    response = redirect("/", code=303)
    response.set_cookie(COOKIE, _token() or "", httponly=True, samesite="Strict", path="/",
                        secure=request.scheme == "https")
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    return response


def token_or_none(settings: Settings) -> str | None:
    """The admin token when this configuration has a local admin and the token file can be made
    or read; else None, logged: the server still serves (a read-only data folder), with nobody as
    the local admin (never a fallback to trusting the address)."""
    if not local_admin_possible(settings):
        return None
    try:
        return read_token(settings)
    except ConfigError as exc:
        log.warning("admin.no_local_admin", reason=exc.user_message)
        return None


def init_app(app: Flask, settings: Settings) -> None:
    """Read (or make) the token when this configuration has a local admin; check every request
    for cross-site writes."""
    app.extensions[EXTENSION] = token_or_none(settings)
    app.before_request(check_cross_site)
