"""``InteractionLog`` and ``ConversationLog`` on the SQLite store: interactions, turns, feedback.

Each over the store's ``SqliteDatabase`` (same file, same connections): the tables are
catalog tables of fixed names (``schema.CATALOG``); every value is a bound parameter.
``principal IS ?`` matches NULL to NULL, so without access control one anonymous
owner holds every conversation.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from typing import Any

from backend.core.types import ConversationTurn, Feedback, Interaction
from backend.providers.sqlite_vs.connection import OnDatabase, now

_TURN_COLUMNS = ("interaction_id, conversation_id, created_at, question, effective_query, resp_mode, version, "
                 "domain, principal, cited_doc_ids")
_FEEDBACK_COLUMNS = ("interaction_id, created_at, rating, comment, expected_answer, query, resp_mode, version, "
                     "domain, principal, cited_doc_ids")


def _now_ms() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _turn(r: sqlite3.Row) -> ConversationTurn:
    return ConversationTurn(
        interaction_id=r["interaction_id"], conversation_id=r["conversation_id"], question=r["question"],
        effective_query=r["effective_query"], mode=r["resp_mode"], version=r["version"], domain=r["domain"],
        principal=r["principal"], cited_doc_ids=tuple(json.loads(r["cited_doc_ids"])), created_at=r["created_at"],
    )


class SqliteInteractionLog(OnDatabase):
    """``InteractionLog``: one row per answered question, with its decision explanation."""

    def record_interaction(self, interaction: Interaction) -> None:
        with self.db.write() as con:
            con.execute(
                "INSERT INTO rag_interactions(created_at, question, resp_mode, used_llm, domain, retrieval_target, "
                "latency_ms, conversation_id, decision_explain, principal) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    interaction.created_at or now(), interaction.question, interaction.resp_mode, interaction.used_llm,
                    interaction.domain, interaction.retrieval_target, interaction.latency_ms,
                    interaction.conversation_id, json.dumps(dict(interaction.decision_explain), default=str),
                    interaction.principal,
                ),
            )

    def interactions(self, limit: int = 100) -> list[Interaction]:
        with self.db.read() as con:
            rows = con.execute("SELECT * FROM rag_interactions ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [
            Interaction(
                question=r["question"], resp_mode=r["resp_mode"], used_llm=r["used_llm"], domain=r["domain"],
                retrieval_target=r["retrieval_target"], latency_ms=r["latency_ms"],
                decision_explain=json.loads(r["decision_explain"]), conversation_id=r["conversation_id"],
                created_at=r["created_at"], principal=r["principal"],
            )
            for r in rows
        ]

    def count_interactions(self) -> int:
        with self.db.read() as con:
            return int(con.execute("SELECT COUNT(*) FROM rag_interactions").fetchone()[0])


class SqliteConversationLog(OnDatabase):
    """``ConversationLog``: turns by conversation and principal, one feedback verdict per answer."""

    def record_turn(self, turn: ConversationTurn) -> None:
        with self.db.write() as con:
            con.execute(
                f"INSERT INTO rag_conversation_turns({_TURN_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (turn.interaction_id, turn.conversation_id, turn.created_at or _now_ms(), turn.question,
                 turn.effective_query, turn.mode, turn.version, turn.domain, turn.principal,
                 json.dumps(list(turn.cited_doc_ids))),
            )

    def conversation_turns(self, conversation_id: str, principal: str | None, limit: int = 50
                           ) -> list[ConversationTurn]:
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT {_TURN_COLUMNS} FROM rag_conversation_turns WHERE conversation_id = ? AND principal IS ? "
                "ORDER BY id DESC LIMIT ?", (conversation_id, principal, int(limit))).fetchall()
        return [_turn(r) for r in reversed(rows)]

    def get_turn(self, interaction_id: str) -> ConversationTurn | None:
        with self.db.read() as con:
            row = con.execute(f"SELECT {_TURN_COLUMNS} FROM rag_conversation_turns WHERE interaction_id = ?",
                              (interaction_id,)).fetchone()
        return _turn(row) if row is not None else None

    def delete_conversation(self, conversation_id: str, principal: str | None) -> int:
        with self.db.write() as con:
            cur = con.execute("DELETE FROM rag_conversation_turns WHERE conversation_id = ? AND principal IS ?",
                              (conversation_id, principal))
            return int(cur.rowcount)

    def record_feedback(self, feedback: Feedback) -> int:
        """One verdict per answer: a new one (a changed vote, a vote with a comment) replaces it."""
        with self.db.write() as con:
            con.execute("DELETE FROM rag_feedback WHERE interaction_id = ?", (feedback.interaction_id,))
            cur = con.execute(
                f"INSERT INTO rag_feedback({_FEEDBACK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (feedback.interaction_id, feedback.created_at or _now_ms(), feedback.rating, feedback.comment,
                 feedback.expected_answer, feedback.query, feedback.mode, feedback.version, feedback.domain,
                 feedback.principal, json.dumps(list(feedback.cited_doc_ids))),
            )
            return int(cur.lastrowid or 0)

    def feedback(self, limit: int = 1000) -> list[Feedback]:
        with self.db.read() as con:
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
