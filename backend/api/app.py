"""The Flask app factory.

No app exists at import time: ``create_app(settings, runtime)`` builds one, so
every test can build its own with its own store and models. Config turns into
adapters and services in ``backend.runtime`` (``build_runtime``); the app keeps
the served runtime (a ``ServingRuntime``, which takes in knowledge bases
registered meanwhile) in ``app.extensions["rag"]``, never in module globals;
routes read it through ``current_runtime()`` (``backend.api.runtime``).
"""

from __future__ import annotations

import hmac
from typing import Any

import structlog
from flask import Flask, request

from backend.api.runtime import current_runtime, serving
from backend.api import (access, admin_session, assets, audit, errors, hardening, metrics, openapi, ratelimit, signed_assets,
                         tracing)
from backend.common.config import Settings, load_settings
from backend.common.errors import Unauthorized
from backend.runtime import Runtime, ServingRuntime, build_runtime, serving_runtime

__all__ = ["create_app"]

log = structlog.get_logger(__name__)

#: Endpoints that stay open when API keys are configured (probes, scrapers, the schema).
#: open to anyone; /metrics is not (it names versions): it needs what the API needs, or server.metrics_token
#: /admin/login is the local admin's link: a browser navigation, which carries no key (it checks its own token)
PUBLIC_ENDPOINTS = frozenset({"health.healthz", "health.readyz", "openapi.openapi_document", "static", "web.index",
                              "admin_session.login"})
METRICS_ENDPOINT = "metrics.metrics_endpoint"
API_KEY_HEADER = "X-API-Key"


def _refresh_services() -> None:
    """Before each request: a knowledge base registered since the last one is served now."""
    serving().refresh()


def _require_api_key() -> None:
    """401 unless X-API-Key matches a configured key (constant-time, every key compared).
    With ``access.enabled`` the key (or bearer token) must name a principal instead."""
    settings = current_runtime().settings
    if request.endpoint in PUBLIC_ENDPOINTS or assets.signed_request(settings):
        return
    if request.endpoint == METRICS_ENDPOINT and _scrape_token_matches(settings):
        return
    if settings.access.enabled:
        access.authenticate()
        return
    keys = settings.server.api_keys
    if not keys:
        return
    header = request.headers.get(API_KEY_HEADER)
    bearer = "" if header else _bearer_key()
    given = (header or bearer or "").encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(given, key.get_secret_value().encode())
    if not matched:
        if bearer:  # an OpenAI client's key, on /v1
            raise Unauthorized("Authorization: Bearer key is wrong; this server requires an API key",
                               field="Authorization")
        reason = "missing" if not given else "wrong"
        raise Unauthorized(f"{API_KEY_HEADER} header is {reason}; this server requires an API key", field=API_KEY_HEADER)


def _bearer_key() -> str:
    """``Authorization: Bearer <key>``, on the routes whose clients send their key so (OpenAI clients)."""
    scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
    if request.blueprint in access.BEARER_KEY_BLUEPRINTS and scheme.lower() == "bearer":
        return token.strip()
    return ""


def _scrape_token_matches(settings: Settings) -> bool:
    """``Authorization: Bearer <server.metrics_token>`` (constant-time), when a token is configured."""
    token = settings.server.metrics_token
    given = request.headers.get("Authorization", "")
    if token is None or not given.startswith("Bearer "):
        return False
    return hmac.compare_digest(given.removeprefix("Bearer ").encode(), token.get_secret_value().encode())


def _blueprints() -> list[Any]:
    """Route areas, one blueprint each; another area adds its import and entry here."""
    from backend.api import admin, chat, connectors_admin, feedback, health, jobs, openai_v1, search, stream, web

    return [chat.bp, health.bp, assets.assets_bp, search.bp, stream.bp, feedback.bp, web.bp, admin.bp, jobs.bp,
            admin_session.bp, openai_v1.bp, connectors_admin.bp]


def create_app(settings: Settings | None = None, runtime: Runtime | ServingRuntime | None = None) -> Flask:
    """Build the WSGI app. ``settings`` default to ``load_settings()`` (or the runtime's);
    ``runtime`` to ``build_runtime(settings)``. Tests pass both to use their own store and
    models."""
    given = runtime
    if settings is None:
        settings = given.settings if given is not None else load_settings()
    if given is None:
        given = build_runtime(settings)
    served = given if isinstance(given, ServingRuntime) else serving_runtime(given)
    from backend.common.telemetry_setup import configure as configure_telemetry

    configure_telemetry(settings.telemetry)  # nothing when telemetry.enabled is false
    if signed_assets.signing_required(settings):
        signed_assets.signing_key(settings)  # a key that cannot be made or read stops the start, not a request
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.server.max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["rag"] = served
    tracing.init_app(app)  # first: its span covers every other hook (only when telemetry is on)
    errors.register(app)
    hardening.init_app(app, settings.server)
    admin_session.init_app(app, settings)  # refuses cross-site writes before anything else reads the request
    metrics.init_app(app)
    app.before_request(_refresh_services)
    app.before_request(_require_api_key)
    ratelimit.init_app(app, settings)
    audit.init_app(app)  # after authentication and the limiter: their refusals (401, 403, 429) are recorded
    openapi.init_app(app, settings)
    for bp in _blueprints():
        app.register_blueprint(bp)
    return app
