"""What ``finish_load`` does on Oracle once a version's rows are in: the vector indexes the version
was created for (checked against the vector pool first, IVF when HNSW would not fit), the Oracle
Text and JSON search indexes, the ACL index and VPD policy, then optimizer statistics.

Runs under the admin lock the index admin takes; reads the version through the admin's catalog reads.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Protocol

import structlog

from backend.common.config import OracleSettings, OracleVectorIndexSettings
from backend.common.errors import StoreError
from backend.core.vector_format import stamped_format
from backend.providers.oracle_vs import sql, vector_pool, vpd
from backend.providers.oracle_vs.connection import RESUMES, OracleConnector
from backend.providers.oracle_vs.versions import VersionRow, execute_ddl, index_params

log = structlog.get_logger(__name__)
#: ``finish_load`` built another index type than the version was created with (the vector-pool
#: fallback to IVF, review §2.6): the search plan follows the recorded type.
_SET_INDEX_TYPE = "UPDATE RAG_VERSIONS SET index_type = :index_type WHERE name = :name"


class VersionRows(Protocol):
    """What the finisher reads of its index admin (``index_admin.OracleIndexAdmin``)."""

    def version_row(self, cur: Any, name: str) -> VersionRow: ...


class OracleLoadFinisher:
    """The indexes and statistics of a loaded version (``IndexAdmin.finish_load``'s work)."""

    def __init__(self, connector: OracleConnector, settings: OracleSettings, admin: VersionRows) -> None:
        self.connector = connector
        self.settings = settings
        self.admin = admin

    def index_status(self, cur: Any, table: str) -> dict[str, tuple[str | None, str | None]]:
        cur.execute(sql.INDEX_STATUS_SQL, {"table_name": table})
        return {str(r[0]).upper(): (r[1], r[2]) for r in cur.fetchall()}

    def ensure_domain_indexes(self, cur: Any, name: str) -> None:
        """The Oracle Text and JSON search indexes, each created if missing and dropped (``FORCE``) and
        created again if an earlier ``CREATE`` failed half-way: such an index exists (ORA-00955 on the
        next ``CREATE``) but is ``FAILED`` in ``USER_INDEXES.DOMIDX_OPSTATUS`` and unusable."""
        wanted: list[tuple[str, str]] = []
        if self.settings.lexical_index:
            wanted.append((sql.index_names(name)[1], sql.text_index_ddl(name)))
        if self.settings.metadata_index:
            wanted.append((sql.metadata_index_name(name), sql.metadata_index_ddl(name)))
        if not wanted:
            return
        status = self.index_status(cur, name)
        for index, ddl in wanted:
            if index in status and _usable(*status[index]):
                continue
            if index in status:
                log.warning("store.index_rebuilt", index=index, status=status[index][0], opstatus=status[index][1])
                cur.execute(sql.drop_index_ddl(index, force=True))
            execute_ddl(cur, ddl)

    def after_load(self, cur: Any, name: str) -> None:
        """Once the rows are in (L5): the Text and JSON search indexes, synced on each commit of the load's
        small batches, are optimized (``CTX_DDL.OPTIMIZE_INDEX`` ``FULL``), and statistics are gathered
        on the chunk, question and summary tables (``DBMS_STATS.GATHER_TABLE_STATS``, indexes included).
        Each is advisory: a refusal (a missing ``EXECUTE`` on ``CTX_DDL``) is logged, not raised."""
        import oracledb

        calls: list[tuple[str, dict[str, str]]] = []
        if self.settings.lexical_index:
            calls.append((sql.OPTIMIZE_TEXT_INDEX_SQL, {"idx_name": sql.index_names(name)[1]}))
        if self.settings.metadata_index:
            calls.append((sql.OPTIMIZE_TEXT_INDEX_SQL, {"idx_name": sql.metadata_index_name(name)}))
        calls += [(sql.GATHER_TABLE_STATS_SQL, {"tabname": table}) for table in sql.stats_tables(name)]
        for statement, binds in calls:
            try:
                cur.execute(statement, binds)
            except oracledb.DatabaseError as exc:
                log.warning("store.after_load_skipped", version=name, call=statement.split("(")[0][6:],
                            target=next(iter(binds.values())), error=str(exc).strip()[:200])

    def finish(self, version: str) -> None:
        """Build the version's vector index now that its rows are in, from the spec recorded when the
        version was created (HNSW or IVF; nothing for ``none``), and repair a failed text or JSON
        index. Building after the load keeps every ingested vector out of the HNSW journal and gives
        IVF centroids trained on the real rows, so the candidate is evaluated with the index it will
        serve with. The same index is built on the version's questions (HyDE search, L4); then the
        Text indexes are optimized and statistics gathered (``_after_load``, L5). A valid index
        already built at the version's present generation is kept, so a second call changes nothing
        (with ``none`` the first call at a generation still optimizes and gathers statistics).

        HNSW is sized first (``vector_pool``, review §2.6): when the vector pool cannot hold the graphs,
        ``vector_index.pool_shortfall`` builds IVF instead (recorded on the version, so its searches
        take IVF's plan) or fails, in both cases before any index is dropped. The multivalue index on
        ``rag_acl`` (§2.9) and, with ``vpd: on``, the row-level policy (§2.7) are ensured with the
        Text and JSON indexes."""
        name = sql.oracle_name(version, "index_name")
        with self.connector.snapshot(f"finishing the load of {name}") as con:
            cur = con.cursor()
            row = self.admin.version_row(cur, name)
            status = {**self.index_status(cur, name), **self.index_status(cur, sql.questions_table(name))}
            # counted once here, in the snapshot that read the generation, and recorded with the build
            # so that listing versions reads them instead of scanning every row (L9)
            cur.execute(sql.counts_sql(name))
            counts = [int(c or 0) for c in cur.fetchone()]
            chunks = counts[0]
        spec = row.vector_index(self.settings.vector_index)
        built = (row.index_params or {}).get("built_generation") == row.generation
        indexes = self.pending_vector_indexes(name, row.distance, spec, built, status)
        if spec.type == "hnsw" and indexes and chunks > 0:
            # before anything is dropped or changed (review §2.6): does the graph fit the vector pool?
            pending = {index for index, _ in indexes}
            verdict = self.pool_verdict(name, row.dimension, chunks if sql.index_names(name)[0] in pending else 0,
                                         sql.question_vector_index_name(name) in pending, spec,
                                         sql.VECTOR_FORMATS[stamped_format(row.retrieval)])
            if verdict.action == "fail":
                raise StoreError(verdict.message, version=name, needed_bytes=verdict.needed,
                                 free_bytes=verdict.free)
            if verdict.action == "ivf":
                log.warning("store.vector_pool_fallback", version=name, needed_bytes=verdict.needed,
                            free_bytes=verdict.free, detail=verdict.message)
                spec = spec.model_copy(update={"type": "ivf"})
                indexes = self.pending_vector_indexes(name, row.distance, spec, False, status)
            elif verdict.message:
                log.warning("store.vector_pool_short", version=name, needed_bytes=verdict.needed,
                            free_bytes=verdict.free, detail=verdict.message)
        with self.connector.connection(f"building the indexes of {name}", then=RESUMES) as con:
            cur = con.cursor()
            self.ensure_domain_indexes(cur, name)
            self.ensure_acl_index(cur, name, status)
            self.ensure_vpd(cur, name)
            if built and not indexes:
                return
            if chunks == 0:
                log.info("store.vector_index_deferred", version=name, reason="no rows yet")
                return
            for index, ddl in indexes:
                cur.execute(sql.drop_index_ddl(index))
                cur.execute(ddl)
            self.after_load(cur, name)
            params = {**json.loads(index_params(spec)), "built_generation": row.generation, "counts": counts}
            cur.execute("UPDATE RAG_VERSIONS SET index_params = :params WHERE name = :name",
                        {"params": json.dumps(params, sort_keys=True), "name": name})
            if spec.type != row.index_type:
                cur.execute(_SET_INDEX_TYPE, {"index_type": spec.type, "name": name})
            con.commit()
        log.info("store.vector_index_built", version=name, index_type=spec.type, chunks=chunks,
                 generation=row.generation)

    @staticmethod
    def pending_vector_indexes(name: str, distance: str, spec: OracleVectorIndexSettings, built: bool,
                                status: Mapping[str, tuple[str | None, str | None]]) -> list[tuple[str, str]]:
        """``(index, DDL)`` of the vector indexes (chunks, questions) ``finish_load`` must (re)build: all
        of them unless built at the present generation and usable."""
        return [(index, ddl) for index, ddl in (
            (sql.index_names(name)[0], sql.vector_index_ddl(name, distance, spec)),  # type: ignore[arg-type]
            (sql.question_vector_index_name(name), sql.question_vector_index_ddl(name, distance, spec)),  # type: ignore[arg-type]
        ) if ddl is not None and not (built and index in status and _usable(*status[index]))]

    def pool_verdict(self, name: str, dimension: int, chunks: int, questions_pending: bool,
                      spec: OracleVectorIndexSettings, chunk_format: str = "FLOAT32") -> vector_pool.PoolVerdict:
        """Read-only, on a connection of its own: the advisor's size for the graphs to build (the chunk
        graph: ``chunks`` vectors, 0 when it stays; the question graph when pending and there are
        questions), against the pool's free bytes. The chunk graph is sized in the version's vector
        format (``chunk_format``: INT8 needs a quarter of FLOAT32's bytes); questions are FLOAT32. An unreadable pool leaves HNSW as before; an
        unreadable advisor, the documented formula."""
        import oracledb

        with self.connector.connection(f"sizing the vector pool for {name}") as con:
            cur = con.cursor()
            try:
                cur.execute(sql.VECTOR_POOL_SQL)
                pool = cur.fetchall()
                free = vector_pool.free_bytes(pool)
            except oracledb.DatabaseError as exc:
                log.warning("store.vector_pool_unreadable", version=name, error=str(exc).strip()[:200],
                            fix="GRANT SELECT_CATALOG_ROLE (or READ ON SYS.V_$VECTOR_MEMORY_POOL) to the store's user")
                free = None
            if free is None:
                return vector_pool.PoolVerdict("hnsw", None, None)
            try:
                cur.execute(sql.POOL_MODE_SQL)
                service, size = vector_pool.pool_mode(cur.fetchone())
            except oracledb.DatabaseError:
                service, size = None, None  # V$PARAMETER unreadable: the free figure stands
            grows = vector_pool.grows_on_demand(service, size, sum(int(r[1] or 0) for r in pool))
            if grows:  # allocated minus used says nothing here (review 4, M1)
                log.info("store.vector_pool_grows", version=name, why=grows)
                return vector_pool.PoolVerdict("hnsw", None, None)
            questions = 0
            if questions_pending:
                try:
                    cur.execute(sql.question_count_sql(name))
                    questions = int(cur.fetchone()[0])
                except oracledb.DatabaseError:
                    questions = 0
            needed = sum(self.advised(cur, name, vectors, dimension, spec, fmt)
                         for vectors, fmt in ((chunks, chunk_format), (questions, "FLOAT32")) if vectors > 0)
        return vector_pool.decide(version=name, needed=needed, free=free,
                                  shortfall=spec.pool_shortfall)

    @staticmethod
    def advised(cur: Any, name: str, vectors: int, dimension: int, spec: OracleVectorIndexSettings,
                 dim_type: str = "FLOAT32") -> int:
        """``DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR`` for ``vectors`` HNSW vectors of ``dimension``
        ``dim_type`` values with the version's ``NEIGHBORS``; the docs' formula when it fails or says
        nothing readable."""
        import oracledb

        response = cur.var(oracledb.DB_TYPE_CLOB)
        try:
            cur.execute(sql.ADVISOR_SQL, {"index_type": "HNSW", "num_vectors": vectors, "dim_count": dimension,
                                          "dim_type": dim_type, "parameters": json.dumps({"neighbors": spec.neighbors}),
                                          "response": response})
            value = response.getvalue()
            value = value[0] if isinstance(value, list) and value else value
            text = value.read() if hasattr(value, "read") else str(value or "")
            advised = vector_pool.advised_bytes(text)
        except oracledb.DatabaseError as exc:
            text, advised = str(exc).strip()[:200], None
        if advised is None:
            log.warning("store.vector_memory_advisor_unread", version=name, response=text[:200],
                        using="1.3 x vectors x dimensions x 4")
            return vector_pool.formula_bytes(vectors, dimension, 1 if dim_type == "INT8" else 4)
        return advised

    def ensure_acl_index(self, cur: Any, name: str, status: Mapping[str, tuple[str | None, str | None]]) -> None:
        """The multivalue index on ``rag_acl`` (``sql.acl_index_ddl``, review §2.9), created if missing
        (``store.oracle.acl_index``); it goes with the table when the version is dropped."""
        if not self.settings.acl_index:
            return
        index = sql.acl_index_name(name)
        if index in status and _usable(*status[index]):
            return
        if index in status:
            log.warning("store.index_rebuilt", index=index, status=status[index][0], opstatus=status[index][1])
            cur.execute(sql.drop_index_ddl(index))
        execute_ddl(cur, sql.acl_index_ddl(name))

    def ensure_vpd(self, cur: Any, name: str) -> None:
        """With ``store.oracle.vpd: on``: the version table's row-level policy (``vpd``), added if missing."""
        if self.settings.vpd == "on":
            vpd.add_policy(cur, name)


def _usable(status: str | None, opstatus: str | None) -> bool:
    """``USER_INDEXES``: ``STATUS`` VALID (or N/A for partitioned) and, for a domain index (Oracle Text,
    JSON search), ``DOMIDX_OPSTATUS`` not FAILED."""
    return (status or "VALID").upper() in ("VALID", "N/A") and (opstatus or "VALID").upper() == "VALID"


