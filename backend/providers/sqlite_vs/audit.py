"""``AuditLog`` on the SQLite store: the append-only ``rag_audit_log`` table (``schema.CATALOG``).

Over the store's ``SqliteDatabase`` (same file, same connections as the other ports), so every
gunicorn worker appends to one trail and it survives a restart; every value is a bound parameter.
"""

from __future__ import annotations

import json
import sqlite3

from backend.core.types import AuditEvent
from backend.providers.sqlite_vs.connection import OnDatabase

_COLUMNS = "created_at, principal, action, knowledge_base, version, outcome, request_id, surface, detail"


def _event(r: sqlite3.Row) -> AuditEvent:
    return AuditEvent(action=r["action"], outcome=r["outcome"], principal=r["principal"],
                      knowledge_base=r["knowledge_base"], version=r["version"], request_id=r["request_id"],
                      surface=r["surface"], detail=json.loads(r["detail"]), created_at=r["created_at"], id=r["id"])


class SqliteAuditLog(OnDatabase):
    """``AuditLog``: one row per event, ids in append order."""

    def append_audit(self, event: AuditEvent) -> None:
        with self.db.write() as con:
            con.execute(f"INSERT INTO rag_audit_log({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
                        (event.created_at, event.principal, event.action, event.knowledge_base, event.version,
                         event.outcome, event.request_id, event.surface, json.dumps(dict(event.detail), default=str)))

    def audit_events(self, limit: int = 1000, before_id: int | None = None) -> list[AuditEvent]:
        with self.db.read() as con:
            rows = con.execute(f"SELECT id, {_COLUMNS} FROM rag_audit_log WHERE id < ? ORDER BY id DESC LIMIT ?",
                               (before_id if before_id is not None else 2**62, limit)).fetchall()
        return [_event(r) for r in rows]
