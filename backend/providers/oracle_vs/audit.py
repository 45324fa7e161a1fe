"""``AuditLog`` on Oracle: the append-only RAG_AUDIT_LOG table (``sql.CATALOG_DDL``).

Over the store's ``OracleConnector`` (the pool of the other ports): every worker appends to one
trail, in the database, beside ``CHAT_INTERACTIONS``. The table name is a fixed catalog name;
every value is a named bind.
"""

from __future__ import annotations

import json
from typing import Any

from backend.core.types import AuditEvent
from backend.providers.oracle_vs.connection import OnConnector

_COLUMNS = "created_at, principal, action, knowledge_base, version, outcome, request_id, surface, detail"
INSERT_AUDIT_SQL = (f"INSERT INTO RAG_AUDIT_LOG ({_COLUMNS}) VALUES (:created_at, :principal, :action, "
                    ":knowledge_base, :version, :outcome, :request_id, :surface, :detail)")
AUDIT_SQL = (f"SELECT id, {_COLUMNS} FROM RAG_AUDIT_LOG WHERE id < :before_id ORDER BY id DESC "
             "FETCH FIRST :n ROWS ONLY")
#: ``before_id`` when the caller gives none: above any identity value
NO_BOUND = 10**18


def _text(value: Any) -> str:
    return str(value.read() if hasattr(value, "read") else value)


class OracleAuditLog(OnConnector):
    """``AuditLog``: one RAG_AUDIT_LOG row per event, ids in append order (identity column)."""

    def append_audit(self, event: AuditEvent) -> None:
        with self.connector.transaction("appending to the audit log") as con:
            con.cursor().execute(INSERT_AUDIT_SQL, {
                "created_at": event.created_at, "principal": event.principal, "action": event.action,
                "knowledge_base": event.knowledge_base, "version": event.version, "outcome": event.outcome,
                "request_id": event.request_id, "surface": event.surface,
                "detail": json.dumps(dict(event.detail), default=str)})

    def audit_events(self, limit: int = 1000, before_id: int | None = None) -> list[AuditEvent]:
        with self.connector.connection("reading the audit log") as con:
            cur = con.cursor()
            cur.execute(AUDIT_SQL, {"before_id": before_id if before_id is not None else NO_BOUND, "n": int(limit)})
            rows = cur.fetchall()
        return [AuditEvent(action=r[3], outcome=r[6], principal=r[2], knowledge_base=r[4], version=r[5],
                           request_id=r[7], surface=r[8], detail=json.loads(_text(r[9])), created_at=r[1], id=int(r[0]))
                for r in rows]
