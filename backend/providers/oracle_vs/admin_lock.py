"""Mutual exclusion of the administrative operations on Oracle (review L3).

``create_version``, ``finish_load``, ``drop_version``, ``point_alias``, ``rollback_alias`` and
``drop_alias`` each run DDL, and every DDL statement commits: a row lock taken in the session
that runs the DDL is gone at its first statement. So the lock is a row of ``RAG_SERIES_LOCKS``
under a reserved key (``#ADMIN:<name>``, one per version or alias; ``#`` and ``:`` never occur
in a validated series name) held ``FOR UPDATE WAIT n`` by a *second* pooled connection that
never commits, while the operation works on its own connection; leaving rolls that session
back (or the server does, for a dead client). No ``DBMS_LOCK`` grant is needed.

Order, so two operations never wait on each other in a circle: an alias's key before any
version's, the versions' keys in name order. Two operations on disjoint names do not wait.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from backend.common.errors import StoreError
from backend.providers.oracle_vs.connection import OracleConnector, map_error
from backend.providers.oracle_vs.series_lock import BUSY, MAX_WAIT_S, REGISTER_SQL, _code, lock_sql

PREFIX = "#ADMIN:"
#: how long an administrative operation waits for another on the same name (a vector index build
#: of a large version can take hours); a dead holder's lock goes with its session
WAIT_S = float(MAX_WAIT_S)


def admin_key(name: str) -> str:
    return f"{PREFIX}{name}"


class AdminLock:
    """Holds the keys taken so far on one pooled session; ``add`` takes more (in the caller's order)."""

    def __init__(self, db: OracleConnector, action: str, wait_s: float = WAIT_S) -> None:
        self._db, self._action, self._wait_s = db, action, wait_s
        self._stack = ExitStack()
        self._con: Any = None
        self.names: list[str] = []

    def __enter__(self) -> "AdminLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def add(self, *names: str | None) -> "AdminLock":
        import oracledb

        for name in names:
            if name is None or name in self.names:
                continue
            binds = {"series": admin_key(name)}
            try:  # the row exists once: a committed MERGE, from another session than the holder
                with self._db.transaction(f"registering the lock of {name} for {self._action}") as con:
                    con.cursor().execute(REGISTER_SQL, binds)
            except StoreError as exc:
                if exc.context.get("code") != "ORA-00001":  # registered by another session first: fine
                    raise
            if self._con is None:
                self._con = self._stack.enter_context(self._db.connection(f"locking {name} for {self._action}"))
            try:
                self._con.cursor().execute(lock_sql(self._wait_s), binds)
            except oracledb.DatabaseError as exc:
                self.release()
                if _code(exc) not in BUSY:
                    raise map_error(exc, self._db.where, f"locking {name} for {self._action}") from exc
                raise StoreError(f"{self._action}: another administrative operation on {name} held it for "
                                 f"{self._wait_s:g} s; try again when it has finished", name=name) from None
            except BaseException:
                self.release()
                raise
            self.names.append(name)
        return self

    def release(self) -> None:
        con, self._con = self._con, None
        if con is None:
            return
        import oracledb

        try:
            con.rollback()  # ends the transaction that holds the row locks
        except oracledb.Error:
            pass  # a dead session: the server has released its locks already
        finally:
            self.names = []
            self._stack.close()


def admin_lock(db: OracleConnector, action: str, *, aliases: tuple[str | None, ...] = (),
               versions: tuple[str | None, ...] = (), wait_s: float = WAIT_S) -> AdminLock:
    """Take the keys of ``aliases`` then of ``versions`` (sorted); use as a context manager."""
    lock = AdminLock(db, action, wait_s)
    return lock.add(*aliases, *sorted(v for v in versions if v is not None))
