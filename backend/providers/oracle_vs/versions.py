"""Rows of ``RAG_VERSIONS`` and the small conversions every Oracle port shares.

``VersionRow`` (a registry row as read), JSON in and out of the database, timestamps,
and ``execute_ddl`` (DDL that tolerates "already exists").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from backend.common.config import OracleVectorIndexSettings
from backend.providers.oracle_vs import sql

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


