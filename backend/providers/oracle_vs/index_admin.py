"""Versions, alias views and their history on Oracle (seed 004's ``index_admin``).

``RAG_VERSIONS`` records each physical table's model, dimension, distance and
index type; ``RAG_ALIASES`` is the source of truth for what an alias serves
(readers resolve it inside their read-only snapshot); the alias view
(``CREATE OR REPLACE VIEW``, one statement) serves SQL tools and reports.
``RAG_ALIAS_HISTORY`` keeps every change so a rotation can be rolled back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

import structlog

from backend.common.config import OracleSettings
from backend.common.errors import AliasNotFound, StoreError, VersionConflict, VersionNotFound
from backend.common.identifiers import validate_identifier
from backend.core.types import AliasChange, IndexVersion, VersionSpec
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OracleConnector

log = structlog.get_logger(__name__)
_VERSION_COLUMNS = "name, embed_model, dimension, distance, index_type, profile, created_at, evaluation"
_VERSION_SELECT = ("name, embed_model, dimension, distance, index_type, profile, created_at, "
                   + sql.json_text("evaluation", "evaluation"))


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

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> "VersionRow":
        name, model, dim, distance, index_type, profile, created, evaluation = row
        return cls(name, model, int(dim), distance, index_type, profile, created, json_value(evaluation))


def execute_ddl(cur: Any, statement: str) -> bool:
    """Run DDL; an object left by an earlier run (ORA-00955/01408) is not an error."""
    import oracledb

    try:
        cur.execute(statement)
    except oracledb.DatabaseError as exc:
        err = exc.args[0] if exc.args else None
        if getattr(err, "code", None) in sql.ALREADY_EXISTS:
            return False
        raise
    return True


class OracleIndexAdmin:
    """``IndexAdmin`` over a connector; ``OracleVectorStore`` builds on it."""

    def __init__(self, connector: OracleConnector, settings: OracleSettings) -> None:
        self._db = connector
        self._settings = settings

    @property
    def endpoint(self) -> str:
        return self._db.where

    def ensure_catalog(self) -> None:
        with self._db.connection("creating the catalog tables") as con:
            cur = con.cursor()
            for ddl in sql.CATALOG_DDL:
                cur.execute(ddl)

    # --- version rows ------------------------------------------------------------
    def _find_version(self, cur: Any, name: str) -> VersionRow | None:
        cur.execute(f"SELECT {_VERSION_SELECT} FROM RAG_VERSIONS WHERE name = :name", {"name": name})
        row = cur.fetchone()
        return VersionRow.from_row(row) if row else None

    def _version_row(self, cur: Any, name: str) -> VersionRow:
        row = self._find_version(cur, name)
        if row is None:
            raise VersionNotFound(f"index version {name!r} does not exist in the Oracle store at {self.endpoint}",
                                  version=name)
        return row

    def _alias_version(self, cur: Any, alias: str) -> str | None:
        cur.execute("SELECT version_name FROM RAG_ALIASES WHERE alias_name = :alias", {"alias": alias})
        row = cur.fetchone()
        return row[0] if row else None

    def _resolve_target(self, cur: Any, target: str) -> VersionRow:
        validate_identifier(target, "retrieval target")
        version = self._alias_version(cur, target)
        if version is not None:
            return self._version_row(cur, version)
        row = self._find_version(cur, target)
        if row is None:
            raise AliasNotFound(f"{target!r} is neither an alias nor an index version; ingest and promote first",
                                target=target)
        return row

    def _to_version(self, cur: Any, row: VersionRow) -> IndexVersion:
        cur.execute(sql.counts_sql(row.name))
        chunks, docs = cur.fetchone()
        return IndexVersion(row.name, row.model, row.dimension, row.distance, row.created_at,  # type: ignore[arg-type]
                            int(chunks), int(docs), row.profile, row.evaluation)

    # --- versions ------------------------------------------------------------------
    def create_version(self, spec: VersionSpec) -> IndexVersion:
        name = validate_identifier(spec.name, "index_name")
        sql.metric(spec.distance)
        table_ddl = sql.version_table_ddl(name, spec.dimension)
        with self._db.transaction(f"creating version {name}") as con:
            cur = con.cursor()
            row = self._find_version(cur, name)
            if row is not None:
                wanted = (spec.model, spec.dimension, spec.distance)
                if (row.model, row.dimension, row.distance) != wanted:
                    raise VersionConflict(
                        f"index version {name} exists with model {row.model} ({row.dimension} dims, {row.distance}); "
                        f"cannot reuse it for {spec.model} ({spec.dimension} dims, {spec.distance}); "
                        "choose a new index_name", version=name)
                return self._to_version(cur, row)
            if self._alias_version(cur, name) is not None:
                raise VersionConflict(f"{name} is already an alias; a version cannot share its name", version=name)
            cur.execute(table_ddl)
            cur.execute(sql.doc_index_ddl(name))
            index_type = self._settings.vector_index.type
            if index_type == "hnsw":
                # IVF centroids are trained on the rows present, so IVF waits for the first promotion
                execute_ddl(cur, sql.vector_index_ddl(name, spec.distance, self._settings.vector_index) or "")
            if self._settings.lexical_index:
                execute_ddl(cur, sql.text_index_ddl(name))
            if self._settings.metadata_index:
                execute_ddl(cur, sql.metadata_index_ddl(name))
            cur.execute(
                f"INSERT INTO RAG_VERSIONS ({_VERSION_COLUMNS}) VALUES "
                "(:name, :embed_model, :dimension, :distance, :index_type, :profile, :created_at, NULL)",
                {"name": name, "embed_model": spec.model, "dimension": spec.dimension, "distance": spec.distance,
                 "index_type": index_type, "profile": spec.profile, "created_at": now_iso()},
            )
            log.info("store.version_created", version=name, model=spec.model, dimension=spec.dimension,
                     index_type=index_type)
            return self._to_version(cur, self._version_row(cur, name))

    def get_version(self, name: str) -> IndexVersion:
        validate_identifier(name, "index_name")
        with self._db.snapshot() as con:
            cur = con.cursor()
            return self._to_version(cur, self._version_row(cur, name))

    def list_versions(self) -> list[IndexVersion]:
        with self._db.snapshot("listing versions") as con:
            cur = con.cursor()
            cur.execute(f"SELECT {_VERSION_SELECT} FROM RAG_VERSIONS ORDER BY created_at")
            rows = [VersionRow.from_row(r) for r in cur.fetchall()]
            return [self._to_version(cur, r) for r in rows]

    def drop_version(self, name: str) -> None:
        validate_identifier(name, "index_name")
        with self._db.transaction(f"dropping version {name}") as con:
            cur = con.cursor()
            self._version_row(cur, name)
            cur.execute("SELECT alias_name FROM RAG_ALIASES WHERE version_name = :name", {"name": name})
            users = [r[0] for r in cur.fetchall()]
            if users:
                raise StoreError(f"cannot drop {name}: alias {', '.join(users)} points at it", version=name)
            cur.execute("DELETE FROM RAG_VERSIONS WHERE name = :name", {"name": name})
            cur.execute(sql.drop_version_ddl(name))
        log.info("store.version_dropped", version=name)

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None:
        validate_identifier(version, "index_name")
        with self._db.transaction("recording an evaluation") as con:
            cur = con.cursor()
            cur.setinputsizes(report=oracledb_json())
            cur.execute("UPDATE RAG_VERSIONS SET evaluation = :report WHERE name = :name",
                        {"report": json_safe(report), "name": version})
            if cur.rowcount == 0:
                raise VersionNotFound(f"index version {version!r} does not exist", version=version)

    # --- aliases -------------------------------------------------------------------
    def point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False) -> AliasChange:
        validate_identifier(alias, "alias name")
        validate_identifier(version, "index_name")
        view_ddl = sql.alias_view_ddl(alias, version)
        with self._db.transaction(f"pointing alias {alias} at {version}") as con:
            cur = con.cursor()
            target = self._version_row(cur, version)
            if self._find_version(cur, alias) is not None:
                raise VersionConflict(f"{alias} is a version name; an alias cannot share it", alias=alias)
            previous = self._alias_version(cur, alias)
            if previous is not None and not forced:
                old = self._version_row(cur, previous)
                if (old.model, old.dimension) != (target.model, target.dimension):
                    raise VersionConflict(
                        f"alias {alias} serves {previous} ({old.model}, {old.dimension} dims); {version} uses "
                        f"{target.model} ({target.dimension} dims). Queries would be embedded with the wrong "
                        "model; use --force only if the readers change model too", alias=alias)
            if target.index_type == "ivf":
                execute_ddl(cur, sql.vector_index_ddl(version, target.distance,  # type: ignore[arg-type]
                                                      self._settings.vector_index) or "")
            # DDL commits implicitly: the view first, then the registry rows in one transaction
            cur.execute(view_ddl)
            changed = now_iso()
            try:
                self._record_alias(cur, alias, version, previous, changed, reason, forced)
            except BaseException:
                con.rollback()
                cur.execute(sql.alias_view_ddl(alias, previous) if previous else sql.drop_alias_ddl(alias))
                raise
        log.info("store.alias_pointed", alias=alias, version=version, previous=previous, forced=forced)
        return AliasChange(alias, version, previous, changed, reason, forced)

    @staticmethod
    def _record_alias(cur: Any, alias: str, version: str, previous: str | None, changed: str, reason: str,
                      forced: bool) -> None:
        cur.execute(
            "MERGE INTO RAG_ALIASES a USING (SELECT :alias AS alias_name, :version AS version_name, "
            ":changed AS changed_at FROM dual) s ON (a.alias_name = s.alias_name) "
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
        """Point ``alias`` back at the version it served before its latest change."""
        history = self.alias_history(alias)
        if not history:
            raise AliasNotFound(f"alias {alias} has no history to roll back", alias=alias)
        previous = history[0].previous
        if previous is None:
            raise StoreError(f"alias {alias} has no previous version: {history[0].version} was its first",
                             alias=alias)
        return self.point_alias(alias, previous, reason=reason, forced=forced)

    def drop_alias(self, alias: str) -> None:
        """Remove an alias and its view (its history stays, for the record)."""
        validate_identifier(alias, "alias name")
        with self._db.transaction(f"dropping alias {alias}") as con:
            cur = con.cursor()
            cur.execute("DELETE FROM RAG_ALIASES WHERE alias_name = :alias", {"alias": alias})
            if cur.rowcount == 0:
                raise AliasNotFound(f"alias {alias} does not exist", alias=alias)
            cur.execute(sql.drop_alias_ddl(alias))
        log.info("store.alias_dropped", alias=alias)

    def resolve_alias(self, alias: str) -> str | None:
        validate_identifier(alias, "alias name")
        with self._db.snapshot() as con:
            return self._alias_version(con.cursor(), alias)

    def list_aliases(self) -> dict[str, str]:
        with self._db.snapshot("listing aliases") as con:
            cur = con.cursor()
            cur.execute("SELECT alias_name, version_name FROM RAG_ALIASES ORDER BY alias_name")
            return {r[0]: r[1] for r in cur.fetchall()}

    def alias_history(self, alias: str) -> list[AliasChange]:
        validate_identifier(alias, "alias name")
        with self._db.snapshot() as con:
            cur = con.cursor()
            cur.execute(
                "SELECT alias_name, version_name, previous, changed_at, reason, forced FROM RAG_ALIAS_HISTORY "
                "WHERE alias_name = :alias ORDER BY id DESC", {"alias": alias})
            return [AliasChange(r[0], r[1], r[2], r[3], r[4] or "", bool(r[5])) for r in cur.fetchall()]
