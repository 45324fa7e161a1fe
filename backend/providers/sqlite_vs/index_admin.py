"""``IndexAdmin`` on the SQLite file: versions, aliases, their history, protection, evaluations.

Every version is a set of tables named after it (``schema.version_ddl``), registered in
``rag_versions``; an alias is a view over its version's table, recreated in the same
transaction that records the change, so readers see the old or the new version, never a mix.
Shares the database's connections with the other ports (``connection.SqliteDatabase``).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import structlog

from backend.common.errors import StoreError, VersionChanged, VersionConflict, VersionNotFound
from backend.common.identifiers import validate_identifier
from backend.core.model_stamp import same_model
from backend.core.types import AliasChange, Distance, IndexVersion, LockHolder, VersionSpec
from backend.providers.sqlite_vs import ann, catalog, dense, schema
from backend.providers.sqlite_vs.connection import SqliteDatabase, now
from backend.providers.sqlite_vs.matrices import VersionMatrices
from backend.providers.sqlite_vs.series_lock import FileSeriesLease, FileSeriesLocks

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class ParentIndex:
    """A parent version's current index file and its stamp entry (one side), with the version's rows
    that index lacks (``catalog.carried_rows``) and how many of its entries went stale."""

    path: Path
    entry: Mapping[str, Any]
    added: np.ndarray
    gone: int


class SqliteIndexAdmin:
    """``IndexAdmin`` + ``SeriesLocking`` over one ``SqliteDatabase``."""

    def __init__(self, db: SqliteDatabase, matrices: VersionMatrices) -> None:
        self.db = db
        self.matrices = matrices

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> FileSeriesLease:
        """``SeriesLocking``: an OS file lock beside the database (``series_lock``)."""
        return FileSeriesLocks(self.db.path).lock_series(series, holder, wait_s=wait_s)

    def create_version(self, spec: VersionSpec) -> IndexVersion:
        name = validate_identifier(spec.name, "index_name")
        with self.db.write() as con:
            row = con.execute("SELECT * FROM rag_versions WHERE name = ?", (name,)).fetchone()
            if row is not None:
                existing = (row["model"], row["dimension"], row["distance"])
                wanted = (spec.model, spec.dimension, spec.distance)
                if existing != wanted:
                    raise VersionConflict(
                        f"index version {name} exists with model {existing[0]} ({existing[1]} dims, {existing[2]}); "
                        f"cannot reuse it for {wanted[0]} ({wanted[1]} dims, {wanted[2]}); choose a new index_name",
                        version=name,
                    )
                self._restamp(con, row, spec.retrieval)
            else:
                if con.execute("SELECT 1 FROM rag_aliases WHERE alias = ?", (name,)).fetchone():
                    raise VersionConflict(f"{name} is already an alias; a version cannot share its name", version=name)
                parent = self._check_parent(con, spec)
                for ddl in schema.version_ddl(name):
                    con.execute(ddl)
                if parent is not None:
                    for statement in schema.copy_version_sql(parent, name):
                        con.execute(statement)
                con.execute(
                    "INSERT INTO rag_versions(name, model, dimension, distance, profile, created_at, parent, retrieval) "
                    "VALUES (?,?,?,?,?,?,?,?)",
                    (name, spec.model, spec.dimension, spec.distance, spec.profile, now(), parent,
                     json.dumps(spec.retrieval, sort_keys=True) if spec.retrieval is not None else None),
                )
                log.info("store.version_created", version=name, model=spec.model, dimension=spec.dimension,
                         parent=parent)
            return catalog.to_version(con, catalog.version_row(con, name))

    @staticmethod
    def _restamp(con: sqlite3.Connection, row: sqlite3.Row, retrieval: Mapping[str, Any] | None) -> None:
        """An ingest writing an existing version (a resumed candidate, ``--in-place``) records the
        retrieval settings it runs with; the generation moves, so an earlier evaluation is stale."""
        stamp = json.dumps(retrieval, sort_keys=True) if retrieval is not None else None
        if stamp is None or stamp == row["retrieval"]:
            return
        con.execute("UPDATE rag_versions SET retrieval = ?, generation = generation + 1 WHERE name = ?",
                    (stamp, row["name"]))
        log.info("store.version_restamped", version=row["name"])

    def _check_parent(self, con: sqlite3.Connection, spec: VersionSpec) -> str | None:
        if spec.parent is None:
            return None
        parent = catalog.version_row(con, validate_identifier(spec.parent, "parent version"))
        if (parent["model"], parent["dimension"], parent["distance"]) != (spec.model, spec.dimension, spec.distance):
            raise VersionConflict(
                f"cannot build {spec.name} from {spec.parent}: {spec.parent} holds {parent['model']} "
                f"({parent['dimension']} dims, {parent['distance']}), the new version {spec.model} "
                f"({spec.dimension} dims, {spec.distance}); build it without a parent", version=spec.name)
        return str(parent["name"])

    def protected_versions(self) -> dict[str, str]:
        with self.db.read() as con:
            return catalog.protected(con)


    def finish_load(self, version: str) -> None:
        """Builds the version's HNSW index when it holds ``store.sqlite.ann.min_vectors`` rows or more
        (``_build_indexes``; smaller versions are scanned exactly, the matrix cache reloading by generation).
        The version is counted once and the counts recorded with the generation they describe, so
        listing versions does not scan every row (a later write moves the generation: counted again).
        The record is advisory: a store that cannot take it (a full disk, a read-only file) logs that and
        is counted by scans as before."""
        validate_identifier(version, "index_name")
        try:
            with self.db.write() as con:
                row = catalog.version_row(con, version)
                counts = [row["generation"], *catalog.count(con, row["name"])]
                con.execute("UPDATE rag_versions SET counts = ? WHERE name = ?", (json.dumps(counts), row["name"]))
        except VersionNotFound:
            raise
        except StoreError as exc:
            log.warning("store.counts_not_recorded", version=version, error=str(exc)[:200])
        self._build_indexes(version)

    def _build_indexes(self, version: str) -> None:
        """The version's HNSW indexes (chunks, and questions/summaries where they hold enough rows),
        built outside any write transaction from the cached matrices and stamped with the generation
        they were read at; a write that lands meanwhile moves the generation, so the stamp is not
        recorded and the exact scan answers. A version with a parent whose index is current starts
        from it (``_from_parent``). Failing to build is logged, never fatal: exact stays."""
        if self.db.in_memory or not self.matrices.ann.enabled:
            return
        stamp: dict[str, Any] = {}
        with self.db.read() as con:
            vrow = catalog.version_row(con, version)
            generation = vrow["generation"]
            matrices = {side: self.matrices.matrix(con, vrow, side) for side in ann.SIDES}
            parents = self._parent_indexes(con, vrow)
        try:
            for side, m in matrices.items():
                if len(m.rowids) < self.matrices.ann.min_vectors:
                    continue
                t0 = datetime.now(timezone.utc)
                path = ann.index_file(self.db.path, version, side)
                entry = self._from_parent(path, parents.get(side), m, vrow["distance"])
                if entry is None:
                    entry = ann.build(path, m.rowids, m.vectors, vrow["distance"], self.matrices.ann)
                entry["build_s"] = round((datetime.now(timezone.utc) - t0).total_seconds(), 2)
                entry["built_at"] = now()
                stamp[side or "chunks"] = entry
                log.info("store.ann_built", version=version, side=side or "chunks", **entry)
        except Exception as exc:  # noqa: BLE001 - no index means exact search, never a failed load
            log.warning("store.ann_not_built", version=version, error=str(exc)[:200], fallback="exact search")
            stamp = {}
        with self.db.write() as con:
            row = catalog.version_row(con, version)
            if row["generation"] != generation:
                log.warning("store.ann_stale", version=version, built_at=generation, now=row["generation"])
                return
            con.execute("UPDATE rag_versions SET ann = ? WHERE name = ?",
                        (json.dumps({"generation": generation, **stamp}) if stamp else None, row["name"]))
        self.matrices.drop_indexes(vrow)

    def _parent_indexes(self, con: sqlite3.Connection, vrow: sqlite3.Row) -> dict[str, ParentIndex]:
        """Per side, the parent version's index where its stamp is current (the parent not written
        since its index was built) and it was built with this store's settings."""
        name = vrow["parent"] if "parent" in vrow.keys() else None
        if not name:
            return {}
        prow = con.execute("SELECT * FROM rag_versions WHERE name = ?", (name,)).fetchone()
        stamp = json.loads(prow["ann"]) if prow is not None and prow["ann"] else {}
        if not stamp or stamp.get("generation") != prow["generation"]:
            return {}
        found = {}
        for side in ann.SIDES:
            entry = stamp.get(side or "chunks")
            if entry is not None and ann.reusable(entry, vrow["distance"], self.matrices.ann):
                added, gone = catalog.carried_rows(con, name, vrow["name"], side)
                found[side] = ParentIndex(ann.index_file(self.db.path, name, side), entry, added, gone)
        return found

    def _from_parent(self, path: Path, parent: ParentIndex | None, m: dense.Matrix,
                     distance: Distance) -> dict[str, Any] | None:
        """The index extended from the parent's, or None (build it whole) when there is no usable
        parent index or its stale entries would pass ``store.sqlite.ann.rebuild_stale_share``."""
        if parent is None:
            return None
        keys = int(parent.entry.get("keys", parent.entry["count"]))
        stale = keys - int(parent.entry["count"]) + parent.gone
        if stale > self.matrices.ann.rebuild_stale_share * (keys + len(parent.added)):
            return None
        at = np.searchsorted(m.rowids, parent.added)  # the matrix holds every row of the version, sorted
        try:
            return ann.extend(path, parent.path, parent.entry, m.rowids[at], m.vectors[at], stale, distance,
                              self.matrices.ann)
        except (OSError, RuntimeError) as exc:  # the parent's file is gone or damaged: build it whole
            log.warning("store.ann_not_extended", parent=parent.path.name, error=str(exc)[:200])
            return None

    def get_version(self, name: str) -> IndexVersion:
        validate_identifier(name, "index_name")
        with self.db.read() as con:
            return catalog.to_version(con, catalog.version_row(con, name))

    def list_versions(self) -> list[IndexVersion]:
        with self.db.read() as con:
            rows = con.execute("SELECT * FROM rag_versions ORDER BY created_at").fetchall()
            return [catalog.to_version(con, r) for r in rows]

    def drop_version(self, name: str) -> None:
        validate_identifier(name, "index_name")
        with self.db.write() as con:
            created_at = catalog.version_row(con, name)["created_at"]
            why = catalog.protected(con).get(name)
            if why is not None:
                raise StoreError(f"cannot drop {name}: it is protected ({why}); point the alias elsewhere first",
                                 version=name)
            for ddl in schema.drop_version_ddl(name):
                con.execute(ddl)
            con.execute("DELETE FROM rag_versions WHERE name = ?", (name,))
        self.matrices.forget(name, created_at)
        log.info("store.version_dropped", version=name)

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None:
        validate_identifier(version, "index_name")
        with self.db.write() as con:
            catalog.version_row(con, version)
            con.execute("UPDATE rag_versions SET evaluation = ? WHERE name = ?", (json.dumps(report), version))

    # --- aliases -------------------------------------------------------------------
    def point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                    expected_generation: int | None = None) -> AliasChange:
        validate_identifier(alias, "alias name")
        validate_identifier(version, "index_name")
        with self.db.write() as con:  # BEGIN IMMEDIATE: no write commits between this read and the rotation
            target = catalog.version_row(con, version)
            if expected_generation is not None and int(target["generation"]) != expected_generation:
                raise VersionChanged(
                    f"{version} changed since it was evaluated (generation {target['generation']}, evaluated "
                    f"{expected_generation}): a write committed in between; {alias} was not rotated, evaluate "
                    "it again", version=version, alias=alias)
            if con.execute("SELECT 1 FROM rag_versions WHERE name = ?", (alias,)).fetchone():
                raise VersionConflict(f"{alias} is a version name; an alias cannot share it", alias=alias)
            cur = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (alias,)).fetchone()
            previous = cur["version"] if cur else None
            if previous is not None and not forced:
                old = catalog.version_row(con, previous)
                if not same_model(old["model"], target["model"]) or old["dimension"] != target["dimension"]:
                    raise VersionConflict(
                        f"alias {alias} serves {previous} ({old['model']}, {old['dimension']} dims); "
                        f"{version} uses {target['model']} ({target['dimension']} dims). Queries would be "
                        "embedded with the wrong model; use --force only if the readers change model too",
                        alias=alias,
                    )
            for ddl in schema.alias_view_ddl(alias, version):
                con.execute(ddl)
            changed_at = now()
            con.execute(
                "INSERT INTO rag_aliases(alias, version, changed_at) VALUES (?,?,?) "
                "ON CONFLICT(alias) DO UPDATE SET version = excluded.version, changed_at = excluded.changed_at",
                (alias, version, changed_at),
            )
            con.execute(
                "INSERT INTO rag_alias_history(alias, version, previous, changed_at, reason, forced) VALUES (?,?,?,?,?,?)",
                (alias, version, previous, changed_at, reason, int(forced)),
            )
        log.info("store.alias_pointed", alias=alias, version=version, previous=previous, forced=forced)
        return AliasChange(alias, version, previous, changed_at, reason, forced)

    def resolve_alias(self, alias: str) -> str | None:
        validate_identifier(alias, "alias name")
        with self.db.read() as con:
            row = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (alias,)).fetchone()
        return row["version"] if row else None

    def list_aliases(self) -> dict[str, str]:
        with self.db.read() as con:
            return {r["alias"]: r["version"] for r in con.execute("SELECT alias, version FROM rag_aliases ORDER BY alias")}

    def alias_history(self, alias: str) -> list[AliasChange]:
        validate_identifier(alias, "alias name")
        with self.db.read() as con:
            rows = con.execute(
                "SELECT * FROM rag_alias_history WHERE alias = ? ORDER BY id DESC", (alias,)
            ).fetchall()
        return [
            AliasChange(r["alias"], r["version"], r["previous"], r["changed_at"], r["reason"], bool(r["forced"]))
            for r in rows
        ]
