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

What else it models of Oracle, because defects slipped through where it did not (issue 30):

- **Object namespaces.** Tables and views share one namespace per schema (a view named like a table
  cannot be created: ORA-00955), indexes have their own (an index may share a table's name).
  ``CREATE TABLE IF NOT EXISTS`` keeps a table of the name as it is, rows included; ``CREATE INDEX
  IF NOT EXISTS`` keeps an index of the name whatever table it is on; without ``IF NOT EXISTS`` a
  taken name is ORA-00955, and ``DROP INDEX`` of a missing index ORA-01418. (Assumed, not verified
  on a server: ``CREATE TABLE IF NOT EXISTS`` over a *view* of the name is ORA-00955, and ``DROP
  TABLE IF EXISTS`` of a view's name drops nothing.)
- **Name resolution.** An unqualified name is looked up in the user's schema first, then among the
  public synonyms: a local table ``DUAL`` is what ``FROM dual`` reads (a ``MERGE`` whose source is an
  empty local ``DUAL`` merges nothing; one with several rows fails with ORA-30926), and a local
  ``USER_TABLES`` / ``ALL_*`` shadows the dictionary view (ORA-00904 on its columns), and a local
  ``PLAN_TABLE`` the public synonym EXPLAIN PLAN writes to (review 4, N4). ``SYS.DUAL``
  and ``SYS.USER_*`` are never shadowed.
- **Read committed and row locks on the registry.** An ``UPDATE`` of a ``RAG_VERSIONS`` row, or
  ``SELECT ... FOR UPDATE`` of it, locks the row for the session until it commits or rolls back;
  another session's lock request waits. The updated row is the session's own until it commits:
  other sessions read the committed row (so a promotion reading the generation while an ingest is
  under way sees the committed value, as on a server). Inserted and deleted registry rows, aliases
  and history are still seen by every session at once (the tests so far need no more).
- **DDL waits on DML locks.** ``ALTER TABLE RAG_VERSIONS`` while another session holds a registry
  row lock waits up to the session's ``DDL_LOCK_TIMEOUT`` (``ALTER SESSION SET DDL_LOCK_TIMEOUT``,
  0 by default: NOWAIT), then fails with ORA-00054.
- **Injected errors.** ``fail_on(pattern, ora_code, times=1)`` raises ``ORA-<code>`` at the next
  ``times`` statements matching the regular expression ``pattern`` (``execute`` or ``executemany``;
  an ``executemany`` sent with ``batcherrors=True`` gets it as a batch error of row ``row``
  instead, as the driver reports it). ORA-00001 is an ``IntegrityError``, as in python-oracledb.
- **Rows and drops.** An ``INSERT`` of chunks adds its rows (less its batch errors) to the version
  table's count, in the session's transaction; a statement that names a table dropped since (a
  reader that resolved a version just before gc dropped it) fails with ORA-00942. Searches answer
  no rows: the stand-in ranks nothing.
- **Races.** ``race_at(prefix, racer)`` runs ``racer`` on a thread when the first statement starting
  with ``prefix`` arrives (``occurrence=n``: the n-th) and lets it run up to ``window`` seconds before that statement goes on
  (``finish_race`` joins it and re-raises nothing: read ``race``).
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
from backend.providers.oracle_vs import audit as audit_sql
from backend.providers.oracle_vs import quotas as quota_sql
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.store import OracleVectorStore


#: The driver's messages for the errors tests inject with ``fail_on``.
MESSAGES = {1: "unique constraint violated", 54: "resource busy and acquire with NOWAIT specified or timeout expired",
            60: "deadlock detected while waiting for resource", 942: "table or view does not exist"}


def ora(code: int, message: str = "") -> oracledb.DatabaseError:
    full = f"ORA-{code:05d}"
    kind = oracledb.IntegrityError if code == 1 else oracledb.DatabaseError
    return kind(types.SimpleNamespace(code=code, full_code=full, message=f"{full}: {message or MESSAGES.get(code, '')}"))


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
        self.audit: list[tuple[Any, ...]] = []  # RAG_AUDIT_LOG rows: (id, created_at, principal, ..., detail)
        self.quota_hits: dict[tuple[str, str, str], int] = {}  # RAG_QUOTA_COUNTERS
        self.row_locks: dict[str, int] = {}  # series -> session holding its row
        self.holders: dict[str, str] = {}  # RAG_SERIES_LOCK_HOLDERS
        self.locks_changed = threading.Condition()
        self.sessions = itertools.count(1)
        self.injected: list[list[Any]] = []  # [regex, ORA code, times left, batch row] (``fail_on``)
        self.version_locks: dict[str, int | None] = {}  # RAG_VERSIONS row -> session holding its lock
        self.waiting_for: dict[int | None, str] = {}  # session -> the RAG_VERSIONS row it waits for
        self.pending: dict[int | None, dict[str, list[Any]]] = {}  # each session's uncommitted registry updates
        self.ddl_lock_timeout: dict[int | None, int] = {}  # ALTER SESSION SET DDL_LOCK_TIMEOUT, per session
        self.lock_wait_s = 10.0  # a server waits for a row lock forever; the stand-in fails the test instead
        self.dropped: set[str] = set()  # tables dropped since: a statement that still names one gets ORA-00942
        self.race: dict[str, Any] = {}
        self._race_at: tuple[str, Callable[[], Any], float] | None = None
        self._race_thread: threading.Thread | None = None

    # --- test controls ------------------------------------------------------------
    def fail(self, fragment: str, error: BaseException) -> None:
        self.failures[fragment] = error

    def fail_on(self, pattern: str, ora_code: int, times: int = 1, *, row: int = 0) -> None:
        """``ORA-<ora_code>`` at the next ``times`` statements matching ``pattern`` (a regular expression
        searched in the statement); for an ``executemany`` with ``batcherrors`` it is row ``row``'s error."""
        self.injected.append([re.compile(pattern), ora_code, times, row])

    def _injected(self, statement: str) -> tuple[int, int] | None:
        """(ORA code, batch row) injected for this statement, counting it down."""
        for entry in self.injected:
            regex, code, left, row = entry
            if left > 0 and regex.search(statement):
                entry[2] -= 1
                return code, row
        return None

    def race_at(self, prefix: str, racer: Callable[[], Any], window: float = 0.5, occurrence: int = 1) -> None:
        """Run ``racer`` on a thread at the ``occurrence``-th statement starting with ``prefix``; that
        statement waits up to ``window`` seconds for it (unlocked, a racer finishes inside the window)."""
        self._race_at = (prefix, racer, window)
        self._race_skip = occurrence - 1

    def finish_race(self) -> dict[str, Any]:
        """Join the racer (``race["value"]`` or ``race["error"]``; empty if it never started)."""
        if self._race_thread is not None:
            self._race_thread.join(self.lock_wait_s)
            assert not self._race_thread.is_alive(), "the racer is still waiting"
        return self.race

    def _start_race(self, statement: str) -> None:
        if self._race_at is None or not statement.startswith(self._race_at[0]):
            return
        if getattr(self, "_race_skip", 0) > 0:
            self._race_skip -= 1
            return
        _, racer, window = self._race_at
        self._race_at = None

        def go() -> None:
            try:
                self.race["value"] = racer()
            except Exception as exc:  # noqa: BLE001 - the test reads it
                self.race["error"] = exc

        self._race_thread = threading.Thread(target=go)
        self._race_thread.start()
        self._race_thread.join(window)

    def statements(self) -> list[str]:
        return [s for k, s in self.log if k in ("execute", "executemany")]

    def add_version(self, name: str, rows: int = 0, model: str = "mini-lm", dim: int = 3, index_type: str = "hnsw",
                    generation: int = 0, params: str | None = None) -> None:
        self.versions[name] = [name, model, dim, "cosine", index_type, None, "2025-01-01", None, generation, None,
                               params, None]
        self.tables[name] = rows
        for derived in (f"{name}_QUESTIONS", f"{name}_SUMMARIES"):  # its enrichment tables, as create_version makes
            self.tables.setdefault(derived, 0)

    def connect(self) -> "_Connection":
        """A session of its own, as another client (an ingest in another process) would have."""
        return _Connection(self)

    def kill(self, session: int) -> None:
        """The server noticed the client is gone: the session's row locks are released."""
        self.end_session(session)

    def end_session(self, session: int | None) -> None:
        """Commit, rollback or the session's end: its row locks go."""
        with self.locks_changed:
            for series in [k for k, v in self.row_locks.items() if v == session]:
                del self.row_locks[series]
            for name in [k for k, v in self.version_locks.items() if v == session]:
                del self.version_locks[name]
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
        for name, row in self.pending.pop(session, {}).items():
            if name in self.versions:
                self.versions[name] = row
        self.commits += 1

    def rollback(self, session: int | None = None) -> None:
        self.pending.pop(session, None)
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

    # --- the registry rows: read committed, row locks -----------------------------------
    @property
    def _session(self) -> int | None:
        return getattr(self._running, "session", None)

    def _visible(self, name: str) -> list[Any] | None:
        """The row as this session sees it: its own uncommitted update, else the committed row."""
        if name not in self.versions:
            return None
        return self.pending.get(self._session, {}).get(name, self.versions[name])

    def _lock_version(self, name: str) -> None:
        """Lock a registry row for this session, waiting while another session holds it. A wait that
        closes a cycle (this session waits for a row held by a session that waits, through others, for
        a row this session holds) is a deadlock: Oracle rolls back that statement with ORA-00060
        (Concepts, *Deadlocks*), so the stand-in raises it to the session that closed the cycle."""
        session = self._session
        deadline = time.monotonic() + self.lock_wait_s
        with self.locks_changed:
            try:
                while self.version_locks.get(name, session) != session:
                    self.waiting_for[session] = name
                    if self._closes_cycle(session, name):
                        raise ora(60)
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise AssertionError(f"the stand-in waited {self.lock_wait_s}s for the RAG_VERSIONS row {name} "
                                             "(a server would wait for ever): a lock is never released")
                    self.locks_changed.wait(min(left, 0.05))
            finally:
                self.waiting_for.pop(session, None)
            self.version_locks[name] = session
        self._start_race(f"#ROW LOCK {name}")  # a racer may run between the rows one statement locks

    def _closes_cycle(self, session: int | None, name: str) -> bool:
        holder, seen = self.version_locks.get(name), set()
        while holder is not None and holder not in seen:
            if holder == session:
                return True
            seen.add(holder)
            wanted = self.waiting_for.get(holder)
            holder = self.version_locks.get(wanted) if wanted is not None else None
        return False

    def _update_version(self, name: str, change: Callable[[list[Any]], None]) -> list[Any] | None:
        """An UPDATE of one registry row: lock it, change this session's copy (committed on commit)."""
        if name not in self.versions:
            return None
        self._lock_version(name)
        row = list(self._visible(name) or [])
        change(row)
        self.pending.setdefault(self._session, {})[name] = row
        return row

    def _ddl_waits_for(self, statement: str, session: int | None) -> None:
        """DDL on ``RAG_VERSIONS`` needs its table lock: it waits ``DDL_LOCK_TIMEOUT`` seconds for the
        row locks of other sessions, then fails with ORA-00054."""
        if not statement.startswith("ALTER TABLE RAG_VERSIONS"):
            return
        deadline = time.monotonic() + self.ddl_lock_timeout.get(session, 0)
        with self.locks_changed:
            while any(v != session for v in self.version_locks.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ora(54)
                self.locks_changed.wait(left)

    # --- namespaces and name resolution ----------------------------------------------
    def kind(self, name: str) -> str | None:
        """What a name is in the user's schema's table-and-view namespace (indexes have their own)."""
        if name in self.views:
            return "VIEW"
        if name in self.tables or name in self.foreign or name in sql.CATALOG_TABLES:
            return "TABLE"
        return None

    def _shadowed(self, statement: str) -> int | None:
        """Rows of a local ``DUAL`` an unqualified ``FROM dual`` reads (None when it reads SYS.DUAL);
        a local table named like a dictionary view read unqualified is ORA-00904 (not its columns)."""
        rows = None
        for m in re.finditer(r"\b(?:FROM|INTO)\s+(SYS\.)?(DUAL|USER_\w+|ALL_\w+|PLAN_TABLE)\b", statement,
                             re.IGNORECASE):
            name = m.group(2).upper()
            if m.group(1) or self.kind(name) is None:
                continue  # SYS's object, or the public synonym
            if name != "DUAL":
                raise ora(904, f'"{name}": invalid identifier (the local table {name} shadows the dictionary view)')
            rows = self.tables.get("DUAL", 0)
        return rows

    # --- statements -----------------------------------------------------------------
    def run(self, statement: str, binds: dict[str, Any], session: int | None = None) -> list[tuple[Any, ...]]:
        self.rowcount = None
        self._running.session = session
        self._start_race(statement)
        if m := re.fullmatch(r"ALTER SESSION SET DDL_LOCK_TIMEOUT = (\d+)", statement):
            self.ddl_lock_timeout[session] = int(m.group(1))  # ALTER SESSION does not commit
            return []
        if statement.startswith("SELECT series FROM RAG_SERIES_LOCKS"):
            return self._lock_row(statement, binds["series"], session)
        for fragment, error in list(self.failures.items()):
            if fragment in statement:
                del self.failures[fragment]
                raise error
        ddl = statement.startswith(("CREATE", "DROP", "ALTER"))
        injected = self._injected(statement)
        if injected and not ddl:
            raise ora(injected[0])
        if ddl:
            self.commit(session)  # Oracle commits before a DDL statement ...
            try:
                if injected:
                    raise ora(injected[0])
                self._ddl_waits_for(statement, session)
                self._ddl(statement)
            finally:
                self.commit(session)  # ... and after it, whether it worked or not
                self.end_session(session)  # and the commits end the session's row locks
            return []
        if any(self.kind(t) is None and re.search(rf"\b(?:FROM|JOIN|INTO|UPDATE) {t}\b", statement)
               for t in self.dropped):
            raise ora(942)  # a reader that resolved the version before gc dropped its table
        dual_rows = self._shadowed(statement)
        if statement.startswith("MERGE") and dual_rows is not None and dual_rows != 1:
            if dual_rows > 1:
                raise ora(30926, "unable to get a stable set of rows in the source tables")
            self.rowcount = 0
            return []  # the source (a local, empty DUAL) has no row: nothing is merged
        return self._dml(statement, binds)

    def _ddl(self, s: str) -> None:
        if m := re.match(r"CREATE TABLE (IF NOT EXISTS )?(\w+) \(", s):
            name, kind = m.group(2), self.kind(m.group(2))
            if kind == "TABLE" and m.group(1):
                return  # IF NOT EXISTS: the table of the name stays as it is, rows included
            if kind is not None:
                raise ora(955, "name is already used by an existing object")
            if name not in sql.CATALOG_TABLES:
                self.tables[name] = 0
        elif m := re.match(r"CREATE (VECTOR |SEARCH |MULTIVALUE |UNIQUE )?INDEX (IF NOT EXISTS )?(\w+) ON (\w+)", s):
            if m.group(3) in self.indexes and m.group(2):
                return  # an index of the name exists, on whatever table
            self._create_index(m.group(3), m.group(4), domain="CTXSYS" in s or m.group(1) == "SEARCH ")
        elif m := re.match(r"DROP INDEX (IF EXISTS )?(\w+)", s):
            if m.group(2) not in self.indexes and not m.group(1):
                raise ora(1418, "specified index does not exist")
            self.indexes.pop(m.group(2), None)
        elif m := re.match(r"DROP TABLE IF EXISTS (\w+) PURGE", s):
            if self.kind(m.group(1)) == "TABLE":
                self.tables.pop(m.group(1), None)
                self.dropped.add(m.group(1))
                for index in [i for i, (t, *_) in self.indexes.items() if t == m.group(1)]:
                    del self.indexes[index]
        elif m := re.match(r"CREATE OR REPLACE VIEW (\w+) AS .* FROM (\w+)$", s):
            if self.kind(m.group(1)) == "TABLE":
                raise ora(955, "name is already used by an existing object")
            self.views[m.group(1)] = m.group(2)
        elif m := re.match(r"DROP VIEW IF EXISTS (\w+)", s):
            self.views.pop(m.group(1), None)
        elif m := re.match(r"ALTER TABLE RAG_VERSIONS ADD \((\w+) ", s):
            if m.group(1) in self.columns:
                raise ora(1430, "column being added already exists in table")
            self.columns.add(m.group(1))

    def _create_index(self, name: str, table: str, *, domain: bool) -> None:
        if name in self.indexes:
            raise ora(955, "name is already used by an existing object")
        if self.kind(table) is None:
            raise ora(942, "table or view does not exist")
        self.indexes[name] = (table, "VALID", "VALID" if domain else None)

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
        if s == audit_sql.INSERT_AUDIT_SQL:  # an identity column: ids in append order
            self.audit.append((len(self.audit) + 1, b["created_at"], b["principal"], b["action"], b["knowledge_base"],
                               b["version"], b["outcome"], b["request_id"], b["surface"], b["detail"]))
            return []
        if s == quota_sql.MERGE_QUOTA_SQL:
            key = (b["subject"], b["window_kind"], b["window_start"])
            self.quota_hits[key] = self.quota_hits.get(key, 0) + 1
            return []
        if s == quota_sql.QUOTA_HITS_SQL:
            key = (b["subject"], b["window_kind"], b["window_start"])
            return [(self.quota_hits[key],)] if key in self.quota_hits else []
        if s == quota_sql.PRUNE_QUOTA_SQL:
            old = [k for k in self.quota_hits if k[2] < b["before"]]
            for k in old:
                del self.quota_hits[k]
            self.rowcount = len(old)
            return []
        if s == audit_sql.AUDIT_SQL:
            return sorted((r for r in self.audit if r[0] < b["before_id"]), reverse=True)[: b["n"]]
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
            row = self._visible(b["name"])
            return [tuple(row)] if row else []
        if s == sql.RESOLVE_TARGET_SQL:
            row = self._visible(self.aliases.get(b["target"], b["target"]))
            return [tuple(row)] if row else []
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
        if s == getattr(sql, "CATALOG_COLUMNS_SQL", None):  # the modelled catalog is current but for RAG_VERSIONS' ``columns``
            return [("RAG_VERSIONS", c.upper()) for c in sorted(self.columns)] + [("CHAT_INTERACTIONS", "PRINCIPAL")]
        if s == getattr(sql, "DERIVED_CLAIMS_SQL", None):  # getattr: the fake also runs older trees
            return self._derived_claims((b["questions"], b["summaries"]))
        if s == sql.INDEX_STATUS_SQL:
            return [(i, st, op) for i, (t, st, op) in self.indexes.items() if t == b["table_name"]]
        if s.startswith("SELECT COUNT(*), COUNT(DISTINCT doc_id)"):
            table = s.rsplit(" ", 1)[-1]
            if table not in self.tables:
                raise ora(942, "table or view does not exist")
            rows = self.tables[table]
            return [(rows, rows, 100 * rows)]  # 100 characters of text and metadata a row
        if m := re.match(r"SELECT COUNT\(\*\) FROM (\w+) t WHERE 1=1$", s):  # sql.count_matching_sql, no filter
            return [(self.tables[m.group(1)],)]  # (a table dropped since was refused above with ORA-00942)
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
            self.rowcount = int(self._update_version(b["name"], lambda r: r.__setitem__(7, b["report"])) is not None)
            return []
        if s.startswith("UPDATE RAG_VERSIONS SET retrieval"):
            def restamp(r: list[Any]) -> None:
                r[11] = b["retrieval"]
                r[8] += 1
            self._update_version(b["name"], restamp)
            return []
        if s.startswith("UPDATE RAG_VERSIONS SET index_params"):
            self._update_version(b["name"], lambda r: r.__setitem__(10, b["params"]))
            return []
        if s.startswith("SELECT name, generation FROM RAG_VERSIONS WHERE name IN (:version, :previous) FOR UPDATE"):
            names = [n for n in dict.fromkeys((b["version"], b["previous"])) if n in self.versions]
            for n in names:  # in access-path order, which SQL does not fix: the binds' order here (review 4, M5)
                self._lock_version(n)  # waits for a write holding the row, then reads the committed row
            return [(n, (self._visible(n) or [0] * 9)[8]) for n in names]
        if s.startswith("SELECT name, generation FROM RAG_VERSIONS WHERE name = :name FOR UPDATE"):
            if b["name"] not in self.versions:
                return []
            self._lock_version(b["name"])
            return [(b["name"], (self._visible(b["name"]) or [0] * 9)[8])]
        if s.startswith("SELECT name FROM RAG_VERSIONS WHERE name IN (:version, :previous) FOR UPDATE"):
            names = [n for n in dict.fromkeys((b["version"], b["previous"])) if n in self.versions]
            for n in sorted(names):
                self._lock_version(n)  # the lock before the generation was read again under it
            return [(n,) for n in names]
        if s.startswith("UPDATE RAG_VERSIONS SET generation = generation + 1 WHERE name = :name"):
            row = self._update_version(b["name"], lambda r: r.__setitem__(8, r[8] + 1))
            return [(row[1], row[2])] if row else []
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
            return [tuple(self._visible(n) or ()) for n in self.versions]
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


#: What python-oracledb's thin driver calls a query: the statement's first keyword, after blanks,
#: comments and opening parentheses (``impl/thin/statement.pyx``, ``_determine_statement_type``).
_QUERY_KEYWORDS = ("SELECT", "WITH")
_LEADING = re.compile(r"(?:\s+|--[^\n]*\n|/\*.*?\*/|\()*", re.DOTALL)


def is_query(statement: str) -> bool:
    """Whether the driver lets ``fetchone``/``fetchall`` follow ``statement`` (review 4, N1)."""
    head = statement[_LEADING.match(statement).end():]  # type: ignore[union-attr]
    word = re.match(r"[A-Za-z]+", head)
    return word is not None and word.group(0).upper() in _QUERY_KEYWORDS


def not_a_query() -> BaseException:
    """The driver's own DPY-1003, made by python-oracledb (``cursor._verify_fetch``)."""
    from oracledb import errors

    try:
        errors._raise_err(errors.ERR_NOT_A_QUERY)
    except oracledb.Error as exc:
        return exc
    raise AssertionError("python-oracledb did not raise DPY-1003")  # pragma: no cover


class FakeCursor:
    """The parts of a python-oracledb cursor the adapter uses, logging every call into
    ``db.log``; a subclass answers statements (``_answer``) the way its fake database does.
    Like the thin driver, it refuses to fetch after a statement that is not a query (DPY-1003):
    ``EXPLAIN PLAN``, DML, DDL and PL/SQL return no rows to fetch (review 4, N1)."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.rows: list[tuple[Any, ...]] = []
        self.rowcount = 0
        self.many: list[dict[str, Any]] = []
        self.query = False

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
        self.query = is_query(statement)
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
        self.query = False

    def getbatcherrors(self) -> list[Any]:
        return []

    def getarraydmlrowcounts(self) -> list[int]:
        return [1 for _ in self.many]

    def setinputsizes(self, **sizes: Any) -> None:
        self.db.log.append(("inputsizes", sizes))

    def _verify_fetch(self) -> None:
        if not self.query:
            raise not_a_query()

    def fetchone(self) -> tuple[Any, ...] | None:
        self._verify_fetch()
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        self._verify_fetch()
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
        self.batch_errors: list[Any] = []
        self.db._start_race(statement)
        injected = self.db._injected(statement)
        super().executemany(statement, rows, batcherrors, arraydmlrowcounts)
        if injected and rows:
            code, row = injected
            if not batcherrors:
                raise ora(code)  # without batcherrors the driver raises and the batch stops
            error = ora(code).args[0]
            self.batch_errors.append(types.SimpleNamespace(offset=min(row, len(rows) - 1), code=code,
                                                           full_code=error.full_code, message=error.message))
        inserted = re.match(r"INSERT INTO (\w+) \(chunk_id", statement)
        if inserted and inserted.group(1) in self.db.tables:  # new chunks: the version table's count grows
            table = inserted.group(1)
            self.db._set(self.db.tables, table, self.db.tables[table] + len(rows) - len(self.batch_errors))

    def getbatcherrors(self) -> list[Any]:
        return list(getattr(self, "batch_errors", []))

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
