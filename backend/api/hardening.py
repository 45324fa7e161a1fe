"""App-wide request hygiene: request ids, trusted hosts, bounded bodies, safe headers.

Registered by the app factory, so every route (present and future) gets them:

* ``X-Request-ID`` on every response: the client's value when it is well formed
  (:data:`REQUEST_ID`), else a new one. It is bound into every log event of the
  request, and a 5xx body quotes it (errors.py) so an operator finds the detail.
* Trusted hosts: a Host header outside the list answers 400, which stops a
  browser page from reaching a loopback server through DNS rebinding.
* A body sent without ``Content-Length`` (chunked) is read up to
  ``server.max_body_bytes`` and answers 413 beyond it; werkzeug alone would cut it
  at the limit and the route would see truncated JSON (a misleading 400).
* JSON responses carry ``Cache-Control: no-store``; every response ``nosniff``.
"""

from __future__ import annotations

import ipaddress
import re
import uuid

import structlog
from flask import Flask, Response, current_app, g, request
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge

from backend.common.config import ServerSettings

REQUEST_ID_HEADER = "X-Request-ID"
#: what a client-sent request id must look like to be kept (else a new one is made)
REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{8,128}")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
EXTENSION = "rag_trusted_hosts"
_HOST = re.compile(r"(?P<name>[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def trusted_hosts(server: ServerSettings) -> list[str] | None:
    """The Host values to accept: the configured ones; else the loopback names when the
    server binds a loopback address; else None (any host)."""
    if server.trusted_hosts:
        return list(server.trusted_hosts)
    return list(LOOPBACK_HOSTS) if is_loopback(server.host) else None


def host_is_trusted(header: str, trusted: list[str]) -> bool:
    """Whether a Host header (``name[:port]``) names one of ``trusted``; a leading dot
    matches the domain and its subdomains, as in werkzeug, whose own check cannot match a
    bracketed IPv6 entry."""
    match = _HOST.fullmatch(header.lower())
    if match is None:
        return False
    name = match["name"].strip("[]")
    for ref in (t.lower().strip("[]") for t in trusted):
        if name == ref.lstrip(".") or (ref.startswith(".") and name.endswith(ref)):
            return True
    return False


def _check_host() -> None:
    trusted = current_app.extensions[EXTENSION]
    header = request.headers.get("Host", "")
    if trusted is not None and not host_is_trusted(header, trusted):
        raise BadRequest(f"Host header {header[:100]!r} is not trusted; server.trusted_hosts lists the accepted names")


def request_id() -> str:
    """This request's id, made on first use."""
    rid = g.get("rag_request_id")
    if rid is None:
        given = request.headers.get(REQUEST_ID_HEADER, "")
        rid = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        g.rag_request_id = rid
    return str(rid)


def _bind_request_id() -> None:
    structlog.contextvars.bind_contextvars(request_id=request_id())


def _bounded_body() -> None:
    """413 for a body without Content-Length that runs past the limit (see module doc)."""
    if request.content_length is not None or request.method in ("GET", "HEAD", "OPTIONS"):
        return
    limit = request.max_content_length
    if limit is None:
        return
    request.get_data(cache=True)  # at most ``limit`` bytes: werkzeug wraps the stream
    if getattr(request.stream, "is_exhausted", False):
        if request.environ["wsgi.input"].read(1):
            raise RequestEntityTooLarge()


def _finish(response: Response) -> Response:
    response.headers[REQUEST_ID_HEADER] = request_id()
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if response.mimetype == "application/json" and "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = "no-store"
    return response


def _unbind(_: BaseException | None) -> None:
    structlog.contextvars.unbind_contextvars("request_id")


def init_app(app: Flask, server: ServerSettings) -> None:
    app.extensions[EXTENSION] = trusted_hosts(server)
    app.before_request(_bind_request_id)
    app.before_request(_check_host)
    app.before_request(_bounded_body)
    app.after_request(_finish)
    app.teardown_request(_unbind)
