"""``ConversationLog`` on the SQLite store: conversation turns and answer feedback.

A mixin of ``SqliteVectorStore`` (same file, same connections): the two tables are
catalog tables of fixed names (``schema.CATALOG``); every value is a bound parameter.
``principal IS ?`` matches NULL to NULL, so without access control one anonymous
owner holds every conversation.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import Any, Callable

from backend.core.types import ConversationTurn, Feedback

_TURN_COLUMNS = ("interaction_id, conversation_id, created_at, question, effective_query, resp_mode, version, "
                 "domain, principal, cited_doc_ids")
_FEEDBACK_COLUMNS = ("interaction_id, created_at, rating, comment, expected_answer, query, resp_mode, version, "
                     "domain, principal, cited_doc_ids")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _turn(r: sqlite3.Row) -> ConversationTurn:
    return ConversationTurn(
        interaction_id=r["interaction_id"], conversation_id=r["conversation_id"], question=r["question"],
        effective_query=r["effective_query"], mode=r["resp_mode"], version=r["version"], domain=r["domain"],
        principal=r["principal"], cited_doc_ids=tuple(json.loads(r["cited_doc_ids"])), created_at=r["created_at"],
    )


class SqliteConversationLog:
    _write: Callable[[], AbstractContextManager[sqlite3.Connection]]
    _read: Callable[[], AbstractContextManager[sqlite3.Connection]]

    def record_turn(self, turn: ConversationTurn) -> None:
        with self._write() as con:
            con.execute(
                f"INSERT INTO rag_conversation_turns({_TURN_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (turn.interaction_id, turn.conversation_id, turn.created_at or _now(), turn.question,
                 turn.effective_query, turn.mode, turn.version, turn.domain, turn.principal,
                 json.dumps(list(turn.cited_doc_ids))),
            )

    def conversation_turns(self, conversation_id: str, principal: str | None, limit: int = 50
                           ) -> list[ConversationTurn]:
        with self._read() as con:
            rows = con.execute(
                f"SELECT {_TURN_COLUMNS} FROM rag_conversation_turns WHERE conversation_id = ? AND principal IS ? "
                "ORDER BY id DESC LIMIT ?", (conversation_id, principal, int(limit))).fetchall()
        return [_turn(r) for r in reversed(rows)]

    def get_turn(self, interaction_id: str) -> ConversationTurn | None:
        with self._read() as con:
            row = con.execute(f"SELECT {_TURN_COLUMNS} FROM rag_conversation_turns WHERE interaction_id = ?",
                              (interaction_id,)).fetchone()
        return _turn(row) if row is not None else None

    def delete_conversation(self, conversation_id: str, principal: str | None) -> int:
        with self._write() as con:
            cur = con.execute("DELETE FROM rag_conversation_turns WHERE conversation_id = ? AND principal IS ?",
                              (conversation_id, principal))
            return int(cur.rowcount)

    def record_feedback(self, feedback: Feedback) -> int:
        """One verdict per answer: a new one (a changed vote, a vote with a comment) replaces it."""
        with self._write() as con:
            con.execute("DELETE FROM rag_feedback WHERE interaction_id = ?", (feedback.interaction_id,))
            cur = con.execute(
                f"INSERT INTO rag_feedback({_FEEDBACK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (feedback.interaction_id, feedback.created_at or _now(), feedback.rating, feedback.comment,
                 feedback.expected_answer, feedback.query, feedback.mode, feedback.version, feedback.domain,
                 feedback.principal, json.dumps(list(feedback.cited_doc_ids))),
            )
            return int(cur.lastrowid or 0)

    def feedback(self, limit: int = 1000) -> list[Feedback]:
        with self._read() as con:
            rows = con.execute(f"SELECT id, {_FEEDBACK_COLUMNS} FROM rag_feedback ORDER BY id DESC LIMIT ?",
                               (int(limit),)).fetchall()
        return [_feedback(r) for r in rows]


def _feedback(r: Any) -> Feedback:
    return Feedback(
        interaction_id=r["interaction_id"], rating=r["rating"], comment=r["comment"],
        expected_answer=r["expected_answer"], query=r["query"], mode=r["resp_mode"], version=r["version"],
        domain=r["domain"], principal=r["principal"], cited_doc_ids=tuple(json.loads(r["cited_doc_ids"])),
        created_at=r["created_at"], feedback_id=int(r["id"]),
    )
