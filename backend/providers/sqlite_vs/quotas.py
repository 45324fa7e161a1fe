"""``QuotaCounter`` on the SQLite store: ``rag_quota_counters``, one row per subject and window.

``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` adds one and reads the new count in one
statement inside the write transaction, so two workers (processes on one file) never both see the
same count. Every value is a bound parameter.
"""

from __future__ import annotations

from backend.providers.sqlite_vs.connection import OnDatabase


class SqliteQuotaCounter(OnDatabase):
    """``QuotaCounter``: atomic per-window counters."""

    def count_request(self, subject: str, window_kind: str, window_start: str) -> int:
        with self.db.write() as con:
            row = con.execute(
                "INSERT INTO rag_quota_counters(subject, window_kind, window_start, hits) VALUES (?,?,?,1) "
                "ON CONFLICT(subject, window_kind, window_start) DO UPDATE SET hits = hits + 1 RETURNING hits",
                (subject, window_kind, window_start)).fetchone()
        return int(row[0])

    def prune_quota_counters(self, before: str) -> int:
        with self.db.write() as con:
            return int(con.execute("DELETE FROM rag_quota_counters WHERE window_start < ?", (before,)).rowcount)
