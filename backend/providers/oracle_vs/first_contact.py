"""``rag oracle check``: what only a real database can answer, asked once on first contact.

The review of 2026-11 (``shared/reviews/oracle-2026-11.md``) lists checks that need a server
(§1.3, U1-U8) and the privileges the runtime user needs (§1.5). This module asks the database
those questions and returns one ``Check`` per answer: pass, warn, fail or skip, what it covers
(``U2``, ``§1.5``), and, when it does not pass, what to do (the grant to run, the parameter to set).

It is **read-only**. Every statement is a ``SELECT`` on dictionary views or the version's tables,
the vector-memory advisor (a calculation), or ``EXPLAIN PLAN SET STATEMENT_ID`` into
``PLAN_TABLE`` (a session-private global temporary table): its rows are read, deleted by their
statement id, and the transaction is rolled back at the end. It never creates, alters or writes
anything else; the checks that need a write (U4, U6) or a full suite (U5) say what to run by hand.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal, Sequence

from backend.common.config import OracleSettings
from backend.core.types import FieldFilter, Visibility
from backend.providers.oracle_vs import sql, vpd

Status = Literal["pass", "warn", "fail", "skip"]

#: AI Vector Search arrived in 23.4 (23ai); earlier releases have no VECTOR type.
MIN_VERSION = (23, 4)
#: Release notes the check prints (what this release adds that the runtime or the review cares about).
VERSION_NOTES = (
    ((23, 6), "23.6+: hybrid vector indexes (DBMS_HYBRID_VECTOR)"),
    ((23, 7), "23.7+: sparse vectors"),
    ((23, 10), "23.10+: hybrid vector index through DBMS_SEARCH (review §1.5)"),
    ((23, 26), "26ai (23.26+): elastic vector pool (VECTOR_MEMORY_SIZE=1 with SGA_TARGET>0)"),
)

#: Privileges every runtime user needs (review §1.5), and why.
REQUIRED_PRIVILEGES = (
    ("CREATE SESSION", "connecting"),
    ("CREATE TABLE", "version, catalog and enrichment tables; Oracle Text's DR$ tables"),
    ("CREATE VIEW", "alias views"),
    ("CREATE SEQUENCE", "identity columns (RAG_ALIAS_HISTORY, CHAT_INTERACTIONS, ...): ORA-01031 without it"),
)
#: Oracle Text and JSON search indexes (CTX_DDL, preferences).
TEXT_ROLE = "CTXAPP"

SESSION_PRIVS_SQL = "SELECT privilege FROM SYS.SESSION_PRIVS"
USER_SYS_PRIVS_SQL = "SELECT privilege FROM SYS.USER_SYS_PRIVS"
SESSION_ROLES_SQL = "SELECT role FROM SYS.SESSION_ROLES"
DEFAULT_TABLESPACE_SQL = "SELECT username, default_tablespace FROM SYS.USER_USERS"
TS_QUOTAS_SQL = "SELECT tablespace_name, bytes, max_bytes FROM SYS.USER_TS_QUOTAS"
VECTOR_POOL_SQL = sql.VECTOR_POOL_SQL
LATEST_VERSION_SQL = f"SELECT {sql.VERSION_SELECT} FROM RAG_VERSIONS v ORDER BY v.created_at DESC FETCH FIRST 1 ROWS ONLY"
ADVISOR_SQL = sql.ADVISOR_SQL
PLAN_ROWS_SQL = "SELECT id, operation, options, object_name FROM PLAN_TABLE WHERE statement_id = :sid ORDER BY id"
DELETE_PLAN_SQL = "DELETE FROM PLAN_TABLE WHERE statement_id = :sid"
#: The ACL label no real principal holds: the plans are for the shape, never for real rows.
PROBE_PRINCIPAL = "rag_oracle_check"
PROBE_DOC = "__rag_oracle_check__"
#: A metadata filter on an ad-hoc field (served by the JSON search index; the ACL has its own index).
PROBE_FILTER = FieldFilter("tags", any_of=(PROBE_PRINCIPAL,))


row_count_sql = sql.row_count_sql


def explain_sql(statement_id: str, statement: str) -> str:
    """``EXPLAIN PLAN`` of one statement. Its binds get probe values (``FirstContact.probe_binds``):
    EXPLAIN PLAN does not peek at them, so the plan is the shape's."""
    if not re.fullmatch(r"RAG_CHECK_[A-Z0-9_]{1,40}", statement_id):
        raise ValueError(f"bad statement id {statement_id!r}")
    return f"EXPLAIN PLAN SET STATEMENT_ID = '{statement_id}' INTO PLAN_TABLE FOR {statement}"


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""
    covers: str = ""
    required: bool = True
    plan: list[str] = field(default_factory=list)
    statement: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    where: str
    user: str
    server_version: str
    version: str | None
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return not any(c.status == "fail" and c.required for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {"database": self.where, "user": self.user, "server_version": self.server_version,
                "version": self.version, "ok": self.ok, "checks": [c.as_dict() for c in self.checks]}


def parse_version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:5])


def _message(exc: BaseException) -> str:
    arg = exc.args[0] if exc.args else exc
    return str(getattr(arg, "message", arg)).splitlines()[0]


@dataclass
class _Version:
    name: str
    dimension: int
    distance: str
    index_type: str
    rows: int = 0


class FirstContact:
    """Runs the checks on one connection (``con``: a python-oracledb connection) and rolls back."""

    def __init__(self, con: Any, settings: OracleSettings, *, target: str | None = None,
                 max_question_chars: int = 4000) -> None:
        self.con = con
        self.settings = settings
        self.target = target
        self.max_question_chars = max_question_chars
        self.user = (settings.user or "").upper()
        self.checks: list[Check] = []
        self._run = uuid.uuid4().hex[:8].upper()

    # --- plumbing ----------------------------------------------------------------------
    def _rows(self, statement: str, binds: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        cur = self.con.cursor()
        cur.execute(statement, binds or {})
        return list(cur.fetchall())

    def _try(self, statement: str, binds: dict[str, Any] | None = None) -> tuple[list[tuple[Any, ...]] | None, str]:
        import oracledb

        try:
            return self._rows(statement, binds), ""
        except oracledb.Error as exc:
            return None, _message(exc)

    def add(self, *args: Any, **kwargs: Any) -> Check:
        check = Check(*args, **kwargs)
        self.checks.append(check)
        return check

    def run(self) -> Report:
        import oracledb

        server = str(getattr(self.con, "version", "") or "")
        try:
            self.check_version(server)
            self.check_privileges()
            version = self.find_version()
            self.check_vector_pool(version)
            self.check_advisor(version)
            if version is not None:
                self.check_indexes(version)
                self.check_plans(version)
                self.check_vpd(version)
                self.check_enrichment_union(version)
                self.check_long_text_query(version)
            self.add_by_hand()
        finally:
            try:
                self.con.rollback()  # the EXPLAIN PLAN rows, whatever happened
            except oracledb.Error:
                pass
        return Report("", self.user, server, version.name if version else None, self.checks)

    # --- version -----------------------------------------------------------------------
    def check_version(self, server: str) -> None:
        found = parse_version(server)
        if not found:
            self.add("database version", "warn", "the driver did not report the server version",
                     "check by hand: SELECT version_full FROM PRODUCT_COMPONENT_VERSION (23.4 or later needed)")
            return
        if found[:2] < MIN_VERSION:
            self.add("database version", "fail", f"{server}: AI Vector Search needs Oracle Database 23ai (23.4 or later)",
                     "upgrade to 23ai/26ai (23.4+, with COMPATIBLE >= 23.4.0), or use store.backend sqlite")
            return
        notes = [text for at, text in VERSION_NOTES if found[:2] >= at]
        missing = [text.split(":")[0] for at, text in VERSION_NOTES if found[:2] < at]
        detail = f"{server} >= 23.4: AI Vector Search available (needs COMPATIBLE >= 23.4.0)"
        if notes:
            detail += "; " + "; ".join(notes)
        if missing:
            detail += f" (not in this release: {', '.join(missing)})"
        self.add("database version", "pass", detail)

    # --- privileges (review §1.5) --------------------------------------------------------
    def check_privileges(self) -> None:
        session, error = self._try(SESSION_PRIVS_SQL)
        if session is None:
            self.add("privileges", "fail", f"cannot read SYS.SESSION_PRIVS: {error}",
                     "every user can read SESSION_PRIVS; check the connection's user", covers="§1.5")
            return
        privs = {str(r[0]).upper() for r in session}
        direct = {str(r[0]).upper() for r in (self._try(USER_SYS_PRIVS_SQL)[0] or [])}
        roles = {str(r[0]).upper() for r in (self._try(SESSION_ROLES_SQL)[0] or [])}
        grantee = self.user or "<runtime user>"
        for privilege, why in REQUIRED_PRIVILEGES:
            if privilege in privs:
                how = "direct grant" if privilege in direct else "through a role"
                self.add(f"privilege {privilege}", "pass", f"held ({how}): {why}", covers="§1.5")
            else:
                self.add(f"privilege {privilege}", "fail", f"missing: needed for {why}",
                         f"GRANT {privilege} TO {grantee}; (or GRANT DB_DEVELOPER_ROLE TO {grantee};)", covers="§1.5")
        if TEXT_ROLE in roles:
            self.add(f"role {TEXT_ROLE}", "pass", "held: Oracle Text and JSON search indexes", covers="§1.5")
        else:
            self.add(f"role {TEXT_ROLE}", "fail" if self.settings.lexical_index or self.settings.metadata_index else "warn",
                     "missing: Oracle Text (lexical search) and JSON search indexes need CTX_DDL",
                     f"GRANT CTXAPP TO {grantee}; (DB_DEVELOPER_ROLE includes it)", covers="§1.5",
                     required=self.settings.lexical_index or self.settings.metadata_index)
        self.check_quota(privs, grantee)

    def check_quota(self, privs: set[str], grantee: str) -> None:
        users, _ = self._try(DEFAULT_TABLESPACE_SQL)
        tablespace = str(users[0][1]) if users else None
        if "UNLIMITED TABLESPACE" in privs:
            self.add("tablespace quota", "pass", "UNLIMITED TABLESPACE", covers="§1.5")
            return
        quotas, error = self._try(TS_QUOTAS_SQL)
        rows = {str(r[0]).upper(): (r[1], r[2]) for r in quotas or []}
        fix = f"ALTER USER {grantee} QUOTA UNLIMITED ON {tablespace or '<tablespace>'}; (not in DB_DEVELOPER_ROLE)"
        if tablespace is None or quotas is None:
            self.add("tablespace quota", "warn", f"cannot read the default tablespace or quotas {error}".strip(),
                     fix, covers="§1.5", required=False)
            return
        quota = rows.get(tablespace.upper())
        if quota is None or quota[1] == 0:
            self.add("tablespace quota", "fail", f"no quota on the default tablespace {tablespace}: segments "
                     "cannot be created (ORA-01950)", fix, covers="§1.5")
        elif quota[1] != -1 and quota[0] >= quota[1]:
            self.add("tablespace quota", "fail", f"quota on {tablespace} is used up ({quota[0]} of {quota[1]} bytes)",
                     fix, covers="§1.5")
        else:
            limit = "unlimited" if quota[1] == -1 else f"{quota[1]} bytes"
            self.add("tablespace quota", "pass", f"{tablespace}: {limit}", covers="§1.5")

    # --- the version the plans are explained for ---------------------------------------
    def find_version(self) -> _Version | None:
        if self.target:
            rows, error = self._try(sql.RESOLVE_TARGET_SQL, {"target": self.target.upper()})
            why = f"no version or alias {self.target.upper()}"
        else:
            rows, error = self._try(LATEST_VERSION_SQL)
            why = "no version yet (RAG_VERSIONS is empty)"
        if rows is None or not rows:
            self.add("sample version", "skip", f"{error or why}: the index, plan and enrichment checks need one",
                     "ingest once (rag ingest ...), then run rag oracle check again (--version V to pick one)",
                     covers="U1 U2 U3 U7", required=False)
            return None
        name, _model, dimension, distance, index_type = rows[0][:5]
        version = _Version(str(name), int(dimension), str(distance), str(index_type))
        counted, error = self._try(row_count_sql(version.name))
        version.rows = int(counted[0][0]) if counted else 0
        self.add("sample version", "pass" if counted else "warn",
                 f"{version.name}: {version.rows} rows, {version.dimension} dimensions, {version.distance}, "
                 f"{version.index_type}" + (f" ({error})" if error else ""), required=False)
        return version

    # --- vector pool and advisor (U8) -----------------------------------------------------
    def check_vector_pool(self, version: _Version | None) -> None:
        index_type = version.index_type if version else self.settings.vector_index.type
        rows, error = self._try(VECTOR_POOL_SQL)
        if rows is None:
            self.add("vector pool", "warn", f"V$VECTOR_MEMORY_POOL is not readable ({error})",
                     f"GRANT SELECT_CATALOG_ROLE TO {self.user or '<user>'}; or GRANT READ ON SYS.V_$VECTOR_MEMORY_POOL "
                     "(as a DBA) to watch the pool", covers="§1.5 U8", required=False)
            return
        alloc = sum(int(r[1] or 0) for r in rows)
        used = sum(int(r[2] or 0) for r in rows)
        if alloc == 0 and index_type == "hnsw":
            self.add("vector pool", "fail", "the vector pool is empty: HNSW indexes cannot be built (ORA-51962)",
                     "as a DBA: ALTER SYSTEM SET VECTOR_MEMORY_SIZE = 1G (size it with the advisor; 26ai: "
                     "VECTOR_MEMORY_SIZE=1 for an elastic pool), or set store.oracle.vector_index.type ivf",
                     covers="U8")
        else:
            self.add("vector pool", "pass", f"{alloc} bytes allocated, {used} used", covers="U8")

    def check_advisor(self, version: _Version | None) -> None:
        index = self.settings.vector_index
        index_type = version.index_type if version else index.type
        if index_type == "none":
            self.add("vector memory advisor", "skip", "vector_index.type none: no vector index to size",
                     covers="U8", required=False)
            return
        import oracledb

        rows = max(version.rows if version else 0, 1)
        dimension = version.dimension if version else 1024
        parameters = ({"neighbors": index.neighbors} if index_type == "hnsw"
                      else {"neighbor_partitions": index.neighbor_partitions})
        cur = self.con.cursor()
        response = cur.var(oracledb.DB_TYPE_CLOB)
        try:
            cur.execute(ADVISOR_SQL, {"index_type": index_type.upper(), "num_vectors": rows, "dim_count": dimension,
                                      "dim_type": "FLOAT32", "parameters": json.dumps(parameters), "response": response})
        except oracledb.Error as exc:
            self.add("vector memory advisor", "warn", f"DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR failed: {_message(exc)}",
                     "not in this release or not granted (EXECUTE ON DBMS_VECTOR): size the pool with docs/ORACLE.md's formula",
                     covers="U8", required=False)
            return
        value = response.getvalue()
        text = value[0] if isinstance(value, list) and value else value
        text = text.read() if hasattr(text, "read") else str(text or "")
        formula = int(1.3 * rows * dimension * 4)
        self.add("vector memory advisor", "pass",
                 f"{index_type.upper()} {rows} x {dimension}: advisor {' '.join(text.split())[:300]}; "
                 f"docs/ORACLE.md formula 1.3 x vectors x dims x 4 = {formula} bytes",
                 covers="U8", required=False)

    # --- indexes and plans (U2, U3) ---------------------------------------------------------
    def expected_indexes(self, version: _Version) -> dict[str, str]:
        vidx, tidx = sql.index_names(version.name)
        wanted = {}
        if version.index_type != "none":
            wanted[vidx] = "vector"
        if self.settings.lexical_index:
            wanted[tidx] = "Oracle Text"
        if self.settings.metadata_index:
            wanted[sql.metadata_index_name(version.name)] = "JSON search"
        if self.settings.acl_index:
            wanted[sql.acl_index_name(version.name)] = "ACL multivalue"
        return wanted

    def check_indexes(self, version: _Version) -> None:
        rows, error = self._try(sql.INDEX_STATUS_SQL, {"table_name": version.name})
        found = {str(r[0]): (r[1], r[2]) for r in rows or []}
        for name, kind in self.expected_indexes(version).items():
            status = found.get(name)
            if status is None:
                # a version loaded before the ACL index existed still searches correctly: advisory
                self.add(f"{kind} index", "fail", f"{name} does not exist on {version.name} {error}".strip(),
                         "rag ingest finishes the load (finish_load builds it); for a served version see docs/ORACLE.md",
                         required=kind != "ACL multivalue")
            elif status[0] != "VALID" or status[1] not in (None, "VALID"):
                self.add(f"{kind} index", "fail", f"{name}: status {status[0]}, domain index status {status[1]}",
                         f"DROP INDEX {name} FORCE, then rebuild it (rag ingest on the version finishes the load)")
            else:
                self.add(f"{kind} index", "pass", f"{name} VALID")

    def shapes(self, version: _Version) -> list[tuple[str, str, str, str, bool]]:
        """``(name, covers, statement, expected index kind, required)`` for each search shape, as the
        store sends it for this version's index type: HNSW's filtered search is one hinted ``FETCH
        APPROX ... WHERE`` (review §2.8; required: the store relies on it), IVF's the candidate
        statement it widens. The ACL count shows whether the multivalue index serves the access
        condition (§2.9), the JSON filter shapes whether the JSON search index serves other fields."""
        v, d = version.name, version.distance
        accuracy = self.settings.vector_index.target_accuracy
        acl, _ = sql.filter_clause([Visibility.of(PROBE_PRINCIPAL).as_filter()])
        tags, _ = sql.filter_clause([PROBE_FILTER])
        shapes: list[tuple[str, str, str, str, bool]] = []
        if version.index_type != "none":
            shapes.append(("plan: dense FETCH APPROX", "U2", sql.dense_search_sql(v, d, "1=1", approx=True,  # type: ignore[arg-type]
                                                                                  target_accuracy=accuracy), "vector", True))
        if version.index_type == "hnsw":
            transform = sql.index_names(v)[0] if self.settings.metadata_index else None
            shapes.append(("plan: filtered FETCH APPROX", "U2 U3 §2.8",
                           sql.dense_search_sql(v, d, acl, approx=True, target_accuracy=accuracy,  # type: ignore[arg-type]
                                                transform=transform), "vector", True))
        elif version.index_type != "none":
            shapes.append(("plan: filtered candidates", "U2", sql.candidate_search_sql(v, d, acl, accuracy),  # type: ignore[arg-type]
                           "vector", True))
        if self.settings.lexical_index:
            shapes.append(("plan: lexical CONTAINS", "", sql.lexical_search_sql(v, acl), "text", True))
        if self.settings.acl_index:
            shapes.append(("plan: ACL count", "U3 §2.9", sql.count_matching_sql(v, acl), "acl", False))
        if self.settings.metadata_index:
            shapes += [("plan: JSON filter count", "U3", sql.count_matching_sql(v, tags), "json", False),
                       ("plan: JSON filter exact", "U3", sql.dense_search_sql(v, d, tags, approx=False), "json", False)]  # type: ignore[arg-type]
        return shapes

    def probe_binds(self, version: _Version, statement: str, **values: Any) -> dict[str, Any]:
        """Values for every placeholder of a search statement, of the types the store binds (the
        thin driver refuses a statement with an unbound placeholder, EXPLAIN PLAN included; the
        optimizer does not peek at EXPLAIN PLAN's binds, so the values do not shape the plan).
        A placeholder with no probe value (padding of an IN list) gets NULL, as the store pads."""
        from array import array

        _, acl_binds = sql.filter_clause([Visibility.of(PROBE_PRINCIPAL).as_filter()])
        known: dict[str, Any] = {"q": array("f", [1.0] * version.dimension), "k": 10, "depth": 40,
                                 "query": sql.text_query("rag oracle check"), "e0": PROBE_DOC, **acl_binds, **values}
        return {name: known.get(name) for name in placeholders(statement)}

    def check_plans(self, version: _Version) -> None:
        vidx, tidx = sql.index_names(version.name)
        midx = sql.metadata_index_name(version.name)
        aidx = sql.acl_index_name(version.name)
        for i, (name, covers, statement, kind, required) in enumerate(self.shapes(version)):
            sid = f"RAG_CHECK_{self._run}_{i}"
            try:
                self._rows(explain_sql(sid, statement), self.probe_binds(version, statement))
                rows = self._rows(PLAN_ROWS_SQL, {"sid": sid})
            except Exception as exc:  # noqa: BLE001 - any driver error is the check's answer
                self.add(name, "fail" if required else "warn", f"EXPLAIN PLAN failed: {_message(exc)}",
                         "run the statement (--json shows it) in SQL*Plus to see the error", covers=covers,
                         required=required, statement=statement)
                continue
            finally:
                self._try(DELETE_PLAN_SQL, {"sid": sid})
            lines = [" ".join(str(p) for p in (op, opts, obj) if p) for _id, op, opts, obj in rows]
            verdict = plan_uses(rows, kind, version.name, {"vector": vidx, "text": tidx, "json": midx, "acl": aidx}[kind])
            label = {"vector": f"vector index {vidx}", "text": f"Oracle Text index {tidx}",
                     "json": f"JSON search index {midx}", "acl": f"multivalue index {aidx}"}[kind]
            if verdict == "used":
                self.add(name, "pass", f"uses the {label}", covers=covers, required=required, plan=lines)
                continue
            why = ("a full table scan of " + version.name) if verdict == "full scan" else "no access through it"
            fix = {"vector": "check the index is VALID and the vector pool holds it; gather statistics "
                             f"(DBMS_STATS.GATHER_TABLE_STATS(USER, '{version.name}')); see docs/ORACLE.md",
                   "text": f"rebuild {tidx} (DROP INDEX {tidx} FORCE; rag ingest finishes the load)",
                   "json": f"gather statistics (DBMS_STATS.GATHER_TABLE_STATS(USER, '{version.name}')); a small table "
                           "is scanned by choice, recheck at target size",
                   "acl": f"gather statistics (DBMS_STATS.GATHER_TABLE_STATS(USER, '{version.name}')); if the JSON "
                          f"search index {midx} is chosen instead, the OR of labels may not match the multivalue "
                          "index: report the plan (review §2.9)"}[kind]
            self.add(name, "fail" if required else "warn", f"does not use the {label}: {why}", fix,
                     covers=covers, required=required, plan=lines, statement=statement)

    # --- VPD (review §2.7) -------------------------------------------------------------------
    def check_vpd(self, version: _Version) -> None:
        """With ``store.oracle.vpd: on``: the policy function and context package are valid, and the
        version's table carries the ``RAG_ACL`` policy. Whether the DBA created the ``RAG_ACL``
        context cannot be read without a DBA view: the fix names the statement."""
        if self.settings.vpd != "on":
            return
        objects, error = self._try(vpd.OBJECTS_SQL)
        owner = self.user or "<owner>"
        if objects is None or len(objects) < 3:
            self.add("VPD objects", "fail", f"{vpd.FUNCTION} / {vpd.PACKAGE} missing or invalid {error}".strip(),
                     "restart the API or run any rag command against this store (ensure_catalog creates them); "
                     "the user needs CREATE PROCEDURE", covers="§2.7")
        else:
            self.add("VPD objects", "pass", f"{vpd.FUNCTION} and {vpd.PACKAGE} valid", covers="§2.7")
        policies, error = self._try(vpd.POLICIES_SQL)
        names = {str(r[0]).upper() for r in policies or []}
        if version.name in names:
            self.add("VPD policy", "pass", f"{vpd.POLICY} on {version.name}; readers see their context's labels "
                     f"(a DBA creates the context once: {vpd.context_ddl(owner)})", covers="§2.7")
        else:
            self.add("VPD policy", "fail", f"no {vpd.POLICY} policy on {version.name} {error}".strip(),
                     "rag ingest finishes the load (finish_load adds it); DBMS_RLS needs Enterprise Edition and "
                     "EXECUTE ON DBMS_RLS (in DB_DEVELOPER_ROLE)", covers="§2.7")

    # --- U1, U7 ------------------------------------------------------------------------------
    def check_enrichment_union(self, version: _Version) -> None:
        statement = sql.doc_enrichment_sql(version.name, 1)
        rows, error = self._try(statement, self.probe_binds(version, statement))
        if rows is None:
            self.add("UNION ALL of VECTOR columns", "fail", f"doc_enrichment_sql failed: {error}",
                     "report it: questions and summaries cannot be read back (review U1)", covers="U1",
                     statement=statement)
        else:
            self.add("UNION ALL of VECTOR columns", "pass", "doc_enrichment_sql runs", covers="U1")

    def check_long_text_query(self, version: _Version) -> None:
        if not self.settings.lexical_index:
            return
        words = [f"w{i:04d}" for i in range(self.max_question_chars // 6)]
        query = sql.text_query(" ".join(words))
        acl, _ = sql.filter_clause([Visibility.of(PROBE_PRINCIPAL).as_filter()])
        statement = sql.lexical_search_sql(version.name, acl, ids_only=True)
        rows, error = self._try(statement, self.probe_binds(version, statement, query=query, k=1))
        detail = f"a {self.max_question_chars}-character question is a {len(query.encode())}-byte CONTAINS query"
        if rows is None:
            self.add("long lexical query", "warn", f"{detail}: {error}",
                     "lower server.max_question_chars, or cap the terms text_query sends (review U7)",
                     covers="U7", required=False, statement=statement)
        else:
            self.add("long lexical query", "pass", f"{detail}: accepted", covers="U7", required=False)

    def add_by_hand(self) -> None:
        for covers, name, what in (
            ("U4", "MERGE of a 5,000-byte payload", "writes: insert then update a 5,000-byte payload through "
             "RAG_ENRICHMENT_CACHE's MERGE on a scratch schema (docs/ORACLE.md, first-contact checklist)"),
            ("U5", "IVF on the contract corpus", "RAG_TEST_ORACLE_INDEX=ivf .venv/bin/python -m pytest "
             "tests/providers/test_oracle_vs.py (docs/ORACLE.md §6)"),
            ("U6", "catalog ALTER under a row lock", "two sessions: hold a RAG_VERSIONS row FOR UPDATE, start "
             "another process; expect ORA-01430 or ORA-00054"),
        ):
            self.add(name, "skip", "needs writes: run by hand", what, covers=covers, required=False)


def placeholders(statement: str) -> list[str]:
    """The bind placeholders of a statement (``:name``), outside string literals, in order."""
    return list(dict.fromkeys(re.findall(r"(?<![\w:]):(\w+)", re.sub(r"'[^']*'", "''", statement))))


def plan_uses(rows: Sequence[tuple[Any, ...]], kind: str, table: str, index: str) -> str:
    """``used``, ``full scan`` (the table is read in full) or ``not used``, from PLAN_TABLE rows
    ``(id, operation, options, object_name)``."""
    for _id, operation, _options, obj in rows:
        op, name = str(operation or "").upper(), str(obj or "").upper()
        if kind == "vector" and ("VECTOR INDEX" in op or name == index or name.startswith(f"VECTOR${index}")):
            return "used"
        if kind in ("text", "json") and op == "DOMAIN INDEX" and name == index:
            return "used"
        if kind == "acl" and op == "INDEX" and name == index:  # INDEX RANGE SCAN (MULTI VALUE)
            return "used"
    full = any(str(op).upper() == "TABLE ACCESS" and str(opts).upper() == "FULL" and str(obj).upper() == table
               for _id, op, opts, obj in rows)
    return "full scan" if full else "not used"


def run_checks(connector: Any, settings: OracleSettings, *, target: str | None = None,
               max_question_chars: int = 4000) -> Report:
    with connector.connection("first-contact check") as con:
        report = FirstContact(con, settings, target=target, max_question_chars=max_question_chars).run()
    report.where = connector.where
    return report


def render(report: Report, echo: Callable[[str], None]) -> None:
    version = f", version {report.version}" if report.version else ""
    echo(f"rag oracle check: {report.where} as {report.user or '?'} (Oracle {report.server_version or '?'}){version}")
    width = max([len(c.name) for c in report.checks] + [5])
    echo(f"{'STATUS':<6}  {'CHECK':<{width}}  {'COVERS':<8}  RESULT")
    for c in report.checks:
        status = c.status if c.required or c.status != "fail" else "warn"
        echo(f"{status:<6}  {c.name:<{width}}  {c.covers:<8}  {c.detail}")
        if c.fix and c.status != "pass":
            echo(f"{'':<6}  {'':<{width}}  {'':<8}  -> {c.fix}")
    counts = {s: sum(1 for c in report.checks if c.status == s) for s in ("pass", "warn", "fail", "skip")}
    failed = sum(1 for c in report.checks if c.status == "fail" and c.required)
    echo(f"{counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail ({failed} required), "
         f"{counts['skip']} skip: {'ready' if report.ok else 'not ready'} (exit {0 if report.ok else 1})")
