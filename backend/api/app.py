"""The Flask app factory and the composition root of the HTTP API.

No app exists at import time: ``create_app(settings, services)`` builds one, so
every test can build its own with its own store and models. ``build_services``
is the one place where config turns into adapters (through the registry) and
adapters into services; ``rag ask`` uses it too. Services live in
``app.extensions["rag"]``, never in module globals.
"""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass, field
from typing import Any

import structlog
from flask import Flask, current_app, request

from backend.api import access, assets, errors, hardening, metrics, openapi, ratelimit, signed_assets, tracing
from backend.common.config import Settings, load_settings
from backend.common.errors import ConfigError, Unauthorized
from backend.core.ports import ChatModel, ConversationLog
from backend.core.services.chat_service import ChatService, Routing
from backend.core.services.evidence import SentenceScorer
from backend.core.services.search_service import SearchService

log = structlog.get_logger(__name__)

#: Endpoints that stay open when API keys are configured (probes, scrapers, the schema).
#: open to anyone; /metrics is not (it names versions): it needs what the API needs, or server.metrics_token
PUBLIC_ENDPOINTS = frozenset({"health.healthz", "health.readyz", "openapi.openapi_document", "static", "web.index"})
METRICS_ENDPOINT = "metrics.metrics_endpoint"
API_KEY_HEADER = "X-API-Key"
#: answer providers that are LLMs: they also rewrite conversation follow-ups (else the offline rule does)
LLM_PROVIDERS = frozenset({"openai_compat", "oci"})


@dataclass
class RagServices:
    """Everything the routes need, built once per app."""

    settings: Settings
    store: Any
    embedder: Any
    searches: dict[str, SearchService]
    chat: ChatService
    primary: ChatModel
    fallback: ChatModel

    #: the knowledge-base registry file as ``settings`` last took it in: (inode, mtime_ns, size); the
    #: registry is replaced atomically, so a new inode tells a write even within one mtime tick
    registry_stamp: tuple[int, int, int] | None = None
    _refreshing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def search(self) -> SearchService:
        """The search service of the default embedding profile."""
        return self.searches[self.settings.embeddings.default_profile]

    def refresh(self) -> bool:
        """Take in knowledge bases registered since start (``rag kb create``, an upload): when the
        registry file changed, merge it into ``settings`` and route the new domains. Aliases are
        resolved per request, so a newly promoted version needs nothing here. True if it changed."""
        from backend.ingest.knowledge_bases import apply_registry, registry_file

        # one request takes the change in; the others wait for it rather than answer from the old
        # settings (a page that lists knowledge bases right after `rag kb create` must see the new one)
        with self._refreshing:
            try:
                found = registry_file(self.settings).stat()
                stamp: tuple[int, int, int] | None = (found.st_ino, found.st_mtime_ns, found.st_size)
            except OSError:
                stamp = None
            if stamp == self.registry_stamp:
                return False
            try:
                settings = apply_registry(self.settings)
            except ConfigError as exc:  # a broken registry must not stop serving what was served
                self.registry_stamp = stamp  # said once, not at every request
                log.error("services.refresh_failed", error=exc.user_message)
                return False
            self.registry_stamp = stamp
            if settings is self.settings:
                return False
            self.chat.routing = Routing.from_settings(settings.embeddings)
            self.settings = settings
        log.info("services.refreshed", domains=sorted(settings.embeddings.domains))
        return True


def build_services(
    settings: Settings,
    *,
    store: Any = None,
    embedder: Any = None,
    primary: ChatModel | None = None,
    fallback: ChatModel | None = None,
) -> RagServices:
    """Build adapters from config (or take the ones given) and wire the services.
    Raises ``ConfigError`` for an unsupported distance / score-mode combination or an
    alias that serves a version of another distance than ``retrieval.distance``."""
    from backend.providers.registry import (
        build_chat_model,
        build_embedder,
        build_reranker,
        build_store,
        reranker_factory,
    )

    store = store if store is not None else build_store(settings)
    embedder = embedder if embedder is not None else build_embedder(settings)
    primary = primary if primary is not None else build_chat_model(settings.llm.primary, settings)
    fallback = fallback if fallback is not None else build_chat_model(settings.llm.fallback, settings)
    reranker = build_reranker(settings, embedder)
    rerankers = reranker_factory(settings, embedder)
    # each version is served with the retrieval settings stamped on it at ingest
    searches = {
        name: SearchService(store, embedder, profile, settings.retrieval, reranker, follow_stamp=True,
                            rerankers=rerankers)
        for name, profile in settings.embeddings.profiles.items()
    }
    # the extractive answerer's sentence scorer when it is the primary (one vector cache), else a new one
    scorer = getattr(primary, "scorer", None)
    chat = ChatService(
        searches, Routing.from_settings(settings.embeddings), settings.retrieval, settings.llm.prompts,
        primary, fallback, admin=store, interactions=store, sanitize=settings.sanitize,
        evidence=scorer if isinstance(scorer, SentenceScorer) else SentenceScorer(embedder),
        conversations=store if isinstance(store, ConversationLog) else None,
        condense_llm=primary if primary.name in LLM_PROVIDERS else None,
    )
    services = RagServices(settings, store, embedder, searches, chat, primary, fallback)
    services.refresh()  # the registry's mtime now: only later changes are re-read
    return services


def _refresh_services() -> None:
    """Before each request: a knowledge base registered since the last one is served now."""
    current_app.extensions["rag"].refresh()


def _require_api_key() -> None:
    """401 unless X-API-Key matches a configured key (constant-time, every key compared).
    With ``access.enabled`` the key (or bearer token) must name a principal instead."""
    settings = current_app.extensions["rag"].settings
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
    given = (request.headers.get(API_KEY_HEADER) or "").encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(given, key.get_secret_value().encode())
    if not matched:
        reason = "missing" if not given else "wrong"
        raise Unauthorized(f"{API_KEY_HEADER} header is {reason}; this server requires an API key", field=API_KEY_HEADER)


def _scrape_token_matches(settings: Settings) -> bool:
    """``Authorization: Bearer <server.metrics_token>`` (constant-time), when a token is configured."""
    token = settings.server.metrics_token
    given = request.headers.get("Authorization", "")
    if token is None or not given.startswith("Bearer "):
        return False
    return hmac.compare_digest(given.removeprefix("Bearer ").encode(), token.get_secret_value().encode())


def _blueprints() -> list[Any]:
    """Route areas, one blueprint each; another area adds its import and entry here."""
    from backend.api import admin, chat, feedback, health, jobs, search, stream, web

    return [chat.bp, health.bp, assets.assets_bp, search.bp, stream.bp, feedback.bp, web.bp, admin.bp, jobs.bp]


def create_app(settings: Settings | None = None, services: RagServices | None = None) -> Flask:
    """Build the WSGI app. ``settings`` default to ``load_settings()``; ``services`` to
    ``build_services(settings)``. Tests pass both to use their own store and models."""
    if settings is None:
        settings = services.settings if services is not None else load_settings()
    if services is None:
        services = build_services(settings)
    from backend.common.telemetry_setup import configure as configure_telemetry

    configure_telemetry(settings.telemetry)  # nothing when telemetry.enabled is false
    if signed_assets.signing_required(settings):
        signed_assets.signing_key(settings)  # a key that cannot be made or read stops the start, not a request
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.server.max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["rag"] = services
    tracing.init_app(app)  # first: its span covers every other hook (only when telemetry is on)
    errors.register(app)
    hardening.init_app(app, settings.server)
    metrics.init_app(app)
    app.before_request(_refresh_services)
    app.before_request(_require_api_key)
    ratelimit.init_app(app, settings)
    openapi.init_app(app, settings)
    for bp in _blueprints():
        app.register_blueprint(bp)
    return app
