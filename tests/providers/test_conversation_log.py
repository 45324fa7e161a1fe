"""``ConversationLog`` in both stores: the SQLite store for real, the Oracle adapter's SQL
and binds through the recording fake of python-oracledb."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import oracledb

from backend.core.ports import ConversationLog
from backend.core.types import ConversationTurn, Feedback
from backend.providers.oracle_vs import conversations as oc
from backend.providers.oracle_vs import sql
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.providers.test_oracle_vs import RecordingDb, make_store, when


def turn(iid: str, cid: str | None = "k1", principal: str | None = None, q: str = "q?") -> ConversationTurn:
    return ConversationTurn(iid, cid, q, q + " (standalone)", "rag", "KB_V1", None, principal, ("doc-a", "doc-b"))


def test_sqlite_keeps_turns_per_owner_and_deletes_them(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    assert isinstance(store, ConversationLog)
    for i, owner in enumerate([None, None, "alice", None]):
        store.record_turn(turn(f"i{i}", principal=owner, q=f"q{i}?"))
    store.record_turn(turn("other", cid="k2"))
    assert [t.question for t in store.conversation_turns("k1", None)] == ["q0?", "q1?", "q3?"]
    assert [t.question for t in store.conversation_turns("k1", None, limit=2)] == ["q1?", "q3?"]
    assert [t.interaction_id for t in store.conversation_turns("k1", "alice")] == ["i2"]
    got = store.get_turn("i2")
    assert got is not None and got.cited_doc_ids == ("doc-a", "doc-b") and got.principal == "alice"
    assert store.get_turn("nope") is None
    assert store.delete_conversation("k1", None) == 3
    assert store.conversation_turns("k1", None) == [] and len(store.conversation_turns("k1", "alice")) == 1
    assert store.get_turn("other") is not None


def test_sqlite_stores_feedback_newest_first(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    first = store.record_feedback(Feedback("i1", "up", None, None, "q?", "rag", "KB_V1", None, None, ("doc-a",)))
    second = store.record_feedback(Feedback("i2", "down", "wrong <b>", "Canberra", "q2?", "fallback", "KB_V1", "hr",
                                            "bob"))
    assert second > first
    rows = store.feedback()
    assert [(f.feedback_id, f.rating, f.comment, f.domain, f.principal) for f in rows] == [
        (second, "down", "wrong <b>", "hr", "bob"), (first, "up", None, None, None)]
    assert rows[1].cited_doc_ids == ("doc-a",) and rows[1].created_at


def test_oracle_catalog_creates_both_tables_and_guards_their_names() -> None:
    ddl = "\n".join(sql.CATALOG_DDL)
    assert "CREATE TABLE IF NOT EXISTS RAG_CONVERSATION_TURNS" in ddl and "CREATE TABLE IF NOT EXISTS RAG_FEEDBACK" in ddl
    assert {"RAG_CONVERSATION_TURNS", "RAG_FEEDBACK"} <= sql.CATALOG_TABLES


def test_oracle_records_and_reads_turns_with_bound_values() -> None:
    row = ("i1", "k1", "2025-01-01", "q?", "q? (standalone)", "rag", "KB_V1", "hr", None, '["doc-a"]')
    db = RecordingDb([when("FROM RAG_CONVERSATION_TURNS WHERE conversation_id", [row]),
                      when("FROM RAG_CONVERSATION_TURNS WHERE interaction_id", [row])])
    store = make_store(db)
    store.record_turn(turn("i1", principal="alice", q="'; DROP TABLE x; --"))
    assert oc.INSERT_TURN_SQL in db.statements()
    binds = [b for k, b in db.log if k == "binds" and "effective_query" in b][0]
    assert binds["question"] == "'; DROP TABLE x; --" and binds["principal"] == "alice"
    assert binds["cited_doc_ids"] == '["doc-a", "doc-b"]'
    turns = store.conversation_turns("k1", None, limit=5)
    assert [(t.interaction_id, t.domain, t.cited_doc_ids) for t in turns] == [("i1", "hr", ("doc-a",))]
    read = [b for k, b in db.log if k == "binds" and "n" in b][0]
    assert read == {"conversation_id": "k1", "principal": None, "n": 5}
    assert oc.OWNER in oc.CONVERSATION_SQL and oc.OWNER in oc.DELETE_CONVERSATION_SQL
    got = store.get_turn("i1")
    assert got is not None and got.effective_query == "q? (standalone)"


def test_oracle_feedback_returns_its_identity_and_deletes_by_owner() -> None:
    def returning(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(41,)]

    fb_row = (41, "i1", "2025-01-01", "down", "bad", None, "q?", "fallback", "KB_V1", None, "bob", "[]")
    db = RecordingDb([when("RETURNING id INTO :feedback_id", returning), when("FROM RAG_FEEDBACK ORDER BY", [fb_row])])
    store = make_store(db)
    new_id = store.record_feedback(Feedback("i1", "down", "bad", None, "q?", "fallback", "KB_V1", None, "bob"))
    assert new_id == 41
    assert ("commit", "") in db.log
    binds = [b for k, b in db.log if k == "binds" and "rating" in b][0]
    assert binds["user_comment"] == "bad" and binds["feedback_id"].kind is oracledb.DB_TYPE_NUMBER
    rows = store.feedback(limit=10)
    assert [(f.feedback_id, f.rating, f.comment, f.principal) for f in rows] == [(41, "down", "bad", "bob")]
    store.delete_conversation("k1", "bob")
    assert oc.DELETE_CONVERSATION_SQL in db.statements()
    assert [b for k, b in db.log if k == "binds"][-1] == {"conversation_id": "k1", "principal": "bob"}
