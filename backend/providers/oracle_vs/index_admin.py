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

Why one module over 500 lines: it is the ``IndexAdmin`` port on Oracle, one method per port
operation, each with its own DDL-then-registry order for the commits above; the SQL text is in
``sql`` (``version_ddl``, ``catalog_sql``), the load finisher in ``load_indexes`` and the locks in
``admin_lock`` / ``series_lock``, so a further split would cut an operation from its ordering rule.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

import structlog

from backend.common.config import OracleSettings
from backend.common.errors import AliasNotFound, ConfigError, StoreError, VersionChanged, VersionConflict, VersionNotFound
from backend.core.model_stamp import same_model
from backend.core.types import AliasChange, IndexVersion, LockHolder, VersionSpec
from backend.core.vector_format import bytes_per_dimension, stamped_format
from backend.providers.oracle_vs import sql, vpd
from backend.providers.oracle_vs.connection import RESUMES, OracleConnector
from backend.providers.oracle_vs.admin_lock import admin_lock
from backend.providers.oracle_vs.load_indexes import OracleLoadFinisher
from backend.providers.oracle_vs.series_lock import OracleSeriesLease, OracleSeriesLocks
from backend.providers.oracle_vs.versions import (
    VersionRow,
    execute_ddl,
    index_params,
    json_safe,
    now_iso,
    oracledb_json,
    recorded_counts,
    stamp_text,
)

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


def _added_column(ddl: str) -> tuple[str, str]:
    """(table, column) an ``ALTER TABLE t ADD (column ...)`` of ``CATALOG_UPGRADES`` adds, upper-case."""
    found = re.fullmatch(r"ALTER TABLE (\w+) ADD \((\w+) .*\)", ddl)
    assert found is not None, ddl
    return found.group(1).upper(), found.group(2).upper()


class OracleIndexAdmin:
    """``IndexAdmin`` + ``SeriesLocking`` over a connector. Its catalog reads (``find_version``,
    ``version_row``, ``resolve_target``, ``protection``) are public: the vector store reads the
    same rows inside its own transactions."""

    def __init__(self, connector: OracleConnector, settings: OracleSettings) -> None:
        self.connector = connector
        self.settings = settings
        self.loads = OracleLoadFinisher(connector, settings, self)

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> OracleSeriesLease:
        """``SeriesLocking``: a row lock held by a session of its own (``series_lock``). That session
        is a pool connection kept for the whole run, and an administrative step under it holds one more for
        its own lock (``admin_lock``) while it works on a third: a smaller pool would starve the run itself."""
        if self.settings.pool_max < 3:
            raise ConfigError("store.oracle.pool_max must be at least 3: a run keeps one connection to hold the "
                              f"writer lock of series {series}, an administrative step one more for its own lock, "
                              "and works with the others")
        return OracleSeriesLocks(self.connector).lock_series(series, holder, wait_s=wait_s)

    @property
    def endpoint(self) -> str:
        return self.connector.where

    def ensure_catalog(self) -> None:
        """Create the catalog tables, and add the columns a catalog created by an older release lacks."""
        with self.connector.connection("creating the catalog tables") as con:
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
            if self.settings.vpd == "on":
                vpd.ensure_objects(cur)

    # --- version rows ------------------------------------------------------------
    def find_version(self, cur: Any, name: str) -> VersionRow | None:
        cur.execute(sql.FIND_VERSION_SQL, {"name": name})
        row = cur.fetchone()
        return VersionRow.from_row(row) if row else None

    def not_found(self, name: str) -> VersionNotFound:
        return VersionNotFound(f"index version {name!r} does not exist in the Oracle store at {self.endpoint}",
                               version=name)

    def version_row(self, cur: Any, name: str) -> VersionRow:
        row = self.find_version(cur, name)
        if row is None:
            raise self.not_found(name)
        return row

    def _alias_version(self, cur: Any, alias: str) -> str | None:
        cur.execute("SELECT version_name FROM RAG_ALIASES WHERE alias_name = :alias", {"alias": alias})
        row = cur.fetchone()
        return row[0] if row else None

    def resolve_target(self, cur: Any, target: str) -> VersionRow:
        """An alias or a version in one round trip; the error path asks again to say which is missing."""
        name = sql.oracle_name(target, "retrieval target")
        cur.execute(sql.RESOLVE_TARGET_SQL, {"target": name})
        row = cur.fetchone()
        if row:
            return VersionRow.from_row(row)
        version = self._alias_version(cur, name)
        if version is not None:
            raise self.not_found(version)
        raise AliasNotFound(f"{target!r} is neither an alias nor an index version; ingest and promote first",
                            target=target)

    def _to_version(self, cur: Any, row: VersionRow) -> IndexVersion:
        """``size_bytes`` = rows x dimension x bytes per dimension (4 for FLOAT32, 1 for INT8: review 4,
        N3; exact) + characters of text and of
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
        size = int(chunks) * row.dimension * bytes_per_dimension(row.retrieval) + int(chars or 0)
        return IndexVersion(row.name, row.model, row.dimension, row.distance, row.created_at,  # type: ignore[arg-type]
                            int(chunks), int(docs), row.profile, row.evaluation, generation=row.generation,
                            parent=row.parent, size_bytes=size, retrieval=row.retrieval)

    def protection(self, cur: Any, version: str) -> list[str]:
        """``["KB_ACTIVE live", ...]``: why ``version`` must not change (empty when it may)."""
        cur.execute(sql.PROTECTED_ONE_SQL, {"version": version})
        return [f"{alias} {str(why).strip()}" for alias, why in cur.fetchall()]

    def protected_versions(self) -> dict[str, str]:
        with self.connector.connection("listing protected versions") as con:
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
        with admin_lock(self.connector, f"creating version {name}", versions=(name, parent)):
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
        with self.connector.snapshot(f"creating version {name}") as con:
            cur = con.cursor()
            row = self.find_version(cur, name)
            existing = self._existing(cur, row, spec) if row is not None else None
            debris = self._check_new(cur, name, parent, spec) if existing is None else False
            parent_row = self.find_version(cur, parent) if parent is not None and existing is None else None
            if parent_row is not None and stamped_format(parent_row.retrieval) != vector_format:
                raise VersionConflict(f"version {name} ({vector_format} vectors) cannot copy {parent} "
                                      f"({stamped_format(parent_row.retrieval)}): a format change is built from "
                                      "scratch, never mixed", version=name)
        if existing is not None:
            return self._restamped(existing, spec)
        vector_index = self.settings.vector_index
        with self.connector.connection(f"creating version {name}", then=RESUMES) as con:
            cur = con.cursor()
            # a crashed create_version's table that no registry row claims: its VECTOR column may have
            # another dimension (CREATE TABLE IF NOT EXISTS would keep it), so it goes, with its own
            # question and summary tables, and is created anew. Asked again just before the drop; creation
            # runs under the admin lock of the name, so no concurrent creator registers it meanwhile
            if debris and self.find_version(cur, name) is None:
                log.warning("store.version_debris_dropped", version=name)
                for ddl in (*sql.drop_enrichment_ddl(name), sql.drop_version_ddl(name)):
                    cur.execute(ddl)
            cur.execute(table_ddl)
            self.loads.ensure_vpd(cur, name)  # before any row is copied in
            cur.execute(sql.doc_index_ddl(name))
            # a parent made before questions and summaries were stored gets its (empty) tables to copy from
            for owner in (name, parent) if parent is not None else (name,):
                for ddl in sql.enrichment_ddl(owner, spec.dimension):
                    cur.execute(ddl)
            self.loads.ensure_domain_indexes(cur, name)
        try:
            with self.connector.transaction(f"creating version {name}", then=RESUMES) as con:
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
                version = self._to_version(cur, self.version_row(cur, name))
        except StoreError as exc:
            if exc.context.get("code") != "ORA-00001":
                raise
            # another session registered the same name first: same spec is success, another a conflict
            with self.connector.snapshot(f"creating version {name}") as con:
                cur = con.cursor()
                return self._existing(cur, self.version_row(cur, name), spec)
        log.info("store.version_created", version=name, model=spec.model, dimension=spec.dimension,
                 index_type=vector_index.type, parent=parent, chunks=version.chunk_count)
        return version

    def _check_new(self, cur: Any, name: str, parent: str | None, spec: VersionSpec) -> bool:
        """A new version's name is no alias, its parent fits, and no foreign table holds the name.
        True when a version table of the name exists with no registry row: a crashed run's debris."""
        if self._alias_version(cur, name) is not None:
            raise VersionConflict(f"{name} is already an alias; a version cannot share its name", version=name)
        if parent is not None:
            self._check_parent(self.version_row(cur, parent), spec)
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
        with self.connector.transaction(f"recording the retrieval settings of {name}") as con:
            con.cursor().execute(_RESTAMP_VERSION, {"retrieval": stamp_text(retrieval), "name": name})
        log.info("store.version_restamped", version=name)

    @staticmethod
    def _check_parent(parent: VersionRow, spec: VersionSpec) -> None:
        if (parent.model, parent.dimension) != (spec.model, spec.dimension):
            raise VersionConflict(
                f"cannot build {spec.name} from {parent.name}: {parent.name} holds {parent.model} vectors "
                f"({parent.dimension} dims), {spec.name} is for {spec.model} ({spec.dimension} dims); "
                "re-ingest without a parent", version=spec.name)

    def finish_load(self, version: str) -> None:
        """Under the admin lock of the version: a second call waits, then finds the index built and
        changes nothing (no DROP INDEX racing CREATE VECTOR INDEX)."""
        name = sql.oracle_name(version, "index_name")
        with admin_lock(self.connector, f"finishing the load of {name}", versions=(name,)):
            self.loads.finish(name)

    def get_version(self, name: str) -> IndexVersion:
        name = sql.oracle_name(name, "index_name")
        with self.connector.connection("reading") as con:
            cur = con.cursor()
            return self._to_version(cur, self.version_row(cur, name))

    def list_versions(self) -> list[IndexVersion]:
        with self.connector.connection("listing versions") as con:
            cur = con.cursor()
            cur.execute(f"SELECT {sql.VERSION_SELECT} FROM RAG_VERSIONS v ORDER BY v.created_at")
            rows = [VersionRow.from_row(r) for r in cur.fetchall()]
            return [self._to_version(cur, r) for r in rows]

    def drop_version(self, name: str) -> None:
        """Under the admin lock of the version: no rotation can target it between the protection
        check and the drop (the first DDL commits, so no lock of the dropping session would last)."""
        name = sql.oracle_name(name, "index_name")
        with admin_lock(self.connector, f"dropping version {name}", versions=(name,)):
            self._drop_version(name)

    def _drop_version(self, name: str) -> None:
        """The table first (DDL commits by itself), then the registry row: a failed ``DROP`` leaves a
        registered version to drop again, never a table no registry row knows about."""
        name = sql.oracle_name(name, "index_name")
        with self.connector.transaction(f"dropping version {name}") as con:
            cur = con.cursor()
            self.version_row(cur, name)
            reasons = self.protection(cur, name)
            if reasons:
                raise StoreError(f"cannot drop {name}: it is protected ({', '.join(reasons)}); point the alias "
                                 "elsewhere first", version=name, reasons=reasons)
            for ddl in sql.drop_enrichment_ddl(name):
                cur.execute(ddl)
            if self.settings.vpd == "on":
                vpd.drop_policy(cur, name)
            cur.execute(sql.drop_version_ddl(name))
            cur.execute("DELETE FROM RAG_VERSIONS WHERE name = :name", {"name": name})
        log.info("store.version_dropped", version=name)

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None:
        version = sql.oracle_name(version, "index_name")
        with self.connector.transaction("recording an evaluation") as con:
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
        with admin_lock(self.connector, f"pointing alias {alias} at {version}", aliases=(alias,), versions=(version,)):
            return self._point_alias(alias, version, reason=reason, forced=forced,
                                     expected_generation=expected_generation)

    def _point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                     expected_generation: int | None = None) -> AliasChange:
        alias = sql.oracle_name(alias, "alias name")
        version = sql.oracle_name(version, "index_name")
        view_ddl = sql.alias_view_ddl(alias, version)
        with self.connector.transaction(f"pointing alias {alias} at {version}") as con:
            cur = con.cursor()
            target = self.version_row(cur, version)
            self._check_generation(alias, version, target.generation, expected_generation)  # fail early
            if self.find_version(cur, alias) is not None:
                raise VersionConflict(f"{alias} is a version name; an alias cannot share it", alias=alias)
            previous = self._alias_version(cur, alias)
            if previous is not None and not forced:
                old = self.version_row(cur, previous)
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
                locked = {}
                for name in sorted({version, previous or version}):  # name order: crossed rotations queue (M5)
                    cur.execute(sql.LOCK_VERSION_ROW_SQL, {"name": name})
                    locked.update({str(n): int(generation or 0) for n, generation in cur.fetchall()})
                if expected_generation is not None and version not in locked:
                    raise self.not_found(version)
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
        with admin_lock(self.connector, f"rolling back alias {alias}", aliases=(alias,)) as lock:
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
        with admin_lock(self.connector, f"dropping alias {alias}", aliases=(alias,)), \
                self.connector.transaction(f"dropping alias {alias}") as con:
            cur = con.cursor()
            cur.execute("DELETE FROM RAG_ALIASES WHERE alias_name = :alias", {"alias": alias})
            if cur.rowcount == 0:
                raise AliasNotFound(f"alias {alias} does not exist", alias=alias)
            cur.execute(sql.drop_alias_ddl(alias))
        log.info("store.alias_dropped", alias=alias)

    def resolve_alias(self, alias: str) -> str | None:
        """One statement, so no read-only transaction is needed (a statement is read-consistent)."""
        alias = sql.oracle_name(alias, "alias name")
        with self.connector.connection("resolving an alias") as con:
            return self._alias_version(con.cursor(), alias)

    def list_aliases(self) -> dict[str, str]:
        with self.connector.connection("listing aliases") as con:
            cur = con.cursor()
            cur.execute("SELECT alias_name, version_name FROM RAG_ALIASES ORDER BY alias_name")
            return {r[0]: r[1] for r in cur.fetchall()}

    def alias_history(self, alias: str) -> list[AliasChange]:
        alias = sql.oracle_name(alias, "alias name")
        with self.connector.connection("reading alias history") as con:
            cur = con.cursor()
            cur.execute(
                "SELECT alias_name, version_name, previous, changed_at, reason, forced FROM RAG_ALIAS_HISTORY "
                "WHERE alias_name = :alias ORDER BY id DESC", {"alias": alias})
            return [AliasChange(r[0], r[1], r[2], r[3], r[4] or "", bool(r[5])) for r in cur.fetchall()]
