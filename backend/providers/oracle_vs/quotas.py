"""``QuotaCounter`` on Oracle: RAG_QUOTA_COUNTERS (``sql.CATALOG_DDL``), one row per subject and window.

One transaction adds one with a ``MERGE`` (which locks the row it updates, so two workers queue on
it) and reads the count back under that lock. Two workers inserting the same new row at once: one
gets ORA-00001 and merges again (then the row exists and is updated). The table name is a fixed
catalog name; every value is a named bind.
"""

from __future__ import annotations

import oracledb

from backend.providers.oracle_vs.connection import OnConnector

MERGE_QUOTA_SQL = (
    "MERGE INTO RAG_QUOTA_COUNTERS q USING (SELECT :subject AS subject, :window_kind AS window_kind, "
    ":window_start AS window_start FROM SYS.DUAL) s ON (q.subject = s.subject AND q.window_kind = s.window_kind "
    "AND q.window_start = s.window_start) WHEN MATCHED THEN UPDATE SET q.hits = q.hits + 1 "
    "WHEN NOT MATCHED THEN INSERT (subject, window_kind, window_start, hits) "
    "VALUES (s.subject, s.window_kind, s.window_start, 1)"
)
QUOTA_HITS_SQL = ("SELECT hits FROM RAG_QUOTA_COUNTERS WHERE subject = :subject AND window_kind = :window_kind "
                  "AND window_start = :window_start")
PRUNE_QUOTA_SQL = "DELETE FROM RAG_QUOTA_COUNTERS WHERE window_start < :before"


class OracleQuotaCounter(OnConnector):
    """``QuotaCounter``: counters updated under the row lock of one transaction."""

    def count_request(self, subject: str, window_kind: str, window_start: str) -> int:
        binds = {"subject": subject, "window_kind": window_kind, "window_start": window_start}
        for attempt in (1, 2):
            try:
                with self.connector.transaction("counting a request against its quota") as con:
                    cur = con.cursor()
                    cur.execute(MERGE_QUOTA_SQL, binds)
                    cur.execute(QUOTA_HITS_SQL, binds)
                    row = cur.fetchone()
                    return int(row[0]) if row else 1
            except oracledb.IntegrityError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def prune_quota_counters(self, before: str) -> int:
        with self.connector.transaction("pruning quota counters") as con:
            cur = con.cursor()
            cur.execute(PRUNE_QUOTA_SQL, {"before": before})
            return int(cur.rowcount or 0)
