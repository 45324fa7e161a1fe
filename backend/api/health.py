"""Liveness and readiness.

``/healthz`` says the process answers. ``/readyz`` says it can serve ``/chat``:
the store answers a trivial query, every configured alias resolves to a version,
and the embedding model is loaded. A failure is a 503 naming each check, so an
orchestrator (and a person reading the JSON) sees what to fix. Alias, version,
model names and store paths go only to a caller with a valid credential
(``disclosure``); everyone else reads fixed texts, and the log has the detail.
"""

from __future__ import annotations

import structlog
from flask import Blueprint, Response, jsonify

from backend.api.runtime import current_runtime
from backend.api.disclosure import caller_may_see_names
from backend.api.models import HealthResponse, ReadyCheck, ReadyResponse
from backend.common.errors import RagError
from backend.core.ports import Embedder

bp = Blueprint("health", __name__)
log = structlog.get_logger(__name__)


@bp.get("/healthz")
def healthz() -> Response:
    return jsonify(HealthResponse(status="ok").model_dump())


def _store_check(store: object) -> ReadyCheck:
    ping = getattr(store, "ping", None)
    if ping is None:
        return ReadyCheck(ok=True, detail=f"{type(store).__name__} has no ping; assumed reachable")
    try:
        ping()
    except RagError as exc:
        return ReadyCheck(ok=False, detail=exc.user_message)
    return ReadyCheck(ok=True, detail="store answers")


def _alias_check(store: object, aliases: list[str]) -> ReadyCheck:
    try:
        resolved = {alias: store.resolve_alias(alias) for alias in aliases}  # type: ignore[attr-defined]
    except RagError as exc:
        return ReadyCheck(ok=False, detail=exc.user_message)
    missing = [a for a, v in resolved.items() if v is None]
    if missing:
        return ReadyCheck(ok=False, detail=f"alias(es) {', '.join(missing)} do not exist; ingest and promote a version")
    return ReadyCheck(ok=True, detail=", ".join(f"{a} -> {v}" for a, v in resolved.items()))


def _model_check(embedder: Embedder) -> ReadyCheck:
    if not embedder.dimension:
        return ReadyCheck(ok=False, detail="embedding model is not loaded")
    return ReadyCheck(ok=True, detail=f"{embedder.model_id} ({embedder.dimension} dims)")


#: what a caller without a credential reads for each check (ok, failed): no names, no paths
PUBLIC_DETAIL = {
    "store": ("store answers", "store unavailable; the details are in the server log"),
    "alias": ("every alias serves a version", "an alias serves no version; the details are in the server log"),
    "model": ("embedding model loaded", "embedding model not loaded"),
}


def _public(checks: dict[str, ReadyCheck]) -> dict[str, ReadyCheck]:
    return {name: ReadyCheck(ok=c.ok, detail=PUBLIC_DETAIL[name][0 if c.ok else 1]) for name, c in checks.items()}


@bp.get("/readyz")
def readyz() -> tuple[Response, int]:
    services = current_runtime()
    stores = services.stores
    store_ok = _store_check(stores.owner if stores.owner is not None else stores.vectors)
    checks = {
        "store": store_ok,
        "alias": _alias_check(stores.admin, services.chat.routing.aliases) if store_ok.ok
        else ReadyCheck(ok=False, detail="not checked: store unreachable"),
        "model": _model_check(services.embedder),
    }
    ready = all(c.ok for c in checks.values())
    if not ready:
        log.warning("api.not_ready", **{name: c.detail for name, c in checks.items() if not c.ok})
    shown = checks if caller_may_see_names() else _public(checks)
    body = ReadyResponse(status="ready" if ready else "not_ready", checks=shown)
    return jsonify(body.model_dump()), 200 if ready else 503
