"""The HTTP side of the audit trail (``core/services/audit.py``): what is recorded, and where an
admin reads it.

After every request (an ``after_request`` hook, so a refusal raised before the route ran is
recorded too) one line is appended for each admin action (``ACTIONS``: promote, rollback, upload,
evaluate, golden-set and feedback export, conversation delete, the audit export itself), for each
call of the OpenAI-compatible door (``/v1``, as the MCP tools are recorded) and for every denied
request (401, 403, 429, on any route): the principal (never the credential), the
action, the knowledge base and version, the outcome, the request id, and the method, path (never
the query string, which may hold a signed link) and status. ``GET /admin/audit`` pages through
the trail, ``GET /admin/audit/export`` returns it as JSONL; both for the admin role only.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, g, jsonify, request

from backend.api.runtime import current_runtime
from backend.api import admin_session
from backend.api.hardening import request_id
from backend.common.errors import AdminDisabled, FieldOutOfRange, Forbidden
from backend.core.services.audit import as_json, jsonl
from backend.runtime import Runtime

bp = Blueprint("audit", __name__, url_prefix="/admin")

#: endpoint -> the action its requests are recorded as
ACTIONS = {
    "admin.promote": "promote", "admin.rollback": "rollback", "admin_jobs.upload": "upload", "admin_jobs.evaluate": "evaluate",
    "admin.golden": "golden_export", "admin.feedback": "feedback_export",
    "stream.delete_conversation": "conversation_delete", "audit.export": "audit_export",
    "admin_connectors.sync": "connector_sync", "admin_connectors.cancel": "connector_cancel",
    # the OpenAI-compatible door, like the MCP tools (never the messages: only status, model and version)
    "openai_v1.chat_completions": "v1.chat_completions", "openai_v1.models": "v1.models", "openai_v1.model": "v1.models",
}
DENIED = frozenset({401, 403, 429})
PAGE = 200


def outcome(status: int) -> str:
    """``ok`` (2xx/3xx), ``denied`` (401, 403, 429), ``refused`` (another 4xx: a failed gate, a bad body),
    ``error`` (5xx)."""
    if status < 400:
        return "ok"
    return "denied" if status in DENIED else "refused" if status < 500 else "error"


def _who() -> str | None:
    principal = g.get("rag_principal")
    if principal is not None:
        return str(principal.name)
    return "local" if request.path.startswith("/admin/") and admin_session.is_local_admin() else None


def _knowledge_base(services: Runtime) -> str | None:
    key = (request.view_args or {}).get("key") or g.get("rag_audit_kb")  # a connector route: its knowledge base
    if isinstance(key, str):
        return key[:64]
    model = g.get("rag_model_domain", False)  # /v1: the knowledge base its model named (None: the default)
    if model is not False:
        return model if model is not None else "default"
    header = (request.headers.get("X-RAG-Domain") or "").strip()
    return header if header in services.chat.routing.domains else None


def _record(response: Response) -> Response:
    status = response.status_code
    action = ACTIONS.get(request.endpoint or "")
    if action is None and status not in DENIED:
        return response
    services = current_runtime()
    body = response.get_json(silent=True) if response.mimetype == "application/json" else None
    body = body if isinstance(body, dict) else {}
    found = body.get("error")
    error: dict[str, Any] = found if isinstance(found, dict) else {}
    version = body.get("version") if isinstance(body.get("version"), str) else (request.view_args or {}).get("version")
    rag = body.get("rag")
    if version is None and isinstance(rag, dict):  # a /v1 completion: the version it answered from
        version = (rag.get("decision_explain") or {}).get("version")
    if version is None and action == "v1.chat_completions":  # streamed: the route noted it
        version = g.get("rag_answer_version")
    services.audit.record(action or "request", outcome(status), principal=_who(),
                          knowledge_base=_knowledge_base(services), version=version, request_id=request_id(),
                          surface="http", detail={"method": request.method, "path": request.path[:300],
                                                  "status": status, "code": error.get("code")})
    return response


def _admin_only() -> None:
    from backend.api.admin import caller  # the console's caller: its principal, or the local admin

    if not current_runtime().settings.admin.enabled:
        raise AdminDisabled("the admin console is off (admin.enabled: false)")
    who = caller()
    if not who.admin:
        name = f"principal {who.name!r}" if who.principal is not None else "this caller"
        raise Forbidden(f"{name} may not read the audit log: it needs the admin role (or the local admin link)",
                        field="role")


def _int_arg(name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.args.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise FieldOutOfRange(f"{name} must be a whole number between {low} and {high}, got {raw[:20]!r}", field=name)
    return int(raw)


@bp.get("/audit")
def events() -> Response:
    """The trail, newest first, ``limit`` lines (default 200) with ids below ``before``."""
    _admin_only()
    limit = _int_arg("limit", PAGE, 1, 1000) or PAGE
    before = _int_arg("before", None, 1, 10**18)
    rows = current_runtime().audit.events(limit, before)
    return jsonify({"events": [as_json(e) for e in rows],
                    "next_before": rows[-1].id if len(rows) == limit else None})


@bp.get("/audit/export")
def export() -> Response:
    """The whole trail (at most ``audit.max_export`` lines, newest first) as JSONL."""
    _admin_only()
    services = current_runtime()
    rows = services.audit.events(services.settings.audit.max_export)
    response = Response("".join(jsonl(rows)), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = 'attachment; filename="audit.jsonl"'
    response.headers["Cache-Control"] = "no-store"
    return response


def init_app(app: Flask) -> None:
    app.after_request(_record)
    app.register_blueprint(bp)
