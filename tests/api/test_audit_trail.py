"""The audit trail over HTTP, on the access-control corpus (real ingest, real store): admin actions
and denied requests recorded with the right principal, knowledge base, version, outcome and request
id; read by an admin at /admin/audit and exported as JSONL; refused to a non-admin; never a key or a
question in the table; and the same trail after a restart (a new app on the same store file)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from backend.api.app import create_app
from backend.runtime import build_services
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.eval.lifecycle import LEAVE_Q
from tests.eval.test_access_control import KEYS, AclKB, make_root_admin

ROOT = {"X-API-Key": "key-root-0c41"}


def rows(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["action"], e["outcome"], e["principal"], e["knowledge_base"], e["detail"].get("status"), e["surface"])
            for e in events]


def test_admin_actions_and_denials_are_recorded_and_read_by_an_admin_only(tmp_path: Path, embedder: Any) -> None:
    kb = AclKB(tmp_path, embedder)
    kb.ingest()
    kb.promote()
    root = make_root_admin(kb)
    promoted = root.post("/admin/knowledge-bases/default/promote", json={"confirm": True}, headers=ROOT)
    rolled = root.post("/admin/knowledge-bases/default/rollback", json={"confirm": True}, headers=ROOT)
    golden = root.get("/admin/knowledge-bases/default/golden", headers=ROOT)
    feedback = root.get("/admin/knowledge-bases/default/feedback", headers=ROOT)
    forbidden = kb.chat("alice", LEAVE_Q, domain="handbook")
    wrong = kb.client.post("/chat", json={"question": LEAVE_Q}, headers={"X-API-Key": "not-a-key"})
    assert kb.chat("dave", LEAVE_Q).status_code == 200  # an answer is no admin action: not recorded
    assert (promoted.status_code, rolled.status_code, golden.status_code, feedback.status_code,
            forbidden.status_code, wrong.status_code) == (200, 409, 200, 200, 403, 401)
    not_admin = kb.client.get("/admin/audit", headers={"X-API-Key": KEYS["alice"]})
    assert not_admin.status_code == 403
    assert not_admin.get_json()["error"]["message"] == ("principal 'alice' may not read the audit log: it needs the "
                                                        "admin role (or the local admin link)")

    events = root.get("/admin/audit", headers=ROOT).get_json()["events"]
    assert rows(events) == [
        ("request", "denied", "alice", None, 403, "http"),
        ("request", "denied", None, None, 401, "http"),
        ("request", "denied", "alice", "handbook", 403, "http"),
        ("feedback_export", "ok", "root", "default", 200, "http"),
        ("golden_export", "ok", "root", "default", 200, "http"),
        ("rollback", "refused", "root", "default", 409, "http"),
        ("promote", "ok", "root", "default", 200, "http"),
    ]
    assert events[6]["version"] == promoted.get_json()["version"] == "KB_LC_V1"
    assert events[6]["request_id"] == promoted.headers["X-Request-ID"]
    assert events[5]["detail"] == {"method": "POST", "path": "/admin/knowledge-bases/default/rollback", "status": 409,
                                   "code": "nothing_to_roll_back"}
    assert events[1]["detail"]["path"] == "/chat" and events[1]["detail"]["code"] == "unauthorized"

    export = root.get("/admin/audit/export", headers=ROOT)
    assert export.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in export.get_data(as_text=True).splitlines()]
    assert [line["id"] for line in lines] == [e["id"] for e in events]

    # the table holds no credential and no question
    with sqlite3.connect(kb.db) as con:
        dumped = json.dumps(con.execute("SELECT * FROM rag_audit_log").fetchall())
    assert [s for s in ["not-a-key", *KEYS.values(), "key-root-0c41", LEAVE_Q, "annual leave"] if s in dumped] == []

    # a restart: a new app on the same store file reads the same trail, the export recorded too
    store = SqliteVectorStore(kb.db)
    restarted = create_app(make_root_admin_settings(kb), build_services(make_root_admin_settings(kb), store=store,
                                                                        embedder=embedder)).test_client()
    again = restarted.get("/admin/audit", headers=ROOT).get_json()["events"]
    assert rows(again)[0] == ("audit_export", "ok", "root", None, 200, "http")
    assert [e["id"] for e in again[1:]] == [e["id"] for e in events]
    store.close()


def test_every_audited_endpoint_exists(tmp_path: Path, embedder: Any) -> None:
    """A renamed route would silently stop being recorded: every ``ACTIONS`` key is a served endpoint."""
    from backend.api.audit import ACTIONS
    from tests.conftest import make_settings

    settings = make_settings(tmp_path)
    app = create_app(settings, build_services(settings, store=SqliteVectorStore(tmp_path / "a.sqlite"),
                                              embedder=embedder))
    assert set(ACTIONS) - {rule.endpoint for rule in app.url_map.iter_rules()} == set()


def make_root_admin_settings(kb: AclKB) -> Any:
    from tests.eval.test_access_control import PRINCIPALS

    principals = {name: {**p, "api_key": KEYS[name]} for name, p in PRINCIPALS.items()}
    principals["root"] = {"domains": ["*"], "roles": ["admin"], "api_key": "key-root-0c41"}
    return kb.settings.model_copy(update={"access": type(kb.settings.access).model_validate(
        {"enabled": True, "principals": principals})})
