"""One place that turns every failure into a JSON error body.

``RagError`` carries its own status and safe message. Request validation errors
become 400 (body is not JSON) or 422 (JSON of the wrong shape); werkzeug's HTTP
errors (404, 405, 413 from ``MAX_CONTENT_LENGTH``, 415) keep their status.
Anything else is a 500. Every status >= 500 answers a generic message with the
request id (also the ``X-Request-ID`` header): upstream error bodies, file paths
and tracebacks go to the log only, under that id.
"""

from __future__ import annotations

from typing import Any, Callable

import structlog
from flask import Flask, Response, current_app, has_request_context, jsonify, request
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException, MethodNotAllowed, RequestEntityTooLarge, TooManyRequests

from backend.api.hardening import request_id

from backend.common.errors import RagError

log = structlog.get_logger(__name__)


_GENERIC = {
    500: "internal server error", 502: "the answer provider failed", 503: "a backend is unavailable; try again later",
    504: "the answer provider timed out",
    507: "the server's disk is full, so nothing was saved; free space on the server and try again",
}


def error_response(status: int, code: str, message: str, details: Any | None = None) -> tuple[Response, int]:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return jsonify({"error": body}), status


def server_error(status: int, code: str) -> tuple[Response, int]:
    """The only body a status >= 500 gets: the code, a fixed message and the request id."""
    rid = request_id()
    message = f"{_GENERIC.get(status, 'server error')}; the details are in the server log under request id {rid}"
    return jsonify({"error": {"code": code, "message": message, "request_id": rid}}), status


def _rag_error(exc: RagError) -> tuple[Response, int]:
    if exc.http_status >= 500:
        log.error("api.rag_error", code=exc.code, status=exc.http_status, error=exc.user_message, **_loggable(exc.context))
        return server_error(exc.http_status, exc.code)
    log.info("api.request_rejected", code=exc.code, status=exc.http_status)
    return jsonify({"error": exc.to_dict()}), exc.http_status


def _validation_error(exc: ValidationError) -> tuple[Response, int]:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    if any(e["type"] == "json_invalid" for e in errors):
        return error_response(400, "invalid_json", f"request body is not valid JSON: {errors[0]['msg']}")
    details = [{"field": ".".join(str(p) for p in e["loc"]) or "(body)", "message": e["msg"], "type": e["type"]} for e in errors]
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5])
    return error_response(422, "validation_error", f"invalid request body: {summary}", details)


def _http_error(exc: HTTPException) -> tuple[Response, int]:
    status = exc.code or 500
    if isinstance(exc, RequestEntityTooLarge):
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        return error_response(413, "request_too_large",
                              f"request body exceeds server.max_body_bytes ({limit} bytes)", {"limit": limit})
    code = (exc.name or "http_error").lower().replace(" ", "_")
    if status >= 500:
        log.error("api.http_error", status=status, error=exc.description)
        return server_error(status, code)
    if isinstance(exc, TooManyRequests):
        return error_response(429, "rate_limited", f"rate limit exceeded ({exc.description} per client, "
                              "server.rate_limit.limit); retry after the seconds in Retry-After")
    response = error_response(status, code, exc.description or exc.name or "HTTP error")
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        response[0].headers["Allow"] = ", ".join(sorted(exc.valid_methods))
    return response


def _unexpected(exc: Exception) -> tuple[Response, int]:
    log.exception("api.unhandled_error", error_type=type(exc).__name__)
    return server_error(500, "internal_error")


def _loggable(context: dict[str, Any]) -> dict[str, Any]:
    reserved = {"question", "code", "status", "error"}
    return {k: v for k, v in context.items() if isinstance(v, (str, int, float, bool)) and k not in reserved}


#: ``app.extensions`` key: path prefix -> a function that re-shapes the JSON error of a route area
#: whose clients expect another shape (``/v1``: OpenAI's); the status, message and headers stay
SHAPERS = "rag_error_shapes"
Shaper = Callable[[Response, int, Exception], Response]


def _shaped(handler: Callable[[Any], tuple[Response, int]]) -> Callable[[Any], tuple[Response, int]]:
    def handle(exc: Any) -> tuple[Response, int]:
        response, status = handler(exc)
        for prefix, shaper in current_app.extensions.get(SHAPERS, {}).items():
            if has_request_context() and request.path.startswith(prefix):
                return shaper(response, status, exc), status
        return response, status

    return handle


def register(app: Flask) -> None:
    app.register_error_handler(RagError, _shaped(_rag_error))
    app.register_error_handler(ValidationError, _shaped(_validation_error))
    app.register_error_handler(HTTPException, _shaped(_http_error))
    app.register_error_handler(Exception, _shaped(_unexpected))


def add_shaper(app: Flask, prefix: str, shaper: Shaper) -> None:
    """Errors of requests under ``prefix`` answer in ``shaper``'s shape (see :data:`SHAPERS`)."""
    app.extensions.setdefault(SHAPERS, {})[prefix] = shaper
