"""The ``AuditLog`` port on both stores: SQLite on a real file, Oracle on the stand-in
(``oracle_fake.CatalogDb``, whose statements the SQL parse test checks): append order, newest
first, paging by id, JSON detail, and (SQLite) a trail that survives reopening the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.core.ports import AuditLog, Stores
from backend.core.types import AuditEvent
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.providers.oracle_fake import CatalogDb, catalog_store

EVENTS = [AuditEvent("promote", "ok", "root", "default", "KB_V2", "req-0001", "http", {"status": 200}, "2026-11-28T10:00:00.000+00:00"),
          AuditEvent("request", "denied", None, None, None, "req-0002", "http", {"status": 401, "path": "/chat"},
                     "2026-11-28T10:00:01.000+00:00"),
          AuditEvent("mcp.ask", "ok", "dave", "default", "KB_V2", "req-0003", "mcp-stdio", {}, "2026-11-28T10:00:02.000+00:00")]


@pytest.fixture(params=["sqlite", "oracle"])
def audit_log(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        store = SqliteVectorStore(tmp_path / "audit.sqlite")
        yield Stores.of(store).audit
        store.close()
    else:
        yield catalog_store(CatalogDb()).stores().audit


def test_events_come_back_newest_first_with_ids_in_append_order(audit_log: AuditLog) -> None:
    assert isinstance(audit_log, AuditLog)
    for event in EVENTS:
        audit_log.append_audit(event)
    got = audit_log.audit_events()
    assert [(e.id, e.action, e.outcome, e.principal) for e in got] == [
        (3, "mcp.ask", "ok", "dave"), (2, "request", "denied", None), (1, "promote", "ok", "root")]
    assert got[2].detail == {"status": 200} and got[2].version == "KB_V2" and got[2].request_id == "req-0001"
    assert got[1].detail == {"status": 401, "path": "/chat"} and got[0].surface == "mcp-stdio"
    assert got[2].created_at == "2026-11-28T10:00:00.000+00:00" and got[2].knowledge_base == "default"
    assert [e.id for e in audit_log.audit_events(limit=1)] == [3]
    assert [e.id for e in audit_log.audit_events(limit=5, before_id=3)] == [2, 1]


def test_the_sqlite_trail_survives_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite"
    first = SqliteVectorStore(path)
    first.append_audit(EVENTS[0])
    first.close()
    again = SqliteVectorStore(path)
    assert [(e.id, e.action, e.principal) for e in again.audit_events()] == [(1, "promote", "root")]
    again.close()
