"""Versions, alias views and their history on Oracle (seed 004's ``index_admin``).

``RAG_VERSIONS`` records each physical table's model, dimension, distance, vector
index spec, ``generation`` (bumped by every write that changes rows) and
``parent``; ``RAG_ALIASES`` is the source of truth for what an alias serves
(readers resolve it and search in two statements); the alias view
(``CREATE OR REPLACE VIEW``, one statement) serves SQL tools and reports.
``RAG_ALIAS_HISTORY`` keeps every change so a rotation can be rolled back.

Names are kept as Oracle stores unquoted identifiers, upper-case
(``sql.oracle_name``): ``kb_v1`` and ``KB_V1`` are one version. Oracle commits
before and after every DDL statement, so each operation orders its DDL and its
registry rows so that a crash in between leaves something a retry completes:
``create_version`` runs its DDL first and registers the version (with the
parent's rows) in one transaction after; ``drop_version`` drops the table first
and deletes the registry row after.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Mapping

import structlog

from backend.common.config import OracleSettings, OracleVectorIndexSettings
from backend.common.errors import AliasNotFound, StoreError, VersionChanged, VersionConflict, VersionNotFound
from backend.core.model_stamp import same_model
from backend.core.types import AliasChange, IndexVersion, VersionSpec
from backend.core.vector_format import stamped_format
from backend.providers.oracle_vs import sql, vector_pool, vpd
from backend.providers.oracle_vs.connection import RESUMES, OracleConnector
from backend.providers.oracle_vs.admin_lock import admin_lock

log = structlog.get_logger(__name__)
_INSERT_VERSION = (
    "INSERT INTO RAG_VERSIONS (name, embed_model, dimension, distance, index_type, profile, created_at, evaluation, "
    "generation, parent, index_params, retrieval) VALUES (:name, :embed_model, :dimension, :distance, :index_type, "
    ":profile, :created_at, NULL, 0, :parent, :index_params, :retrieval)"
)
#: An ingest writing an existing version (a resumed candidate, ``--in-place``) records the retrieval
#: settings it runs with; the generation moves, so an earlier evaluation is stale.
_RESTAMP_VERSION = ("UPDATE RAG_VERSIONS SET retrieval = :retrieval, generation = generation + 1 "
                    "WHERE name = :name")
#: ``finish_load`` built another index type than the version was created with (the vector-pool
#: fallback to IVF, review §2.6): the search plan follows the recorded type.
_SET_INDEX_TYPE = "UPDATE RAG_VERSIONS SET index_type = :index_type WHERE name = :name"
#: Vector index parameters recorded with a version, so ``finish_load`` builds the index the version
#: was created for, whatever the settings say by then.
_INDEX_PARAMS = ("type", "target_accuracy", "neighbors", "efconstruction", "neighbor_partitions")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def json_value(value: Any) -> Any:
    """JSON columns arrive as Python objects in thin mode; tolerate text too."""
    if value is None or isinstance(value, (dict, list)):
        return value
    if hasattr(value, "read"):
        value = value.read()
    return json.loads(value)


def json_safe(value: Mapping[str, Any]) -> dict[str, Any]:
    """Plain JSON data for a native ``JSON`` bind (dates and other objects as strings)."""
    return dict(json.loads(json.dumps(dict(value), default=str)))


def oracledb_json() -> Any:
    """``DB_TYPE_JSON``: dicts are bound as OSON, straight into a JSON column (no 4000-byte text limit)."""
    import oracledb

    return oracledb.DB_TYPE_JSON


def stamp_text(retrieval: Mapping[str, Any] | None) -> str | None:
    """A retrieval stamp as the JSON text the registry keeps (bound, never spliced)."""
    return json.dumps(dict(retrieval), sort_keys=True) if retrieval is not None else None


def recorded_counts(row: "VersionRow") -> tuple[int, int, int] | None:
    """``(chunks, documents, characters)`` that ``finish_load`` recorded in ``index_params`` when they
    still describe the rows: recorded at the version's present generation (every write moves it)."""
    params = row.index_params or {}
    counts = params.get("counts")
    if params.get("built_generation") != row.generation or not isinstance(counts, list) or len(counts) != 3:
        return None
    return int(counts[0]), int(counts[1]), int(counts[2])


def index_params(settings: OracleVectorIndexSettings) -> str:
    return json.dumps({k: getattr(settings, k) for k in _INDEX_PARAMS}, sort_keys=True)


@dataclass(frozen=True)
class VersionRow:
    name: str
    model: str
    dimension: int
    distance: str
    index_type: str
    profile: str | None
    created_at: str
    evaluation: Mapping[str, Any] | None
    generation: int = 0
    parent: str | None = None
    index_params: Mapping[str, Any] | None = None
    #: the retrieval settings stamped at ingest (JSON text in the registry); None before stamps
    retrieval: Mapping[str, Any] | None = None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> "VersionRow":
        name, model, dim, distance, index_type, profile, created, evaluation = row[:8]
        generation, parent, params, retrieval = (tuple(row[8:12]) + (0, None, None, None))[:4]
        return cls(name, model, int(dim), distance, index_type, profile, created, json_value(evaluation),
                   int(generation or 0), parent, json_value(params), json_value(retrieval))

    def vector_index(self, current: OracleVectorIndexSettings) -> OracleVectorIndexSettings:
        """The version's own recorded index spec; a version registered before specs were recorded
        keeps its recorded type with the current parameters."""
        recorded = {k: v for k, v in (self.index_params or {}).items() if k in _INDEX_PARAMS}
        recorded["type"] = self.index_type if self.index_type in ("hnsw", "ivf") else "none"
        return current.model_copy(update=recorded)


def _error_code(exc: BaseException) -> int | None:
    err = exc.args[0] if exc.args else None
    return getattr(err, "code", None)


def execute_ddl(cur: Any, statement: str, tolerated: frozenset[int] = sql.ALREADY_EXISTS) -> bool:
    """Run DDL; an object left by an earlier run (ORA-00955/01408 by default) is not an error."""
    import oracledb

    try:
        cur.execute(statement)
    except oracledb.DatabaseError as exc:
        if _error_code(exc) in tolerated:
            return False
        raise
    return True


def _added_column(ddl: str) -> tuple[str, str]:
    """(table, column) an ``ALTER TABLE t ADD (column ...)`` of ``CATALOG_UPGRADES`` adds, upper-case."""
    found = re.fullmatch(r"ALTER TABLE (\w+) ADD \((\w+) .*\)", ddl)
    assert found is not None, ddl
    return found.group(1).upper(), found.group(2).upper()


class OracleIndexAdmin:
    """``IndexAdmin`` over a connector; ``OracleVectorStore`` builds on it."""

    def __init__(self, connector: OracleConnector, settings: OracleSettings) -> None:
        self._db = connector
        self._settings = settings

    @property
    def endpoint(self) -> str:
        return self._db.where

    def ensure_catalog(self) -> None:
        """Create the catalog tables, and add the columns a catalog created by an older release lacks."""
        with self._db.connection("creating the catalog tables") as con:
            cur = con.cursor()
            for ddl in (*sql.CATALOG_DDL, *sql.CATALOG_INDEXES):
                cur.execute(ddl)
            cur.execute(sql.CATALOG_COLUMNS_SQL)
            present = {(str(t).upper(), str(c).upper()) for t, c in cur.fetchall()}
            for ddl in sql.CATALOG_UPGRADES:
                if _added_column(ddl) not in present:  # ALTER only what is missing: DDL waits on DML locks
                    execute_ddl(cur, ddl, frozenset({sql.COLUMN_EXISTS}))
            # versions made before questions and summaries were stored: their (empty) tables, so
            # every write and search of enrichment finds them
            cur.execute(sql.MISSING_ENRICHMENT_SQL)
            for name, dimension in cur.fetchall():
                for ddl in sql.enrichment_ddl(str(name), int(dimension)):
                    cur.execute(ddl)
                log.info("store.enrichment_tables_added", version=name)
            if self._settings.vpd == "on":
                vpd.ensure_objects(cur)

    # --- version rows ------------------------------------------------------------
    def _find_version(self, cur: Any, name: str) -> VersionRow | None:
        cur.execute(sql.FIND_VERSION_SQL, {"name": name})
        row = cur.fetchone()
        return VersionRow.from_row(row) if row else None

    def _not_found(self, name: str) -> VersionNotFound:
        return VersionNotFound(f"index version {name!r} does not exist in the Oracle store at {self.endpoint}",
                               version=name)

    def _version_row(self, cur: Any, name: str) -> VersionRow:
        row = self._find_version(cur, name)
        if row is None:
            raise self._not_found(name)
        return row

    def _alias_version(self, cur: Any, alias: str) -> str | None:
        cur.execute("SELECT version_name FROM RAG_ALIASES WHERE alias_name = :alias", {"alias": alias})
        row = cur.fetchone()
        return row[0] if row else None

    def _resolve_target(self, cur: Any, target: str) -> VersionRow:
        """An alias or a version in one round trip; the error path asks again to say which is missing."""
        name = sql.oracle_name(target, "retrieval target")
        cur.execute(sql.RESOLVE_TARGET_SQL, {"target": name})
        row = cur.fetchone()
        if row:
            return VersionRow.from_row(row)
        version = self._alias_version(cur, name)
        if version is not None:
            raise self._not_found(version)
        raise AliasNotFound(f"{target!r} is neither an alias nor an index version; ingest and promote first",
                            target=target)

    def _to_version(self, cur: Any, row: VersionRow) -> IndexVersion:
        """``size_bytes`` = rows x dimension x 4 (FLOAT32 vectors, exact) + characters of text and of
        serialized metadata, summed in the same scan that counts the rows. Not ``USER_SEGMENTS``:
        segments grow in extents (64 KB at least, none at all before the first row with deferred
        segment creation) and do not shrink when rows are deleted, so they would not follow the rows.

        The counts ``finish_load`` recorded at the version's present generation are used as they are
        (review L9: ``rag index list`` costs one registry read per version, not a scan of its rows);
        a version written since (its generation moved) or never finished is counted by a scan."""
        recorded = recorded_counts(row)
        if recorded is None:
            cur.execute(sql.counts_sql(row.name))
            recorded = cur.fetchone()
        chunks, docs, chars = recorded
        size = int(chunks) * row.dimension * 4 + int(chars or 0)
        return IndexVersion(row.name, row.model, row.dimension, row.distance, row.created_at,  # type: ignore[arg-type]
                            int(chunks), int(docs), row.profile, row.evaluation, generation=row.generation,
                            parent=row.parent, size_bytes=size, retrieval=row.retrieval)

    def _protection(self, cur: Any, version: str) -> list[str]:
        """``["KB_ACTIVE live", ...]``: why ``version`` must not change (empty when it may)."""
        cur.execute(sql.PROTECTED_ONE_SQL, {"version": version})
        return [f"{alias} {str(why).strip()}" for alias, why in cur.fetchall()]

    def protected_versions(self) -> dict[str, str]:
        with self._db.connection("listing protected versions") as con:
            cur = con.cursor()
            cur.execute(sql.PROTECTED_SQL)
            reasons: dict[str, list[str]] = {}
            for version, alias, why in cur.fetchall():
                reasons.setdefault(version, []).append(f"{alias} {str(why).strip()}")
        return {v: ", ".join(sorted(r)) for v, r in reasons.items()}

    # --- versions ------------------------------------------------------------------
    def create_version(self, spec: VersionSpec) -> IndexVersion:
        """Under the admin lock of the name and of the parent (``admin_lock``: no concurrent create,
        finish, drop or rotation of either; no drop of the parent while its rows are copied)."""
        name = sql.oracle_name(spec.name, "index_name")
        parent = sql.oracle_name(spec.parent, "parent version") if spec.parent else None
        self.__dict__.get("_formats", {}).pop(name, None)  # the store's per-version format cache
        with admin_lock(self._db, f"creating version {name}", versions=(name, parent)):
            return self._create_version(spec)

    def _create_version(self, spec: VersionSpec) -> IndexVersion:
        """DDL first (each statement commits by itself), then one transaction that empties whatever a
        crashed run left in the table, copies the parent's rows and inserts the registry row: a version
        is registered with all its rows or not at all, and a second call completes a crashed one."""
        name = sql.oracle_name(spec.name, "index_name")
        parent = sql.oracle_name(spec.parent, "parent version") if spec.parent else None
        sql.metric(spec.distance)
        vector_format = stamped_format(spec.retrieval)
        table_ddl = sql.version_table_ddl(name, spec.dimension, vector_format)
        if parent == name:
            raise VersionConflict(f"version {name} cannot be its own parent", version=name)
        with self._db.snapshot(f"creating version {name}") as con:
            cur = con.cursor()
            row = self._find_version(cur, name)
            existing = self._existing(cur, row, spec) if row is not None else None
            debris = self._check_new(cur, name, parent, spec) if existing is None else False
            parent_row = self._find_version(cur, parent) if parent is not None and existing is None else None
            if parent_row is not None and stamped_format(parent_row.retrieval) != vector_format:
                raise VersionConflict(f"version {name} ({vector_format} vectors) cannot copy {parent} "
                                      f"({stamped_format(parent_row.retrieval)}): a format change is built from "
                                      "scratch, never mixed", version=name)
        if existing is not None:
            return self._restamped(existing, spec)
        vector_index = self._settings.vector_index
        with self._db.connection(f"creating version {name}", then=RESUMES) as con:
            cur = con.cursor()
            # a crashed create_version's table that no registry row claims: its VECTOR column may have
            # another dimension (CREATE TABLE IF NOT EXISTS would keep it), so it goes, with its own
            # question and summary tables, and is created anew. Asked again just before the drop; creation
            # runs under the admin lock of the name, so no concurrent creator registers it meanwhile
            if debris and self._find_version(cur, name) is None:
                log.warning("store.version_debris_dropped", version=name)
                for ddl in (*sql.drop_enrichment_ddl(name), sql.drop_version_ddl(name)):
                    cur.execute(ddl)
            cur.execute(table_ddl)
            self._ensure_vpd(cur, name)  # before any row is copied in
            cur.execute(sql.doc_index_ddl(name))
            # a parent made before questions and summaries were stored gets its (empty) tables to copy from
            for owner in (name, parent) if parent is not None else (name,):
                for ddl in sql.enrichment_ddl(owner, spec.dimension):
                    cur.execute(ddl)
            self._ensure_domain_indexes(cur, name)
        try:
            with self._db.transaction(f"creating version {name}", then=RESUMES) as con:
                cur = con.cursor()
                cur.execute(sql.empty_table_sql(name))
                for statement in sql.empty_enrichment_sql(name):
                    cur.execute(statement)
                if parent is not None:
                    cur.execute(sql.copy_rows_sql(name, parent))
                    for statement in sql.copy_enrichment_sql(name, parent):
                        cur.execute(statement)
                cur.execute(_INSERT_VERSION, {
                    "name": name, "embed_model": spec.model, "dimension": spec.dimension, "distance": spec.distance,
                    "index_type": vector_index.type, "profile": spec.profile, "created_at": now_iso(),
                    "parent": parent, "index_params": index_params(vector_index),
                    "retrieval": stamp_text(spec.retrieval)})
                version = self._to_version(cur, self._version_row(cur, name))
        except StoreError as exc:
            if exc.context.get("code") != "ORA-00001":
                raise
            # another session registered the same name first: same spec is success, another a conflict
            with self._db.snapshot(f"creating version {name}") as con:
                cur = con.cursor()
                return self._existing(cur, self._version_row(cur, name), spec)
        log.info("store.version_created", version=name, model=spec.model, dimension=spec.dimension,
                 index_type=vector_index.type, parent=parent, chunks=version.chunk_count)
        return version

    def _check_new(self, cur: Any, name: str, parent: str | None, spec: VersionSpec) -> bool:
        """A new version's name is no alias, its parent fits, and no foreign table holds the name.
        True when a version table of the name exists with no registry row: a crashed run's debris."""
        if self._alias_version(cur, name) is not None:
            raise VersionConflict(f"{name} is already an alias; a version cannot share its name", version=name)
        if parent is not None:
            self._check_parent(self._version_row(cur, parent), spec)
        cur.execute(sql.TABLE_COLUMNS_SQL, {"table_name": name})
        columns = {str(r[0]).lower() for r in cur.fetchall()}
        if columns and columns != set(sql.TABLE_COLUMNS):
            raise VersionConflict(f"a table named {name} already exists in the schema and is not a RAG version; "
                                  "choose another index_name", version=name)
        self._check_derived(cur, name)
        return bool(columns)

    @staticmethod
    def _check_derived(cur: Any, name: str) -> None:
        """The new version's question and summary tables are its own or do not exist yet: ``CREATE TABLE
        IF NOT EXISTS`` would keep another object of the name, ``create_version`` empty it and
        ``drop_version`` drop it (a version, alias or foreign table named so before the suffix rule)."""
        own = {sql.questions_table(name): set(sql.QUESTION_COLUMNS), sql.summaries_table(name): set(sql.SUMMARY_COLUMNS)}
        q, s = own
        cur.execute(sql.DERIVED_CLAIMS_SQL, {"questions": q, "summaries": s})
        registered: set[str] = set()
        columns: dict[str, set[str]] = {}
        for table, column in cur.fetchall():
            if column is None:
                registered.add(str(table))
            else:
                columns.setdefault(str(table), set()).add(str(column).lower())
        for table, wanted in own.items():
            if table in registered or columns.get(table, wanted) != wanted:
                what = "a registered version or alias" if table in registered else "a table or view that is not its own"
                raise VersionConflict(f"cannot create version {name}: its derived table {table} is already {what}; "
                                      "creating it would empty that table and dropping it would drop it; choose "
                                      "another index_name", version=name, table=table)

    def _existing(self, cur: Any, row: VersionRow, spec: VersionSpec) -> IndexVersion:
        wanted = (spec.model, spec.dimension, spec.distance)
        if (row.model, row.dimension, row.distance) != wanted:
            raise VersionConflict(
                f"index version {row.name} exists with model {row.model} ({row.dimension} dims, {row.distance}); "
                f"cannot reuse it for {spec.model} ({spec.dimension} dims, {spec.distance}); "
                "choose a new index_name", version=row.name)
        if stamped_format(row.retrieval) != stamped_format(spec.retrieval):
            raise VersionConflict(
                f"index version {row.name} holds {stamped_format(row.retrieval)} vectors; cannot write "
                f"{stamped_format(spec.retrieval)} ones into it (formats never mix): build a new version",
                version=row.name)
        return self._to_version(cur, row)

    def _restamped(self, version: IndexVersion, spec: VersionSpec) -> IndexVersion:
        """``version`` (existing) with the stamp ``spec`` carries, recorded when it differs; outside
        the read-only snapshot that found it, so a pool of one connection never waits on itself."""
        if spec.retrieval is None or dict(spec.retrieval) == dict(version.retrieval or {}):
            return version
        self.restamp(version.name, spec.retrieval)
        return replace(version, retrieval=dict(spec.retrieval), generation=version.generation + 1)

    def restamp(self, version: str, retrieval: Mapping[str, Any]) -> None:
        """Record other retrieval settings on an existing (unserved or ``--in-place``) version."""
        name = sql.oracle_name(version, "index_name")
        with self._db.transaction(f"recording the retrieval settings of {name}") as con:
            con.cursor().execute(_RESTAMP_VERSION, {"retrieval": stamp_text(retrieval), "name": name})
        log.info("store.version_restamped", version=name)

    def resolve_retrieval(self, target: str) -> tuple[str, Mapping[str, Any] | None]:
        """One statement (alias and version in one round trip), so a rotation is never half seen."""
        with self._db.connection("resolving a retrieval target") as con:
            row = self._resolve_target(con.cursor(), target)
        return row.name, row.retrieval

    @staticmethod
    def _check_parent(parent: VersionRow, spec: VersionSpec) -> None:
        if (parent.model, parent.dimension) != (spec.model, spec.dimension):
            raise VersionConflict(
                f"cannot build {spec.name} from {parent.name}: {parent.name} holds {parent.model} vectors "
                f"({parent.dimension} dims), {spec.name} is for {spec.model} ({spec.dimension} dims); "
                "re-ingest without a parent", version=spec.name)

    def _index_status(self, cur: Any, table: str) -> dict[str, tuple[str | None, str | None]]:
        cur.execute(sql.INDEX_STATUS_SQL, {"table_name": table})
        return {str(r[0]).upper(): (r[1], r[2]) for r in cur.fetchall()}

    def _ensure_domain_indexes(self, cur: Any, name: str) -> None:
        """The Oracle Text and JSON search indexes, each created if missing and dropped (``FORCE``) and
        created again if an earlier ``CREATE`` failed half-way: such an index exists (ORA-00955 on the
        next ``CREATE``) but is ``FAILED`` in ``USER_INDEXES.DOMIDX_OPSTATUS`` and unusable."""
        wanted: list[tuple[str, str]] = []
        if self._settings.lexical_index:
            wanted.append((sql.index_names(name)[1], sql.text_index_ddl(name)))
        if self._settings.metadata_index:
            wanted.append((sql.metadata_index_name(name), sql.metadata_index_ddl(name)))
        if not wanted:
            return
        status = self._index_status(cur, name)
        for index, ddl in wanted:
            if index in status and _usable(*status[index]):
                continue
            if index in status:
                log.warning("store.index_rebuilt", index=index, status=status[index][0], opstatus=status[index][1])
                cur.execute(sql.drop_index_ddl(index, force=True))
            execute_ddl(cur, ddl)

    def _after_load(self, cur: Any, name: str) -> None:
        """Once the rows are in (L5): the Text and JSON search indexes, synced on each commit of the load's
        small batches, are optimized (``CTX_DDL.OPTIMIZE_INDEX`` ``FULL``), and statistics are gathered
        on the chunk, question and summary tables (``DBMS_STATS.GATHER_TABLE_STATS``, indexes included).
        Each is advisory: a refusal (a missing ``EXECUTE`` on ``CTX_DDL``) is logged, not raised."""
        import oracledb

        calls: list[tuple[str, dict[str, str]]] = []
        if self._settings.lexical_index:
            calls.append((sql.OPTIMIZE_TEXT_INDEX_SQL, {"idx_name": sql.index_names(name)[1]}))
        if self._settings.metadata_index:
            calls.append((sql.OPTIMIZE_TEXT_INDEX_SQL, {"idx_name": sql.metadata_index_name(name)}))
        calls += [(sql.GATHER_TABLE_STATS_SQL, {"tabname": table}) for table in sql.stats_tables(name)]
        for statement, binds in calls:
            try:
                cur.execute(statement, binds)
            except oracledb.DatabaseError as exc:
                log.warning("store.after_load_skipped", version=name, call=statement.split("(")[0][6:],
                            target=next(iter(binds.values())), error=str(exc).strip()[:200])

    def finish_load(self, version: str) -> None:
        """Under the admin lock of the version: a second call waits, then finds the index built and
        changes nothing (no DROP INDEX racing CREATE VECTOR INDEX)."""
        name = sql.oracle_name(version, "index_name")
        with admin_lock(self._db, f"finishing the load of {name}", versions=(name,)):
            self._finish_load(name)

    def _finish_load(self, version: str) -> None:
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
        with self._db.snapshot(f"finishing the load of {name}") as con:
            cur = con.cursor()
            row = self._version_row(cur, name)
            status = {**self._index_status(cur, name), **self._index_status(cur, sql.questions_table(name))}
            # counted once here, in the snapshot that read the generation, and recorded with the build
            # so that listing versions reads them instead of scanning every row (L9)
            cur.execute(sql.counts_sql(name))
            counts = [int(c or 0) for c in cur.fetchone()]
            chunks = counts[0]
        spec = row.vector_index(self._settings.vector_index)
        built = (row.index_params or {}).get("built_generation") == row.generation
        indexes = self._pending_vector_indexes(name, row.distance, spec, built, status)
        if spec.type == "hnsw" and indexes and chunks > 0:
            # before anything is dropped or changed (review §2.6): does the graph fit the vector pool?
            pending = {index for index, _ in indexes}
            verdict = self._pool_verdict(name, row.dimension, chunks if sql.index_names(name)[0] in pending else 0,
                                         sql.question_vector_index_name(name) in pending, spec,
                                         sql.VECTOR_FORMATS[stamped_format(row.retrieval)])
            if verdict.action == "fail":
                raise StoreError(verdict.message, version=name, needed_bytes=verdict.needed,
                                 free_bytes=verdict.free)
            if verdict.action == "ivf":
                log.warning("store.vector_pool_fallback", version=name, needed_bytes=verdict.needed,
                            free_bytes=verdict.free, detail=verdict.message)
                spec = spec.model_copy(update={"type": "ivf"})
                indexes = self._pending_vector_indexes(name, row.distance, spec, False, status)
            elif verdict.message:
                log.warning("store.vector_pool_short", version=name, needed_bytes=verdict.needed,
                            free_bytes=verdict.free, detail=verdict.message)
        with self._db.connection(f"building the indexes of {name}", then=RESUMES) as con:
            cur = con.cursor()
            self._ensure_domain_indexes(cur, name)
            self._ensure_acl_index(cur, name, status)
            self._ensure_vpd(cur, name)
            if built and not indexes:
                return
            if chunks == 0:
                log.info("store.vector_index_deferred", version=name, reason="no rows yet")
                return
            for index, ddl in indexes:
                cur.execute(sql.drop_index_ddl(index))
                cur.execute(ddl)
            self._after_load(cur, name)
            params = {**json.loads(index_params(spec)), "built_generation": row.generation, "counts": counts}
            cur.execute("UPDATE RAG_VERSIONS SET index_params = :params WHERE name = :name",
                        {"params": json.dumps(params, sort_keys=True), "name": name})
            if spec.type != row.index_type:
                cur.execute(_SET_INDEX_TYPE, {"index_type": spec.type, "name": name})
            con.commit()
        log.info("store.vector_index_built", version=name, index_type=spec.type, chunks=chunks,
                 generation=row.generation)

    @staticmethod
    def _pending_vector_indexes(name: str, distance: str, spec: OracleVectorIndexSettings, built: bool,
                                status: Mapping[str, tuple[str | None, str | None]]) -> list[tuple[str, str]]:
        """``(index, DDL)`` of the vector indexes (chunks, questions) ``finish_load`` must (re)build: all
        of them unless built at the present generation and usable."""
        return [(index, ddl) for index, ddl in (
            (sql.index_names(name)[0], sql.vector_index_ddl(name, distance, spec)),  # type: ignore[arg-type]
            (sql.question_vector_index_name(name), sql.question_vector_index_ddl(name, distance, spec)),  # type: ignore[arg-type]
        ) if ddl is not None and not (built and index in status and _usable(*status[index]))]

    def _pool_verdict(self, name: str, dimension: int, chunks: int, questions_pending: bool,
                      spec: OracleVectorIndexSettings, chunk_format: str = "FLOAT32") -> vector_pool.PoolVerdict:
        """Read-only, on a connection of its own: the advisor's size for the graphs to build (the chunk
        graph: ``chunks`` vectors, 0 when it stays; the question graph when pending and there are
        questions), against the pool's free bytes. The chunk graph is sized in the version's vector
        format (``chunk_format``: INT8 needs a quarter of FLOAT32's bytes); questions are FLOAT32. An unreadable pool leaves HNSW as before; an
        unreadable advisor, the documented formula."""
        import oracledb

        with self._db.connection(f"sizing the vector pool for {name}") as con:
            cur = con.cursor()
            try:
                cur.execute(sql.VECTOR_POOL_SQL)
                free = vector_pool.free_bytes(cur.fetchall())
            except oracledb.DatabaseError as exc:
                log.warning("store.vector_pool_unreadable", version=name, error=str(exc).strip()[:200],
                            fix="GRANT SELECT_CATALOG_ROLE (or READ ON SYS.V_$VECTOR_MEMORY_POOL) to the store's user")
                free = None
            if free is None:
                return vector_pool.PoolVerdict("hnsw", None, None)
            questions = 0
            if questions_pending:
                try:
                    cur.execute(sql.question_count_sql(name))
                    questions = int(cur.fetchone()[0])
                except oracledb.DatabaseError:
                    questions = 0
            needed = sum(self._advised(cur, name, vectors, dimension, spec, fmt)
                         for vectors, fmt in ((chunks, chunk_format), (questions, "FLOAT32")) if vectors > 0)
        return vector_pool.decide(version=name, needed=needed, free=free,
                                  shortfall=spec.pool_shortfall)

    @staticmethod
    def _advised(cur: Any, name: str, vectors: int, dimension: int, spec: OracleVectorIndexSettings,
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

    def _ensure_acl_index(self, cur: Any, name: str, status: Mapping[str, tuple[str | None, str | None]]) -> None:
        """The multivalue index on ``rag_acl`` (``sql.acl_index_ddl``, review §2.9), created if missing
        (``store.oracle.acl_index``); it goes with the table when the version is dropped."""
        if not self._settings.acl_index:
            return
        index = sql.acl_index_name(name)
        if index in status and _usable(*status[index]):
            return
        if index in status:
            log.warning("store.index_rebuilt", index=index, status=status[index][0], opstatus=status[index][1])
            cur.execute(sql.drop_index_ddl(index))
        execute_ddl(cur, sql.acl_index_ddl(name))

    def _ensure_vpd(self, cur: Any, name: str) -> None:
        """With ``store.oracle.vpd: on``: the version table's row-level policy (``vpd``), added if missing."""
        if self._settings.vpd == "on":
            vpd.add_policy(cur, name)

    def get_version(self, name: str) -> IndexVersion:
        name = sql.oracle_name(name, "index_name")
        with self._db.connection("reading") as con:
            cur = con.cursor()
            return self._to_version(cur, self._version_row(cur, name))

    def list_versions(self) -> list[IndexVersion]:
        with self._db.connection("listing versions") as con:
            cur = con.cursor()
            cur.execute(f"SELECT {sql.VERSION_SELECT} FROM RAG_VERSIONS v ORDER BY v.created_at")
            rows = [VersionRow.from_row(r) for r in cur.fetchall()]
            return [self._to_version(cur, r) for r in rows]

    def drop_version(self, name: str) -> None:
        """Under the admin lock of the version: no rotation can target it between the protection
        check and the drop (the first DDL commits, so no lock of the dropping session would last)."""
        name = sql.oracle_name(name, "index_name")
        self.__dict__.get("_formats", {}).pop(name, None)  # the store's per-version format cache
        with admin_lock(self._db, f"dropping version {name}", versions=(name,)):
            self._drop_version(name)

    def _drop_version(self, name: str) -> None:
        """The table first (DDL commits by itself), then the registry row: a failed ``DROP`` leaves a
        registered version to drop again, never a table no registry row knows about."""
        name = sql.oracle_name(name, "index_name")
        with self._db.transaction(f"dropping version {name}") as con:
            cur = con.cursor()
            self._version_row(cur, name)
            reasons = self._protection(cur, name)
            if reasons:
                raise StoreError(f"cannot drop {name}: it is protected ({', '.join(reasons)}); point the alias "
                                 "elsewhere first", version=name, reasons=reasons)
            for ddl in sql.drop_enrichment_ddl(name):
                cur.execute(ddl)
            if self._settings.vpd == "on":
                vpd.drop_policy(cur, name)
            cur.execute(sql.drop_version_ddl(name))
            cur.execute("DELETE FROM RAG_VERSIONS WHERE name = :name", {"name": name})
        log.info("store.version_dropped", version=name)

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None:
        version = sql.oracle_name(version, "index_name")
        with self._db.transaction("recording an evaluation") as con:
            cur = con.cursor()
            cur.setinputsizes(report=oracledb_json())
            cur.execute("UPDATE RAG_VERSIONS SET evaluation = :report WHERE name = :name",
                        {"report": json_safe(report), "name": version})
            if cur.rowcount == 0:
                raise VersionNotFound(f"index version {version!r} does not exist", version=version)

    # --- aliases -------------------------------------------------------------------
    def point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                    expected_generation: int | None = None) -> AliasChange:
        """Under the admin lock of the alias and the version: ``previous`` is read by the only rotation
        of the alias in flight, and the version cannot be dropped or rebuilt meanwhile."""
        alias = sql.oracle_name(alias, "alias name")
        version = sql.oracle_name(version, "index_name")
        with admin_lock(self._db, f"pointing alias {alias} at {version}", aliases=(alias,), versions=(version,)):
            return self._point_alias(alias, version, reason=reason, forced=forced,
                                     expected_generation=expected_generation)

    def _point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                     expected_generation: int | None = None) -> AliasChange:
        alias = sql.oracle_name(alias, "alias name")
        version = sql.oracle_name(version, "index_name")
        view_ddl = sql.alias_view_ddl(alias, version)
        with self._db.transaction(f"pointing alias {alias} at {version}") as con:
            cur = con.cursor()
            target = self._version_row(cur, version)
            self._check_generation(alias, version, target.generation, expected_generation)  # fail early
            if self._find_version(cur, alias) is not None:
                raise VersionConflict(f"{alias} is a version name; an alias cannot share it", alias=alias)
            previous = self._alias_version(cur, alias)
            if previous is not None and not forced:
                old = self._version_row(cur, previous)
                if not same_model(old.model, target.model) or old.dimension != target.dimension:
                    raise VersionConflict(
                        f"alias {alias} serves {previous} ({old.model}, {old.dimension} dims); {version} uses "
                        f"{target.model} ({target.dimension} dims). Queries would be embedded with the wrong "
                        "model; use --force only if the readers change model too", alias=alias)
            # DDL commits implicitly: the view first, then the registry rows in one transaction
            cur.execute(view_ddl)
            changed = now_iso()
            try:
                # lock the registry rows of both versions: a write holding one finishes first, a write
                # that comes later sees the new protection (see write_documents). The generation is
                # read again under that lock: a write that committed while this waited is seen (C6)
                cur.execute(sql.LOCK_ALIAS_VERSIONS_SQL, {"version": version, "previous": previous or version})
                locked = {str(name): int(generation or 0) for name, generation in cur.fetchall()}
                if expected_generation is not None and version not in locked:
                    raise self._not_found(version)
                self._check_generation(alias, version, locked.get(version, 0), expected_generation)
                self._record_alias(cur, alias, version, previous, changed, reason, forced)
            except BaseException:
                con.rollback()
                cur.execute(sql.alias_view_ddl(alias, previous) if previous else sql.drop_alias_ddl(alias))
                raise
        log.info("store.alias_pointed", alias=alias, version=version, previous=previous, forced=forced)
        return AliasChange(alias, version, previous, changed, reason, forced)

    @staticmethod
    def _check_generation(alias: str, version: str, generation: int, expected: int | None) -> None:
        if expected is not None and generation != expected:
            raise VersionChanged(
                f"{version} changed since it was evaluated (generation {generation}, evaluated {expected}): a "
                f"write committed in between; {alias} was not rotated, evaluate it again",
                version=version, alias=alias)

    @staticmethod
    def _record_alias(cur: Any, alias: str, version: str, previous: str | None, changed: str, reason: str,
                      forced: bool) -> None:
        cur.execute(
            "MERGE INTO RAG_ALIASES a USING (SELECT :alias AS alias_name, :version AS version_name, "
            ":changed AS changed_at FROM SYS.DUAL) s ON (a.alias_name = s.alias_name) "
            "WHEN MATCHED THEN UPDATE SET a.version_name = s.version_name, a.changed_at = s.changed_at "
            "WHEN NOT MATCHED THEN INSERT (alias_name, version_name, changed_at) "
            "VALUES (s.alias_name, s.version_name, s.changed_at)",
            {"alias": alias, "version": version, "changed": changed},
        )
        cur.execute(
            "INSERT INTO RAG_ALIAS_HISTORY (alias_name, version_name, previous, changed_at, reason, forced) "
            "VALUES (:alias, :version, :previous, :changed, :reason, :forced)",
            {"alias": alias, "version": version, "previous": previous, "changed": changed, "reason": reason,
             "forced": int(forced)},
        )

    def rollback_alias(self, alias: str, *, reason: str = "rollback", forced: bool = False) -> AliasChange:
        """Point ``alias`` back at the version it served before its latest change; the history is read
        under the alias's admin lock, so no rotation lands between the read and the rollback."""
        alias = sql.oracle_name(alias, "alias name")
        with admin_lock(self._db, f"rolling back alias {alias}", aliases=(alias,)) as lock:
            history = self.alias_history(alias)
            if not history:
                raise AliasNotFound(f"alias {alias} has no history to roll back", alias=alias)
            previous = history[0].previous
            if previous is None:
                raise StoreError(f"alias {alias} has no previous version: {history[0].version} was its first",
                                 alias=alias)
            lock.add(previous)
            return self._point_alias(alias, previous, reason=reason, forced=forced)

    def drop_alias(self, alias: str) -> None:
        """Remove an alias and its view (its history stays, for the record)."""
        alias = sql.oracle_name(alias, "alias name")
        with admin_lock(self._db, f"dropping alias {alias}", aliases=(alias,)), \
                self._db.transaction(f"dropping alias {alias}") as con:
            cur = con.cursor()
            cur.execute("DELETE FROM RAG_ALIASES WHERE alias_name = :alias", {"alias": alias})
            if cur.rowcount == 0:
                raise AliasNotFound(f"alias {alias} does not exist", alias=alias)
            cur.execute(sql.drop_alias_ddl(alias))
        log.info("store.alias_dropped", alias=alias)

    def resolve_alias(self, alias: str) -> str | None:
        """One statement, so no read-only transaction is needed (a statement is read-consistent)."""
        alias = sql.oracle_name(alias, "alias name")
        with self._db.connection("resolving an alias") as con:
            return self._alias_version(con.cursor(), alias)

    def list_aliases(self) -> dict[str, str]:
        with self._db.connection("listing aliases") as con:
            cur = con.cursor()
            cur.execute("SELECT alias_name, version_name FROM RAG_ALIASES ORDER BY alias_name")
            return {r[0]: r[1] for r in cur.fetchall()}

    def alias_history(self, alias: str) -> list[AliasChange]:
        alias = sql.oracle_name(alias, "alias name")
        with self._db.connection("reading alias history") as con:
            cur = con.cursor()
            cur.execute(
                "SELECT alias_name, version_name, previous, changed_at, reason, forced FROM RAG_ALIAS_HISTORY "
                "WHERE alias_name = :alias ORDER BY id DESC", {"alias": alias})
            return [AliasChange(r[0], r[1], r[2], r[3], r[4] or "", bool(r[5])) for r in cur.fetchall()]


def _usable(status: str | None, opstatus: str | None) -> bool:
    """``USER_INDEXES``: ``STATUS`` VALID (or N/A for partitioned) and, for a domain index (Oracle Text,
    JSON search), ``DOMIDX_OPSTATUS`` not FAILED."""
    return (status or "VALID").upper() in ("VALID", "N/A") and (opstatus or "VALID").upper() == "VALID"

