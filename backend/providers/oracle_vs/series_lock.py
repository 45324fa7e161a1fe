"""The series writer lock on Oracle: a row lock held by a session of its own for the whole run.

``RAG_SERIES_LOCKS`` has one row per series. A run registers the row (a committed MERGE that
inserts it once), then takes ``SELECT ... FOR UPDATE NOWAIT`` (refuse) or ``WAIT n`` on it
in a session it keeps, and never commits there: the lock lasts until ``release`` rolls that
session back, or until the session dies. Oracle releases a dead session's row locks itself
(PMON, once the server notices the client is gone: at once for a killed process whose socket
closes, within ``SQLNET.EXPIRE_TIME`` for a vanished host), so a crashed run never keeps the
series. No ``DBMS_LOCK`` grant is needed: only the schema's own table.

Who holds it is committed by the holder into ``RAG_SERIES_LOCK_HOLDERS`` from another session
(a locked row cannot carry uncommitted news to others), and removed on release; a refused run
reads it for its message. Series names are validated identifiers and every value is bound.
"""

from __future__ import annotations

import math
from contextlib import ExitStack
from typing import Any

import structlog

from backend.common.errors import SeriesLocked, StoreError
from backend.core.types import LockHolder
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OracleConnector, map_error

log = structlog.get_logger(__name__)

REGISTER_SQL = ("MERGE INTO RAG_SERIES_LOCKS l USING (SELECT :series AS series FROM SYS.DUAL) s "
                "ON (l.series = s.series) WHEN NOT MATCHED THEN INSERT (series) VALUES (s.series)")
SAY_HOLDER_SQL = ("MERGE INTO RAG_SERIES_LOCK_HOLDERS h USING (SELECT :series AS series, :holder AS holder FROM SYS.DUAL) s "
                  "ON (h.series = s.series) WHEN MATCHED THEN UPDATE SET h.holder = s.holder "
                  "WHEN NOT MATCHED THEN INSERT (series, holder) VALUES (s.series, s.holder)")
HOLDER_SQL = "SELECT holder FROM RAG_SERIES_LOCK_HOLDERS WHERE series = :series"
FORGET_HOLDER_SQL = "DELETE FROM RAG_SERIES_LOCK_HOLDERS WHERE series = :series AND holder = :holder"
#: ORA-00054 (NOWAIT: resource busy), ORA-30006 (WAIT n: timeout expired): someone else holds the row
BUSY = frozenset({54, 30006})
#: the most ``WAIT n`` this adapter asks for (Oracle accepts up to 2^31 seconds; a day is plenty)
MAX_WAIT_S = 86_400


def lock_sql(wait_s: float) -> str:
    """Pure: the locking statement. ``WAIT`` takes a literal integer (no bind), so it is an int here."""
    seconds = min(MAX_WAIT_S, math.ceil(max(0.0, wait_s)))
    return ("SELECT series FROM RAG_SERIES_LOCKS WHERE series = :series FOR UPDATE "
            + (f"WAIT {int(seconds)}" if seconds > 0 else "NOWAIT"))


def _code(exc: BaseException) -> int:
    err = exc.args[0] if exc.args else None
    return int(getattr(err, "code", 0) or 0)


class OracleSeriesLease:
    def __init__(self, series: str, holder: LockHolder, db: OracleConnector, session: ExitStack, con: Any) -> None:
        self.series, self.holder = series, holder
        self._db, self._session, self._con = db, session, con

    def release(self) -> None:
        if self._con is None:
            return
        con, self._con = self._con, None
        try:
            with self._db.transaction(f"releasing the lock of series {self.series}") as other:
                other.cursor().execute(FORGET_HOLDER_SQL, {"series": self.series, "holder": self.holder.to_json()})
        except StoreError as exc:  # the record is advice only; the lock itself goes with the rollback
            log.warning("series_lock.holder_not_cleared", series=self.series, error=exc.user_message)
        import oracledb

        try:
            con.rollback()  # ends the transaction that holds the row lock
        except oracledb.Error as exc:  # a dead session: the server has released its locks already
            log.warning("series_lock.rollback_failed", series=self.series, error=str(exc))
        finally:
            self._session.close()  # back to the pool


class OracleSeriesLocks:
    """``SeriesLocking`` over the store's connector."""

    def __init__(self, connector: OracleConnector) -> None:
        self._db = connector

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> OracleSeriesLease:
        import oracledb

        series = sql.oracle_name(series, "index series")
        binds = {"series": series}
        try:
            with self._db.transaction(f"registering series {series}") as con:
                con.cursor().execute(REGISTER_SQL, binds)
        except StoreError as exc:
            if exc.context.get("code") != "ORA-00001":  # another run registered it first: fine
                raise
        session = ExitStack()
        con = session.enter_context(self._db.connection(f"locking series {series}"))
        try:
            con.cursor().execute(lock_sql(wait_s), binds)
        except oracledb.DatabaseError as exc:
            session.close()
            if _code(exc) not in BUSY:
                raise map_error(exc, self._db.where, f"locking series {series}") from exc
            other = self.holder(series)
            raise SeriesLocked(f"series {series} is locked by {other.describe() if other else 'another run'}",
                               series=series, holder=other) from None
        except BaseException:
            session.close()
            raise
        try:
            with self._db.transaction(f"recording the holder of series {series}") as other_con:
                other_con.cursor().execute(SAY_HOLDER_SQL, {**binds, "holder": holder.to_json()})
        except BaseException:
            try:
                con.rollback()
            finally:
                session.close()
            raise
        return OracleSeriesLease(series, holder, self._db, session, con)

    def holder(self, series: str) -> LockHolder | None:
        with self._db.connection(f"reading the holder of series {series}") as con:
            cur = con.cursor()
            cur.execute(HOLDER_SQL, {"series": series})
            row = cur.fetchone()
        return LockHolder.from_json(row[0] if row else None)
