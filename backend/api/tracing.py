"""One server span per HTTP request, parent of the stages the request runs (``telemetry``).

Registered only when telemetry is on, so a server without it runs no hook at all. The span
is named ``METHOD route`` (the route template, e.g. ``POST /chat``) and carries the method,
route, status and the request id (``X-Request-ID``); never the URL, whose query string may
hold a question (``GET /search?q=...``), nor any header or body.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, request

from backend.api.hardening import request_id
from backend.common import telemetry

_SPAN = "rag_trace_span"
_TOKEN = "rag_trace_request_id"


def _start() -> None:
    rid = request_id()
    route = request.url_rule.rule if request.url_rule is not None else None
    g.setdefault(_TOKEN, telemetry.bind_request_id(rid))
    stage = telemetry.server_span(f"{request.method} {route}" if route else request.method, {
        "http.request.method": request.method, "http.route": route, "rag.request_id": rid})
    stage.__enter__()
    g.setdefault(_SPAN, stage)


def _status(response: Response) -> Response:
    stage = g.get(_SPAN)
    if stage is not None:
        telemetry.annotate({"http.response.status_code": response.status_code,
                            "error.type": str(response.status_code) if response.status_code >= 500 else None})
    return response


def _end(exc: BaseException | None) -> None:
    stage: Any = g.pop(_SPAN, None)
    if stage is not None:
        stage.__exit__(type(exc) if exc is not None else None, exc, None)
    token = g.pop(_TOKEN, None)
    if token is not None:
        telemetry.unbind_request_id(token)


def init_app(app: Flask) -> None:
    """Register the hooks (first, so the span covers every other hook) when telemetry is on."""
    if not telemetry.enabled():
        return
    app.before_request(_start)
    app.after_request(_status)
    app.teardown_request(_end)
