"""The audit trail: who did what, to which knowledge base and version, when, with what outcome.

Every front door appends through ``AuditTrail.record``: the HTTP app after each audited request
(admin actions, denials: ``backend/api/audit.py``) and the MCP server after each tool call. The
lines live in the store (``AuditLog``: SQLite or Oracle), so every worker writes one trail and it
survives a restart. What a line may hold is decided here, once: never a credential (keys that name
one are dropped from ``detail``), and a user's question only with ``audit.include_questions``.
Recording is best effort, like the interactions table: a failed append is logged and counted,
never the cause of a failed request.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Mapping

import structlog

from backend.common.config import AuditSettings
from backend.core.ports import AuditLog
from backend.core.types import AuditEvent

log = structlog.get_logger(__name__)

#: ``detail`` keys never written, whatever a caller passes: credentials and what may carry one
SECRET_KEYS = frozenset({"api_key", "key", "token", "authorization", "password", "secret", "sig", "cookie",
                         "x-api-key", "x-rag-admin-token"})
#: ``detail`` keys that hold a user's words: kept only with ``audit.include_questions``
QUESTION_KEYS = frozenset({"question", "query", "q", "messages"})


def clean_detail(detail: Mapping[str, Any], include_questions: bool) -> dict[str, Any]:
    """``detail`` without credentials, without a user's words unless ``include_questions``, and
    without empty values (pure)."""
    return {k: v for k, v in detail.items() if k.lower() not in SECRET_KEYS and v is not None
            and (include_questions or k.lower() not in QUESTION_KEYS)}


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def as_json(event: AuditEvent) -> dict[str, Any]:
    """One line of the JSONL export (and of ``GET /admin/audit``)."""
    return {"id": event.id, "at": event.created_at, "principal": event.principal, "action": event.action,
            "knowledge_base": event.knowledge_base, "version": event.version, "outcome": event.outcome,
            "request_id": event.request_id, "surface": event.surface, "detail": dict(event.detail)}


def jsonl(events: Iterable[AuditEvent]) -> Iterator[str]:
    for event in events:
        yield json.dumps(as_json(event), ensure_ascii=False) + "\n"


class AuditTrail:
    """Appends and reads the trail; a no-op without an ``AuditLog`` or with ``audit.enabled`` off."""

    def __init__(self, store: AuditLog | None, settings: AuditSettings) -> None:
        self.store = store if settings.enabled else None
        self.settings = settings
        self.failures = 0
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.store is not None

    def record(self, action: str, outcome: str, *, principal: str | None = None, knowledge_base: str | None = None,
               version: str | None = None, request_id: str | None = None, surface: str = "http",
               detail: Mapping[str, Any] | None = None) -> None:
        if self.store is None:
            return
        event = AuditEvent(action=action, outcome=outcome, principal=principal, knowledge_base=knowledge_base,
                           version=version, request_id=request_id, surface=surface,
                           detail=clean_detail(detail or {}, self.settings.include_questions), created_at=now_iso())
        try:
            self.store.append_audit(event)
        except Exception as exc:  # noqa: BLE001 - the trail never fails the request it records
            with self._lock:
                self.failures += 1
            log.warning("audit.not_recorded", action=action, outcome=outcome, error_type=type(exc).__name__)

    def events(self, limit: int = 1000, before_id: int | None = None) -> list[AuditEvent]:
        return self.store.audit_events(limit, before_id) if self.store is not None else []
