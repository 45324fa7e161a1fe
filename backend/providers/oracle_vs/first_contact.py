"""``rag oracle check``: what only a real database can answer, asked once on first contact.

The reviews of 2026-11 (``shared/reviews/oracle-2026-11.md``, ``oracle-2026-11-turn4.md``) list checks
that need a server and the privileges the runtime user needs (§1.5); the ``covers`` labels U1-U9 are
the fourth review's (§4). This module asks the database
those questions and returns one ``Check`` per answer: pass, warn, fail or skip, what it covers
(``U2``, ``§1.5``), and, when it does not pass, what to do (the grant to run, the parameter to set).

It is **read-only**. Every statement is a ``SELECT`` on dictionary views or the version's tables,
the vector-memory advisor (a calculation), or ``EXPLAIN PLAN SET STATEMENT_ID`` into
``PLAN_TABLE`` (a session-private global temporary table): its rows are read, deleted by their
statement id, and the transaction is rolled back at the end. It never creates, alters or writes
anything else; the checks that need a write (U4, U6) or a full suite (U5) say what to run by hand.

This module asks about the server and the user (version, privileges, quota, vector pool, advisor,
VPD, the embedding cache); ``plan_checks`` asks about one version (indexes, plans, U1-U3, U8);
``model_checks`` about the in-database query model, its parity and IVF on empty questions (U5, U6,
M2) and says what to run by hand (U4, U9); ``check_report`` holds the
``Check``/``Report`` records and the table ``render`` prints.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from backend.common.config import OracleSettings
from backend.core.vector_format import BYTES_PER_DIMENSION, stamped_format
from backend.providers.oracle_vs import sql, vector_pool, vpd
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.check_report import Check, Report, SampleVersion, message
from backend.providers.oracle_vs.model_checks import ModelChecks
from backend.providers.oracle_vs.plan_checks import VersionChecks
from backend.providers.oracle_vs.versions import json_value


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


row_count_sql = sql.row_count_sql


def parse_version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:5])


class FirstContact:
    """Runs the checks on one connection (``con``: a python-oracledb connection) and rolls back; the
    session ``plan_checks.VersionChecks`` asks its questions through (``rows``, ``try_rows``, ``add``)."""

    def __init__(self, con: Any, settings: OracleSettings, *, target: str | None = None,
                 max_question_chars: int = 4000) -> None:
        self.con = con
        self.settings = settings
        self.target = target
        self.max_question_chars = max_question_chars
        self.user = (settings.user or "").upper()
        self.checks: list[Check] = []
        self.run_id = uuid.uuid4().hex[:8].upper()

    # --- plumbing ----------------------------------------------------------------------
    def rows(self, statement: str, binds: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        cur = self.con.cursor()
        cur.execute(statement, binds or {})
        return list(cur.fetchall())

    def execute(self, statement: str, binds: dict[str, Any] | None = None) -> None:
        """A statement that returns no rows (``EXPLAIN PLAN``, the ``DELETE`` of its rows): executed,
        never fetched. The thin driver classifies a statement by its first keyword and refuses to fetch
        after anything but ``SELECT``/``WITH`` (DPY-1003; review 4, N1)."""
        self.con.cursor().execute(statement, binds or {})

    def try_execute(self, statement: str, binds: dict[str, Any] | None = None) -> str:
        """``execute``; the driver's error as a message ("" when it ran)."""
        import oracledb

        try:
            self.execute(statement, binds)
            return ""
        except oracledb.Error as exc:
            return message(exc)

    def try_rows(self, statement: str, binds: dict[str, Any] | None = None) -> tuple[list[tuple[Any, ...]] | None, str]:
        import oracledb

        try:
            return self.rows(statement, binds), ""
        except oracledb.Error as exc:
            return None, message(exc)

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
                checks = VersionChecks(self)
                checks.check_indexes(version)
                checks.check_plans(version)
                self.check_vpd(version)
                checks.check_enrichment_union(version)
                checks.check_long_text_query(version)
            models = ModelChecks(self)
            models.check_query_model(version)
            models.check_empty_question_ivf(version)
            self.check_embedding_cache()
            models.add_by_hand()
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
        session, error = self.try_rows(SESSION_PRIVS_SQL)
        if session is None:
            self.add("privileges", "fail", f"cannot read SYS.SESSION_PRIVS: {error}",
                     "every user can read SESSION_PRIVS; check the connection's user", covers="§1.5")
            return
        privs = {str(r[0]).upper() for r in session}
        direct = {str(r[0]).upper() for r in (self.try_rows(USER_SYS_PRIVS_SQL)[0] or [])}
        roles = {str(r[0]).upper() for r in (self.try_rows(SESSION_ROLES_SQL)[0] or [])}
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
        users, _ = self.try_rows(DEFAULT_TABLESPACE_SQL)
        tablespace = str(users[0][1]) if users else None
        if "UNLIMITED TABLESPACE" in privs:
            self.add("tablespace quota", "pass", "UNLIMITED TABLESPACE", covers="§1.5")
            return
        quotas, error = self.try_rows(TS_QUOTAS_SQL)
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
    def find_version(self) -> SampleVersion | None:
        if self.target:
            rows, error = self.try_rows(sql.RESOLVE_TARGET_SQL, {"target": self.target.upper()})
            why = f"no version or alias {self.target.upper()}"
        else:
            rows, error = self.try_rows(LATEST_VERSION_SQL)
            why = "no version yet (RAG_VERSIONS is empty)"
        if rows is None or not rows:
            self.add("sample version", "skip", f"{error or why}: the index, plan and enrichment checks need one",
                     "ingest once (rag ingest ...), then run rag oracle check again (--version V to pick one)",
                     covers="U1 U2 U3 U5 U6 U8", required=False)
            return None
        name, model, dimension, distance, index_type = rows[0][:5]
        retrieval = json_value(rows[0][11]) if len(rows[0]) > 11 else None
        version = SampleVersion(str(name), int(dimension), str(distance), str(index_type), model=str(model),
                                vector_format=stamped_format(retrieval if isinstance(retrieval, dict) else None))
        counted, error = self.try_rows(row_count_sql(version.name))
        version.rows = int(counted[0][0]) if counted else 0
        self.add("sample version", "pass" if counted else "warn",
                 f"{version.name}: {version.rows} rows, {version.dimension} dimensions, {version.distance}, "
                 f"{version.index_type}" + (f" ({error})" if error else ""), required=False)
        return version

    # --- vector pool (§2.6, M1) and advisor (U7) -----------------------------------------------------
    def check_vector_pool(self, version: SampleVersion | None) -> None:
        index_type = version.index_type if version else self.settings.vector_index.type
        rows, error = self.try_rows(VECTOR_POOL_SQL)
        if rows is None:
            self.add("vector pool", "warn", f"V$VECTOR_MEMORY_POOL is not readable ({error})",
                     f"GRANT SELECT_CATALOG_ROLE TO {self.user or '<user>'}; or GRANT READ ON SYS.V_$VECTOR_MEMORY_POOL "
                     "(as a DBA) to watch the pool", covers="§1.5 §2.6", required=False)
            return
        alloc = sum(int(r[1] or 0) for r in rows)
        used = sum(int(r[2] or 0) for r in rows)
        mode, _ = self.try_rows(sql.POOL_MODE_SQL)
        grows = vector_pool.grows_on_demand(*vector_pool.pool_mode(mode[0] if mode else None), alloc)
        if grows:  # review 4, M1: allocated minus used says nothing here
            self.add("vector pool", "pass", f"{alloc} bytes allocated, {used} used; {grows}, so HNSW builds are not "
                     "sized against it", covers="§2.6 M1")
        elif alloc == 0 and index_type == "hnsw":
            self.add("vector pool", "fail", "the vector pool is empty: HNSW indexes cannot be built (ORA-51962)",
                     "as a DBA: ALTER SYSTEM SET VECTOR_MEMORY_SIZE = 1G (size it with the advisor; 26ai: "
                     "VECTOR_MEMORY_SIZE=1 for an elastic pool), or set store.oracle.vector_index.type ivf",
                     covers="§2.6")
        else:
            self.add("vector pool", "pass", f"{alloc} bytes allocated, {used} used", covers="§2.6")

    def check_advisor(self, version: SampleVersion | None) -> None:
        index = self.settings.vector_index
        index_type = version.index_type if version else index.type
        if index_type == "none":
            self.add("vector memory advisor", "skip", "vector_index.type none: no vector index to size",
                     covers="U7", required=False)
            return
        import oracledb

        rows = max(version.rows if version else 0, 1)
        dimension = version.dimension if version else 1024
        fmt = version.vector_format if version else "float32"
        dim_type, width = fmt.upper(), BYTES_PER_DIMENSION[fmt]
        parameters = ({"neighbors": index.neighbors} if index_type == "hnsw"
                      else {"neighbor_partitions": index.neighbor_partitions})
        cur = self.con.cursor()
        response = cur.var(oracledb.DB_TYPE_CLOB)
        try:
            cur.execute(ADVISOR_SQL, {"index_type": index_type.upper(), "num_vectors": rows, "dim_count": dimension,
                                      "dim_type": dim_type, "parameters": json.dumps(parameters), "response": response})
        except oracledb.Error as exc:
            self.add("vector memory advisor", "warn", f"DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR failed: {message(exc)}",
                     "not in this release or not granted (EXECUTE ON DBMS_VECTOR): size the pool with docs/ORACLE.md's formula",
                     covers="U7", required=False)
            return
        value = response.getvalue()
        text = value[0] if isinstance(value, list) and value else value
        text = text.read() if hasattr(text, "read") else str(text or "")
        formula = int(1.3 * rows * dimension * width)
        self.add("vector memory advisor", "pass",
                 f"{index_type.upper()} {rows} x {dimension} {dim_type}: advisor {' '.join(text.split())[:300]}; "
                 f"docs/ORACLE.md formula 1.3 x vectors x dims x {width} = {formula} bytes",
                 covers="U7", required=False)

    # --- VPD (review §2.7) -------------------------------------------------------------------
    def check_vpd(self, version: SampleVersion) -> None:
        """With ``store.oracle.vpd: on``: the policy function and context package are valid, and the
        version's table carries the ``RAG_ACL`` policy. Whether the DBA created the ``RAG_ACL``
        context cannot be read without a DBA view: the fix names the statement."""
        if self.settings.vpd != "on":
            return
        objects, error = self.try_rows(vpd.OBJECTS_SQL)
        current, _ = self.try_rows(vpd.CURRENT_SOURCE_SQL)
        context = (vpd.context_ddl(self.user) if self.user else
                   f"CREATE OR REPLACE CONTEXT {vpd.CONTEXT_PREFIX}<OWNER> USING <OWNER>.{vpd.PACKAGE}")
        if objects is None or len(objects) < 3:
            self.add("VPD objects", "fail", f"{vpd.FUNCTION} / {vpd.PACKAGE} missing or invalid {error}".strip(),
                     "restart the API or run any rag command against this store (ensure_catalog creates them); "
                     "the user needs CREATE PROCEDURE", covers="§2.7")
        elif not current or not int(current[0][0] or 0):
            self.add("VPD objects", "fail", f"{vpd.FUNCTION} predates review 4 M4: it reads the shared RAG_ACL "
                     "context (which another schema can rebind) and hides public rows once labels are set",
                     f"run any rag command against this store (ensure_catalog replaces them), then: {context}",
                     covers="§2.7 M4")
        else:
            self.add("VPD objects", "pass", f"{vpd.FUNCTION} and {vpd.PACKAGE} valid; context "
                     f"{vpd.context_name(self.user) if self.user else vpd.CONTEXT_PREFIX + '<OWNER>'}",
                     covers="§2.7 M4")
        policies, error = self.try_rows(vpd.POLICIES_SQL)
        names = {str(r[0]).upper() for r in policies or []}
        if version.name in names:
            self.add("VPD policy", "pass", f"{vpd.POLICY} on {version.name}; readers see their context's labels "
                     f"(a DBA creates the context once: {context})", covers="§2.7")
        else:
            self.add("VPD policy", "fail", f"no {vpd.POLICY} policy on {version.name} {error}".strip(),
                     "rag ingest finishes the load (finish_load adds it); DBMS_RLS needs Enterprise Edition and "
                     "EXECUTE ON DBMS_RLS (in DB_DEVELOPER_ROLE)", covers="§2.7")

    # --- the embedding cache (review 4, N2) -------------------------------------------------
    def check_embedding_cache(self) -> None:
        """Rows an int8 version wrote before N2 was fixed (scaled integers, norm >= 127): harmless now
        (read as misses, replaced by the next write of their text), but they cost an embedding each."""
        rows, error = self.try_rows(sql.POISONED_CACHE_SQL)
        if rows is None:
            self.add("embedding cache", "skip", f"RAG_EMBEDDING_CACHE not readable ({error})",
                     "created by the first rag ingest", covers="N2", required=False)
            return
        poisoned = int(rows[0][0] or 0)
        if poisoned:
            self.add("embedding cache", "warn", f"{poisoned} rows hold an int8 version's scaled integers, not "
                     "embeddings (written before the fix of review 4 N2; read as misses)",
                     f"{sql.PURGE_POISONED_CACHE_SQL}; COMMIT;", covers="N2", required=False)
        else:
            self.add("embedding cache", "pass", "every cached vector is an embedder's output (none with norm >= "
                     f"{sql.POISONED_NORM})", covers="N2", required=False)

def run_checks(connector: OracleConnector, settings: OracleSettings, *, target: str | None = None,
               max_question_chars: int = 4000) -> Report:
    with connector.connection("first-contact check") as con:
        report = FirstContact(con, settings, target=target, max_question_chars=max_question_chars).run()
    report.where = connector.where
    return report
