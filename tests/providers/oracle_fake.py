"""A stateful stand-in for the parts of Oracle the index admin depends on.

No Oracle server can run here. ``CatalogDb`` keeps the registry, aliases, history,
version tables (a row count each) and indexes in Python, applies each statement the
adapter sends by its shape, and models the two behaviours the lifecycle code must
get right: **DDL commits implicitly** (before and after the statement) and a
transaction's DML is undone on rollback. ``fail`` injects a driver error on the
first statement that contains a fragment, to simulate a crash at that point.
Every statement is recorded, so tests also count round trips.

Each pooled connection is a session of its own for the series writer lock
(``RAG_SERIES_LOCKS``): ``SELECT ... FOR UPDATE NOWAIT`` / ``WAIT n`` takes the row for
that session or fails with ORA-00054 / ORA-30006 (``WAIT`` really waits, on a
condition, so a second thread queues), and the session's commit (a DDL's implicit ones too),
rollback, return to the pool or ``kill`` (what the server does for a dead client) releases it.
The same rows under ``#ADMIN:<name>`` keys are the administrative lock (``admin_lock``). Each
session's uncommitted DML is its own: one session's commit or rollback leaves another's alone.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
import types
from typing import Any, Callable

import oracledb

from backend.common.config import OracleSettings, OracleVectorIndexSettings
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.store import OracleVectorStore


def ora(code: int, message: str = "") -> oracledb.DatabaseError:
    full = f"ORA-{code:05d}"
    return oracledb.DatabaseError(types.SimpleNamespace(code=code, full_code=full, message=f"{full}: {message}"))


class CatalogDb:
    def __init__(self) -> None:
        self.versions: dict[str, list[Any]] = {}
        self.aliases: dict[str, str] = {}
        self.history: list[tuple[int, str, str, str | None]] = []
        self.tables: dict[str, int] = {}  # version table -> row count
        self.indexes: dict[str, tuple[str, str, str | None]] = {}  # index -> (table, status, domidx_opstatus)
        self.views: dict[str, str] = {}
        self.columns = {"generation", "parent", "index_params", "retrieval"}
        self.foreign: set[str] = set()  # tables of the schema that are not RAG versions
        self.log: list[tuple[str, Any]] = []
        self.undo_by_session: dict[int | None, list[Callable[[], None]]] = {}  # each session's open DML
        self._running = threading.local()  # the session whose statement runs on this thread
        self.failures: dict[str, BaseException] = {}
        self.commits = 0
        self.rowcount: int | None = None  # set by DML whose row count the adapter reads
        self.lock_rows: set[str] = set()  # RAG_SERIES_LOCKS
        self.row_locks: dict[str, int] = {}  # series -> session holding its row
        self.holders: dict[str, str] = {}  # RAG_SERIES_LOCK_HOLDERS
        self.locks_changed = threading.Condition()
        self.sessions = itertools.count(1)

    # --- test controls ------------------------------------------------------------
    def fail(self, fragment: str, error: BaseException) -> None:
        self.failures[fragment] = error

    def statements(self) -> list[str]:
        return [s for k, s in self.log if k in ("execute", "executemany")]

    def add_version(self, name: str, rows: int = 0, model: str = "mini-lm", dim: int = 3, index_type: str = "hnsw",
                    generation: int = 0, params: str | None = None) -> None:
        self.versions[name] = [name, model, dim, "cosine", index_type, None, "2025-01-01", None, generation, None,
                               params, None]
        self.tables[name] = rows

    def kill(self, session: int) -> None:
        """The server noticed the client is gone: the session's row locks are released."""
        self.end_session(session)

    def end_session(self, session: int | None) -> None:
        """Commit, rollback or the session's end: its row locks go."""
        with self.locks_changed:
            for series in [k for k, v in self.row_locks.items() if v == session]:
                del self.row_locks[series]
            self.locks_changed.notify_all()

    def _lock_row(self, statement: str, series: str, session: int | None) -> list[tuple[Any, ...]]:
        wait = re.search(r"FOR UPDATE (?:WAIT (\d+)|NOWAIT)$", statement)
        assert wait is not None, statement
        deadline = time.monotonic() + (int(wait.group(1)) if wait.group(1) else 0)
        with self.locks_changed:
            if series not in self.lock_rows:
                return []
            while self.row_locks.get(series, session) != session:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ora(30006, "resource busy; acquire with WAIT timeout expired") if wait.group(1) \
                        else ora(54, "resource busy and acquire with NOWAIT specified or timeout expired")
                self.locks_changed.wait(left)
            self.row_locks[series] = session  # type: ignore[assignment]
        return [(series,)]

    # --- transactions -------------------------------------------------------------
    @property
    def undo(self) -> list[Callable[[], None]]:
        """The open transaction's undo list of the session running on this thread: a commit or a
        rollback of one session leaves another's uncommitted DML alone, as on a server."""
        return self.undo_by_session.setdefault(getattr(self._running, "session", None), [])

    def commit(self, session: int | None = None) -> None:
        self.undo_by_session.pop(session, None)
        self.commits += 1

    def rollback(self, session: int | None = None) -> None:
        undo = self.undo_by_session.pop(session, [])
        while undo:
            undo.pop()()

    def _set(self, mapping: dict[Any, Any], key: Any, value: Any) -> None:
        old = mapping.get(key, _MISSING)
        mapping[key] = value
        self.undo.append(lambda: mapping.pop(key) if old is _MISSING else mapping.__setitem__(key, old))

    def _pop(self, mapping: dict[Any, Any], key: Any) -> None:
        if key in mapping:
            old = mapping.pop(key)
            self.undo.append(lambda: mapping.__setitem__(key, old))

    # --- statements -----------------------------------------------------------------
    def run(self, statement: str, binds: dict[str, Any], session: int | None = None) -> list[tuple[Any, ...]]:
        self.rowcount = None
        self._running.session = session
        if statement.startswith("SELECT series FROM RAG_SERIES_LOCKS"):
            return self._lock_row(statement, binds["series"], session)
        for fragment, error in list(self.failures.items()):
            if fragment in statement:
                del self.failures[fragment]
                raise error
        ddl = statement.startswith(("CREATE", "DROP", "ALTER"))
        if ddl:
            self.commit(session)  # Oracle commits before a DDL statement ...
            try:
                self._ddl(statement)
            finally:
                self.commit(session)  # ... and after it, whether it worked or not
                self.end_session(session)  # and the commits end the session's row locks
            return []
        return self._dml(statement, binds)

    def _ddl(self, s: str) -> None:
        if m := re.match(r"CREATE TABLE IF NOT EXISTS (\w+) \(", s):
            if m.group(1) not in sql.CATALOG_TABLES:
                self.tables.setdefault(m.group(1), 0)
        elif m := re.match(r"CREATE INDEX IF NOT EXISTS (\w+) ON (\w+)", s):
            self.indexes.setdefault(m.group(1), (m.group(2), "VALID", None))
        elif m := re.match(r"CREATE (?:VECTOR |SEARCH )?INDEX (\w+) ON (\w+)", s):
            if m.group(1) in self.indexes:
                raise ora(955, "name is already used by an existing object")
            domain = "CTXSYS" in s or "SEARCH INDEX" in s
            self.indexes[m.group(1)] = (m.group(2), "VALID", "VALID" if domain else None)
        elif m := re.match(r"DROP INDEX (?:IF EXISTS )?(\w+)", s):
            self.indexes.pop(m.group(1), None)
        elif m := re.match(r"DROP TABLE IF EXISTS (\w+) PURGE", s):
            self.tables.pop(m.group(1), None)
            for index in [i for i, (t, *_) in self.indexes.items() if t == m.group(1)]:
                del self.indexes[index]
        elif m := re.match(r"CREATE OR REPLACE VIEW (\w+) AS .* FROM (\w+)$", s):
            self.views[m.group(1)] = m.group(2)
        elif m := re.match(r"DROP VIEW IF EXISTS (\w+)", s):
            self.views.pop(m.group(1), None)
        elif m := re.match(r"ALTER TABLE RAG_VERSIONS ADD \((\w+) ", s):
            if m.group(1) in self.columns:
                raise ora(1430, "column being added already exists in table")
            self.columns.add(m.group(1))

    def _protected(self) -> list[tuple[str, str, str]]:
        rows = [(v, a, "live") for a, v in self.aliases.items()]
        for alias in self.aliases:
            mine = [h for h in self.history if h[1] == alias]
            if mine and mine[-1][3]:
                rows.append((mine[-1][3], alias, "rollback"))
        return rows

    def _derived_claims(self, names: tuple[str, str]) -> list[tuple[Any, ...]]:
        """``DERIVED_CLAIMS_SQL``: registered versions and aliases of the names, then the columns of
        each table or view so named (a version's, a foreign table's, or a question/summary table's)."""
        rows: list[tuple[Any, ...]] = [(n, None) for n in names if n in self.versions or n in self.aliases]
        for n in names:
            if n in self.foreign:
                cols: tuple[str, ...] = ("EMPNO", "ENAME")
            elif n in self.versions or n in self.views:
                cols = sql.TABLE_COLUMNS
            elif n in self.tables:
                cols = sql.QUESTION_COLUMNS if n.endswith("_QUESTIONS") else sql.SUMMARY_COLUMNS
            else:
                continue
            rows += [(n, c.upper()) for c in cols]
        return rows

    def _dml(self, s: str, b: dict[str, Any]) -> list[tuple[Any, ...]]:
        if s.startswith("MERGE INTO RAG_SERIES_LOCKS "):
            self.lock_rows.add(b["series"])
            return []
        if s.startswith("MERGE INTO RAG_SERIES_LOCK_HOLDERS"):
            self._set(self.holders, b["series"], b["holder"])
            return []
        if s.startswith("SELECT holder FROM RAG_SERIES_LOCK_HOLDERS"):
            return [(self.holders[b["series"]],)] if b["series"] in self.holders else []
        if s.startswith("DELETE FROM RAG_SERIES_LOCK_HOLDERS"):
            if self.holders.get(b["series"]) == b["holder"]:
                self._pop(self.holders, b["series"])
            return []
        if s == sql.FIND_VERSION_SQL:
            return [tuple(self.versions[b["name"]])] if b["name"] in self.versions else []
        if s == sql.RESOLVE_TARGET_SQL:
            name = self.aliases.get(b["target"], b["target"])
            return [tuple(self.versions[name])] if name in self.versions else []
        if s.startswith("SELECT version_name FROM RAG_ALIASES WHERE alias_name"):
            return [(self.aliases[b["alias"]],)] if b["alias"] in self.aliases else []
        if s == sql.PROTECTED_ONE_SQL:
            return [(a, why) for v, a, why in self._protected() if v == b["version"]]
        if s == sql.PROTECTED_SQL:
            return self._protected()
        if s == sql.TABLE_COLUMNS_SQL:
            if b["table_name"] in self.foreign:
                return [("EMPNO",), ("ENAME",)]
            return [(c.upper(),) for c in sql.TABLE_COLUMNS] if b["table_name"] in self.tables else []
        if s == sql.CATALOG_COLUMNS_SQL:  # the modelled catalog is current but for RAG_VERSIONS' ``columns``
            return [("RAG_VERSIONS", c.upper()) for c in sorted(self.columns)] + [("CHAT_INTERACTIONS", "PRINCIPAL")]
        if s == sql.DERIVED_CLAIMS_SQL:
            return self._derived_claims((b["questions"], b["summaries"]))
        if s == sql.INDEX_STATUS_SQL:
            return [(i, st, op) for i, (t, st, op) in self.indexes.items() if t == b["table_name"]]
        if s.startswith("SELECT COUNT(*), COUNT(DISTINCT doc_id)"):
            table = s.rsplit(" ", 1)[-1]
            if table not in self.tables:
                raise ora(942, "table or view does not exist")
            rows = self.tables[table]
            return [(rows, rows, 100 * rows)]  # 100 characters of text and metadata a row
        if m := re.match(r"SELECT COUNT\(\*\) FROM (\w+)$", s):  # sql.row_count_sql
            if m.group(1) not in self.tables:
                raise ora(942, "table or view does not exist")
            return [(self.tables[m.group(1)],)]
        if m := re.match(r"DELETE FROM (\w+)$", s):
            self._set(self.tables, m.group(1), 0)
            return []
        if m := re.match(r"INSERT INTO (\w+) \(chunk_id.* FROM (\w+)$", s):
            if m.group(2) not in self.tables:
                raise ora(942, "table or view does not exist")
            self._set(self.tables, m.group(1), self.tables[m.group(1)] + self.tables[m.group(2)])
            return []
        if s.startswith("INSERT INTO RAG_VERSIONS"):
            if b["name"] in self.versions:
                raise oracledb.IntegrityError(types.SimpleNamespace(code=1, full_code="ORA-00001",
                                                                    message="ORA-00001: unique constraint violated"))
            row = [b["name"], b["embed_model"], b["dimension"], b["distance"], b["index_type"], b["profile"],
                   b["created_at"], None, 0, b["parent"], b["index_params"], b["retrieval"]]
            self._set(self.versions, b["name"], row)
            return []
        if s.startswith("DELETE FROM RAG_VERSIONS WHERE name"):
            self._pop(self.versions, b["name"])
            return []
        if s.startswith("UPDATE RAG_VERSIONS SET evaluation"):
            self.rowcount = int(b["name"] in self.versions)
            if self.rowcount:
                row = list(self.versions[b["name"]])
                row[7] = b["report"]
                self._set(self.versions, b["name"], row)
            return []
        if s.startswith("UPDATE RAG_VERSIONS SET retrieval"):
            row = list(self.versions[b["name"]])
            row[11] = b["retrieval"]
            row[8] += 1
            self._set(self.versions, b["name"], row)
            return []
        if s.startswith("UPDATE RAG_VERSIONS SET index_params"):
            row = list(self.versions[b["name"]])
            row[10] = b["params"]
            self._set(self.versions, b["name"], row)
            return []
        if s == sql.LOCK_ALIAS_VERSIONS_SQL:
            return [(n, self.versions[n][8]) for n in dict.fromkeys((b["version"], b["previous"]))
                    if n in self.versions]
        if s == sql.BUMP_GENERATION_SQL:
            if b["name"] not in self.versions:
                return []
            row = list(self.versions[b["name"]])
            row[8] += 1
            self._set(self.versions, b["name"], row)
            return [(row[1], row[2])]
        if s.startswith("MERGE INTO RAG_ALIASES"):
            self._set(self.aliases, b["alias"], b["version"])
            return []
        if s.startswith("INSERT INTO RAG_ALIAS_HISTORY"):
            self.history.append((len(self.history) + 1, b["alias"], b["version"], b["previous"]))
            self.undo.append(lambda: None if self.history.pop() else None)
            return []
        if "FROM RAG_ALIAS_HISTORY WHERE alias_name = :alias ORDER BY id DESC" in s:
            return [(a, v, p, "2025-01-01", "", 0) for _, a, v, p in reversed(self.history) if a == b["alias"]]
        if s.startswith("SELECT alias_name, version_name FROM RAG_ALIASES"):
            return sorted(self.aliases.items())
        if s.startswith(f"SELECT {sql.VERSION_SELECT} FROM RAG_VERSIONS v ORDER BY"):
            return [tuple(r) for r in self.versions.values()]
        if s.startswith("DELETE FROM RAG_ALIASES"):
            self.rowcount = int(b["alias"] in self.aliases)
            self._pop(self.aliases, b["alias"])
            return []
        return []


_MISSING = object()


class FakeVar:
    """An out bind (``cursor.var``): for DML ``RETURNING ... INTO`` it holds one value per returned row."""

    def __init__(self, kind: Any = None) -> None:
        self.kind = kind
        self.values: list[Any] = []

    def getvalue(self) -> list[Any]:
        return self.values


class FakeCursor:
    """The parts of a python-oracledb cursor the adapter uses, logging every call into
    ``db.log``; a subclass answers statements (``_answer``) the way its fake database does."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.rows: list[tuple[Any, ...]] = []
        self.rowcount = 0
        self.many: list[dict[str, Any]] = []

    def _answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _rowcount(self) -> int:
        return len(self.rows)

    def var(self, kind: Any, size: int = 0) -> FakeVar:
        return FakeVar(kind)

    def execute(self, statement: str, binds: dict[str, Any] | None = None) -> None:
        binds = dict(binds or {})
        self.db.log.append(("execute", statement))
        self.db.log.append(("binds", binds))
        self.rows = list(self._answer(statement, binds))
        outs = [v for v in binds.values() if isinstance(v, FakeVar)]
        for i, out in enumerate(outs):  # RETURNING ... INTO: the answer's rows fill the out binds
            out.values = [r[i] for r in self.rows]
        self.rowcount = self._rowcount()

    def executemany(self, statement: str, rows: list[dict[str, Any]], batcherrors: bool = False,
                    arraydmlrowcounts: bool = False) -> None:
        self.db.log.append(("executemany", statement))
        self.db.log.append(("rows", rows))
        self.many = rows

    def getbatcherrors(self) -> list[Any]:
        return []

    def getarraydmlrowcounts(self) -> list[int]:
        return [1 for _ in self.many]

    def setinputsizes(self, **sizes: Any) -> None:
        self.db.log.append(("inputsizes", sizes))

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class _Cursor(FakeCursor):
    def __init__(self, db: Any, session: int | None = None) -> None:
        super().__init__(db)
        self.session = session

    def _answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return list(self.db.run(statement, binds, self.session))

    def executemany(self, statement: str, rows: list[dict[str, Any]], batcherrors: bool = False,
                    arraydmlrowcounts: bool = False) -> None:
        self.db._running.session = self.session  # DML a subclass records goes to this session's transaction
        super().executemany(statement, rows, batcherrors, arraydmlrowcounts)

    def _rowcount(self) -> int:
        return self.db.rowcount if self.db.rowcount is not None else len(self.rows)


class _Connection:
    def __init__(self, db: CatalogDb) -> None:
        self.db = db
        self.session = next(db.sessions)

    def __enter__(self) -> "_Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.rollback(self.session)  # a connection goes back to the pool without an open transaction
        self.db.end_session(self.session)

    def cursor(self) -> _Cursor:
        return _Cursor(self.db, self.session)

    def commit(self) -> None:
        self.db.log.append(("commit", ""))
        self.db.commit(self.session)
        self.db.end_session(self.session)

    def rollback(self) -> None:
        self.db.log.append(("rollback", ""))
        self.db.rollback(self.session)
        self.db.end_session(self.session)

    def ping(self) -> None:
        self.db.log.append(("ping", ""))


class _Pool:
    def __init__(self, db: CatalogDb) -> None:
        self.db = db

    def acquire(self) -> _Connection:
        return _Connection(self.db)


def catalog_store(db: CatalogDb, **settings: Any) -> OracleVectorStore:
    index = settings.pop("vector_index", {})
    cfg = OracleSettings(vector_index=OracleVectorIndexSettings(**index), **settings)
    return OracleVectorStore(OracleConnector(_Pool(db), where="db.test:1521"), cfg)
