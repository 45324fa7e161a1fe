"""``InteractionLog`` and ``ConversationLog`` on Oracle: CHAT_INTERACTIONS, RAG_CONVERSATION_TURNS
and RAG_FEEDBACK (``sql.CATALOG_DDL``).

Each over the store's ``OracleConnector`` (the same pool as the other ports). Table names are fixed catalog names; every value is a
named bind. Oracle keeps '' as NULL, so "no principal" is matched with ``IS NULL``
explicitly rather than ``=``.
"""

from __future__ import annotations

import json
from typing import Any

from backend.core.types import ConversationTurn, Feedback, Interaction
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OnConnector
from backend.providers.oracle_vs.versions import json_safe, json_value, now_iso, oracledb_json

_TURN_COLUMNS = ("interaction_id, conversation_id, created_at, question, effective_query, resp_mode, version, "
                 "domain_key, principal, cited_doc_ids")
_FEEDBACK_COLUMNS = ("interaction_id, created_at, rating, user_comment, expected_answer, query_text, resp_mode, "
                     "version, domain_key, principal, cited_doc_ids")
#: the owner condition: the same principal, or no principal on both sides
OWNER = "(principal = :principal OR (principal IS NULL AND :principal IS NULL))"

INSERT_TURN_SQL = (f"INSERT INTO RAG_CONVERSATION_TURNS ({_TURN_COLUMNS}) VALUES (:interaction_id, :conversation_id, "
                   ":created_at, :question, :effective_query, :resp_mode, :version, :domain_key, :principal, "
                   ":cited_doc_ids)")
CONVERSATION_SQL = (f"SELECT {_TURN_COLUMNS} FROM RAG_CONVERSATION_TURNS WHERE conversation_id = :conversation_id "
                    f"AND {OWNER} ORDER BY id DESC FETCH FIRST :n ROWS ONLY")
TURN_SQL = f"SELECT {_TURN_COLUMNS} FROM RAG_CONVERSATION_TURNS WHERE interaction_id = :interaction_id"
DELETE_CONVERSATION_SQL = f"DELETE FROM RAG_CONVERSATION_TURNS WHERE conversation_id = :conversation_id AND {OWNER}"
INSERT_FEEDBACK_SQL = (f"INSERT INTO RAG_FEEDBACK ({_FEEDBACK_COLUMNS}) VALUES (:interaction_id, :created_at, :rating, "
                       ":user_comment, :expected_answer, :query_text, :resp_mode, :version, :domain_key, :principal, "
                       ":cited_doc_ids) RETURNING id INTO :feedback_id")
DELETE_FEEDBACK_SQL = "DELETE FROM RAG_FEEDBACK WHERE interaction_id = :interaction_id"
FEEDBACK_SQL = f"SELECT id, {_FEEDBACK_COLUMNS} FROM RAG_FEEDBACK ORDER BY id DESC FETCH FIRST :n ROWS ONLY"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value.read() if hasattr(value, "read") else value)


def _ids(value: Any) -> tuple[str, ...]:
    text = _text(value)
    return tuple(json.loads(text)) if text else ()


def _turn(r: tuple[Any, ...]) -> ConversationTurn:
    return ConversationTurn(
        interaction_id=r[0], conversation_id=r[1], created_at=r[2], question=_text(r[3]) or "",
        effective_query=_text(r[4]) or "", mode=r[5], version=r[6], domain=r[7], principal=r[8],
        cited_doc_ids=_ids(r[9]),
    )


class OracleInteractionLog(OnConnector):
    """``InteractionLog``: one CHAT_INTERACTIONS row per answered question."""

    # --- interactions (CHAT_INTERACTIONS, RESP_MODE per seed 004) ---------------------
    def record_interaction(self, interaction: Interaction) -> None:
        with self.connector.transaction("recording an interaction") as con:
            cur = con.cursor()
            cur.setinputsizes(decision_explain=oracledb_json())
            cur.execute(
                "INSERT INTO CHAT_INTERACTIONS (created_at, question, resp_mode, used_llm, domain_key, retrieval_target, "
                "latency_ms, conversation_id, decision_explain, principal) VALUES (:created_at, :question, :resp_mode, "
                ":used_llm, :domain_key, :retrieval_target, :latency_ms, :conversation_id, :decision_explain, "
                ":principal)",
                {"created_at": interaction.created_at or now_iso(), "question": interaction.question,
                 "resp_mode": interaction.resp_mode, "used_llm": interaction.used_llm, "domain_key": interaction.domain,
                 "retrieval_target": interaction.retrieval_target, "latency_ms": float(interaction.latency_ms),
                 "conversation_id": interaction.conversation_id,
                 "decision_explain": json_safe(interaction.decision_explain), "principal": interaction.principal},
            )

    def interactions(self, limit: int = 100) -> list[Interaction]:
        with self.connector.connection("reading interactions") as con:
            cur = con.cursor()
            cur.execute(
                "SELECT question, resp_mode, used_llm, domain_key, retrieval_target, latency_ms, "
                f"{sql.json_text('decision_explain', 'decision_explain')}, "
                "conversation_id, created_at, principal FROM CHAT_INTERACTIONS ORDER BY id DESC FETCH FIRST :n ROWS ONLY",
                {"n": int(limit)})
            rows = cur.fetchall()
        return [Interaction(question=_text(r[0]) or "", resp_mode=r[1], used_llm=_text(r[2]) or "", domain=r[3], retrieval_target=r[4],
                            latency_ms=float(r[5]), decision_explain=json_value(r[6]) or {}, conversation_id=r[7],
                            created_at=r[8], principal=r[9]) for r in rows]

    def count_interactions(self) -> int:
        with self.connector.connection("counting interactions") as con:
            cur = con.cursor()
            cur.execute("SELECT COUNT(*) FROM CHAT_INTERACTIONS")
            return int(cur.fetchone()[0])


class OracleConversationLog(OnConnector):
    """``ConversationLog``: turns by conversation and owner, one feedback verdict per answer."""

    def record_turn(self, turn: ConversationTurn) -> None:
        with self.connector.transaction("recording a conversation turn") as con:
            con.cursor().execute(INSERT_TURN_SQL, {
                "interaction_id": turn.interaction_id, "conversation_id": turn.conversation_id,
                "created_at": turn.created_at or now_iso(), "question": turn.question,
                "effective_query": turn.effective_query, "resp_mode": turn.mode, "version": turn.version,
                "domain_key": turn.domain, "principal": turn.principal,
                "cited_doc_ids": json.dumps(list(turn.cited_doc_ids)),
            })

    def conversation_turns(self, conversation_id: str, principal: str | None, limit: int = 50
                           ) -> list[ConversationTurn]:
        with self.connector.connection("reading a conversation") as con:
            cur = con.cursor()
            cur.execute(CONVERSATION_SQL, {"conversation_id": conversation_id, "principal": principal, "n": int(limit)})
            rows = cur.fetchall()
        return [_turn(r) for r in reversed(rows)]

    def get_turn(self, interaction_id: str) -> ConversationTurn | None:
        with self.connector.connection("reading a conversation turn") as con:
            cur = con.cursor()
            cur.execute(TURN_SQL, {"interaction_id": interaction_id})
            row = cur.fetchone()
        return _turn(row) if row is not None else None

    def delete_conversation(self, conversation_id: str, principal: str | None) -> int:
        with self.connector.transaction("deleting a conversation") as con:
            cur = con.cursor()
            cur.execute(DELETE_CONVERSATION_SQL, {"conversation_id": conversation_id, "principal": principal})
            return int(cur.rowcount or 0)

    def record_feedback(self, feedback: Feedback) -> int:
        import oracledb

        with self.connector.transaction("recording feedback") as con:
            cur = con.cursor()
            out = cur.var(oracledb.DB_TYPE_NUMBER)
            # one verdict per answer: a new one (a changed vote) replaces it, in the same transaction
            cur.execute(DELETE_FEEDBACK_SQL, {"interaction_id": feedback.interaction_id})
            cur.execute(INSERT_FEEDBACK_SQL, {
                "interaction_id": feedback.interaction_id, "created_at": feedback.created_at or now_iso(),
                "rating": feedback.rating, "user_comment": feedback.comment,
                "expected_answer": feedback.expected_answer, "query_text": feedback.query,
                "resp_mode": feedback.mode, "version": feedback.version, "domain_key": feedback.domain,
                "principal": feedback.principal, "cited_doc_ids": json.dumps(list(feedback.cited_doc_ids)),
                "feedback_id": out,
            })
            values = out.getvalue() or [0]
            return int(values[0])

    def feedback(self, limit: int = 1000) -> list[Feedback]:
        with self.connector.connection("reading feedback") as con:
            cur = con.cursor()
            cur.execute(FEEDBACK_SQL, {"n": int(limit)})
            rows = cur.fetchall()
        return [Feedback(
            feedback_id=int(r[0]), interaction_id=r[1], created_at=r[2], rating=r[3], comment=_text(r[4]),
            expected_answer=_text(r[5]), query=_text(r[6]) or "", mode=r[7], version=r[8], domain=r[9],
            principal=r[10], cited_doc_ids=_ids(r[11]),
        ) for r in rows]
