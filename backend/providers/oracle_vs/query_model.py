"""In-database query embeddings (review §2.1): load the text model, check it per version, and let
the dense search statement embed the question itself.

* ``rag oracle load-model`` sends the text-in / vector-out graph (``onnx_text_model``) as a bound
  BLOB to ``DBMS_VECTOR.LOAD_ONNX_MODEL(model_name, model_data, metadata)`` (the BLOB overload:
  "The BLOB contains the identical byte sequence as the one stored in an ONNX file", Oracle,
  *LOAD_ONNX_MODEL Procedure*), so no directory object or file on the server is needed. Loading
  a model of the name again first forgets every parity check recorded for it (committed), then
  drops it (``DROP_ONNX_MODEL ... force``) and loads the new bytes, whose sha256 it records in
  ``RAG_QUERY_MODELS``.
* ``rag oracle parity`` embeds a version's golden questions with ``VECTOR_EMBEDDING`` on the
  database and with the version's own embedder here, and records the figures in
  ``RAG_QUERY_MODEL_CHECKS`` with the fingerprint of the graph it measured; a check counts only
  while the loaded model has that fingerprint. Oracle's operator implementation may differ from the one the export
  was proven with offline, so only this check, on that database, lets a version be served so.
* With ``store.oracle.query_embedding.enabled``, the dense search of a version whose latest check
  passed (for the same model stamp) replaces the ``:q`` vector bind by
  ``VECTOR_EMBEDDING(<model> USING :qtext AS data)``: one statement embeds and searches. Any
  other version is searched with the query vector the embedder made, as before.

Every value is bound; the model name, an identifier, is validated before it is put in SQL.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

import numpy as np
import structlog

from backend.common.identifiers import validate_table_name
from backend.providers.local.onnx_text_model import database_text
from backend.providers.oracle_vs.connection import OracleConnector

log = structlog.get_logger(__name__)

CHECKS_TABLE = "RAG_QUERY_MODEL_CHECKS"
#: One row per loaded model: the sha256 of the ONNX bytes ``load_model`` sent (review 4, M2). A parity
#: check records the fingerprint of the graph it measured, and the gate honours it only while the loaded
#: model has that fingerprint, so a graph loaded since is never served on an older graph's check.
MODELS_TABLE = "RAG_QUERY_MODELS"
MODELS_DDL = (
    f"CREATE TABLE IF NOT EXISTS {MODELS_TABLE} (\n"
    "    model_name    VARCHAR2(128) NOT NULL,\n"
    "    sha256        VARCHAR2(64) NOT NULL,\n"
    "    loaded_at     VARCHAR2(40) NOT NULL,\n"
    f"    CONSTRAINT {MODELS_TABLE}_PK PRIMARY KEY (model_name)\n"
    ")"
)
FINGERPRINT_SQL = f"SELECT sha256 FROM {MODELS_TABLE} WHERE model_name = :model_name"
FORGET_FINGERPRINT_SQL = f"DELETE FROM {MODELS_TABLE} WHERE model_name = :model_name"
RECORD_FINGERPRINT_SQL = (f"INSERT INTO {MODELS_TABLE} (model_name, sha256, loaded_at) "
                          "VALUES (:model_name, :sha256, :loaded_at)")
LOAD_MODEL_SQL = ("BEGIN DBMS_VECTOR.LOAD_ONNX_MODEL(model_name => :model_name, model_data => :model_data, "
                  "metadata => JSON(:metadata)); END;")
DROP_MODEL_SQL = "BEGIN DBMS_VECTOR.DROP_ONNX_MODEL(model_name => :model_name, force => TRUE); END;"
#: ``USER_MINING_MODELS`` through ``SYS`` (a local table of the name cannot shadow it, C2)
MODEL_SQL = ("SELECT model_name, mining_function, algorithm FROM SYS.USER_MINING_MODELS "
             "WHERE model_name = :model_name")
CHECKS_DDL = (
    f"CREATE TABLE IF NOT EXISTS {CHECKS_TABLE} (\n"
    "    version_name  VARCHAR2(128) NOT NULL,\n"
    "    model_name    VARCHAR2(128) NOT NULL,\n"
    "    embed_model   VARCHAR2(512) NOT NULL,\n"
    "    texts         NUMBER(10) NOT NULL,\n"
    "    min_cosine    BINARY_DOUBLE NOT NULL,\n"
    "    mean_cosine   BINARY_DOUBLE NOT NULL,\n"
    "    threshold     BINARY_DOUBLE NOT NULL,\n"
    "    passed        NUMBER(1) NOT NULL,\n"
    "    worst_text    VARCHAR2(1000),\n"
    "    checked_at    VARCHAR2(40) NOT NULL,\n"
    "    model_sha256  VARCHAR2(64),\n"
    f"    CONSTRAINT {CHECKS_TABLE}_PK PRIMARY KEY (version_name, model_name)\n"
    ")"
)
#: A checks table made before the fingerprint (M2) gets its column; ORA-01430 (already there) is fine.
ADD_FINGERPRINT_COLUMN_SQL = f"ALTER TABLE {CHECKS_TABLE} ADD (model_sha256 VARCHAR2(64))"
DELETE_CHECK_SQL = f"DELETE FROM {CHECKS_TABLE} WHERE version_name = :version_name AND model_name = :model_name"
FORGET_MODEL_SQL = f"DELETE FROM {CHECKS_TABLE} WHERE model_name = :model_name"
INSERT_CHECK_SQL = (
    f"INSERT INTO {CHECKS_TABLE} (version_name, model_name, embed_model, texts, min_cosine, mean_cosine, threshold, "
    "passed, worst_text, checked_at, model_sha256) VALUES (:version_name, :model_name, :embed_model, :texts, "
    ":min_cosine, :mean_cosine, :threshold, :passed, :worst_text, :checked_at, :model_sha256)")
#: A version's check, only while the loaded model is the graph it measured (same fingerprint).
CHECK_SQL = (f"SELECT c.embed_model, c.texts, c.min_cosine, c.mean_cosine, c.threshold, c.passed, c.worst_text, "
             f"c.checked_at, c.model_sha256 FROM {CHECKS_TABLE} c JOIN {MODELS_TABLE} m ON m.model_name = "
             "c.model_name AND m.sha256 = c.model_sha256 WHERE c.version_name = :version_name AND "
             "c.model_name = :model_name")
#: how long a search process trusts what it read of a version's check
GATE_TTL_S = 60.0
_VECTOR_BIND = re.compile(r":q\b")


def model_name(name: str) -> str:
    """The mining model's name, validated as an identifier and upper-cased (how Oracle keeps it)."""
    return validate_table_name(name, "store.oracle.query_embedding.model_name").upper()


def embed_sql(model: str) -> str:
    """One text through the model on the database (the parity check)."""
    return f"SELECT VECTOR_EMBEDDING({model_name(model)} USING :qtext AS data) FROM SYS.DUAL"


def embed_in_statement(statement: str, model: str) -> str:
    """Pure: ``statement`` with every ``:q`` vector bind replaced by the model embedding ``:qtext``.
    Refuses a statement without ``:q`` or one that already binds ``:qtext``."""
    expr = f"VECTOR_EMBEDDING({model_name(model)} USING :qtext AS data)"
    if ":qtext" in statement or not _VECTOR_BIND.search(statement):
        raise ValueError(f"not a statement with one :q vector bind: {statement[:120]}")
    return _VECTOR_BIND.sub(expr, statement)


@dataclass(frozen=True)
class ParityCheck:
    """A version's golden questions embedded both ways, compared."""

    version: str
    model: str
    embed_model: str
    texts: int
    min_cosine: float
    mean_cosine: float
    threshold: float
    worst_text: str
    #: sha256 of the ONNX graph the database vectors came from (``fingerprint``)
    model_sha256: str = ""

    @property
    def passed(self) -> bool:
        return self.texts > 0 and self.min_cosine >= self.threshold

    def summary(self) -> str:
        verdict = "passed" if self.passed else "REFUSED"
        return (f"{self.version}: {verdict}: model {self.model} vs {self.embed_model} on {self.texts} golden "
                f"questions, cosine min {self.min_cosine:.6f} mean {self.mean_cosine:.6f} (floor {self.threshold}); "
                f"worst: {self.worst_text[:80]!r}")


def compare(version: str, model: str, embed_model: str, texts: Sequence[str], database: np.ndarray,
            local: np.ndarray, threshold: float, model_sha256: str = "") -> ParityCheck:
    """Pure: the parity figures of two sets of vectors for the same texts (none: refused)."""
    if not len(texts):
        return ParityCheck(version, model, embed_model, 0, 0.0, 0.0, threshold, "", model_sha256)
    a = np.asarray(database, dtype=np.float64).reshape(len(texts), -1)
    b = np.asarray(local, dtype=np.float64).reshape(len(texts), -1)
    if a.shape != b.shape:
        raise ValueError(f"database vectors {a.shape} and local vectors {b.shape} differ in shape")
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cos = np.einsum("ij,ij->i", a, b) / np.where(norms > 0, norms, 1.0)
    worst = int(np.argmin(cos))
    return ParityCheck(version, model, embed_model, len(texts), float(cos.min()), float(cos.mean()), threshold,
                       texts[worst], model_sha256)


def ensure_tables(cur: Any) -> None:
    """The checks and models tables (and the checks' fingerprint column on a table made before it)."""
    import oracledb

    cur.execute(CHECKS_DDL)
    cur.execute(MODELS_DDL)
    try:
        cur.execute(ADD_FINGERPRINT_COLUMN_SQL)
    except oracledb.DatabaseError as exc:
        if getattr(exc.args[0] if exc.args else None, "code", None) != 1430:  # the column is there
            raise


def load_model(connector: OracleConnector, model: str, data: bytes, metadata: Mapping[str, Any]) -> str:
    """Load ``data`` (the ONNX bytes, a BLOB bind) as ``model`` and record its sha256; returns it.

    Order matters (review 4, M2): the model's parity checks and fingerprint are forgotten and
    committed **first**, so no search process that reads a check from then on is told to embed with a
    graph that was not checked; then any model of the name is dropped and the new one loaded (DDL-like
    calls: each commits on its own); the new fingerprint is recorded last. A process that still holds
    a verdict in its cache (``GATE_TTL_S``) and searches while the model is gone falls back to the
    bound vector (``vectors._vector_rows``); one that searches after the load with that verdict uses
    the new graph for at most ``GATE_TTL_S`` seconds (docs/ORACLE.md)."""
    import hashlib
    import json

    import oracledb

    name = model_name(model)
    sha = hashlib.sha256(data).hexdigest()
    with connector.connection(f"loading ONNX model {name}") as con:
        cur = con.cursor()
        ensure_tables(cur)
        cur.execute(FORGET_MODEL_SQL, {"model_name": name})
        cur.execute(FORGET_FINGERPRINT_SQL, {"model_name": name})
        con.commit()
        cur.execute(MODEL_SQL, {"model_name": name})
        if cur.fetchone() is not None:
            cur.execute(DROP_MODEL_SQL, {"model_name": name})
        cur.setinputsizes(model_data=oracledb.DB_TYPE_BLOB)
        cur.execute(LOAD_MODEL_SQL, {"model_name": name, "model_data": data, "metadata": json.dumps(metadata)})
        cur.execute(RECORD_FINGERPRINT_SQL, {"model_name": name, "sha256": sha,
                                             "loaded_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        con.commit()
    return sha


def fingerprint(connector: OracleConnector, model: str) -> str | None:
    """The sha256 ``load_model`` recorded for the loaded ``model`` (None: not loaded by rag, or before M2)."""
    import oracledb

    with connector.connection(f"reading the fingerprint of {model_name(model)}") as con:
        cur = con.cursor()
        try:
            cur.execute(FINGERPRINT_SQL, {"model_name": model_name(model)})
            row = cur.fetchone()
        except oracledb.DatabaseError as exc:
            if getattr(exc.args[0] if exc.args else None, "code", None) == 942:
                return None
            raise
    return None if row is None else str(row[0])


def loaded_model(connector: OracleConnector, model: str) -> tuple[str, str, str] | None:
    """``(name, mining function, algorithm)`` of the loaded model, or None."""
    name = model_name(model)
    with connector.connection(f"reading ONNX model {name}") as con:
        cur = con.cursor()
        cur.execute(MODEL_SQL, {"model_name": name})
        row = cur.fetchone()
    return None if row is None else (str(row[0]), str(row[1]), str(row[2]))


def database_vectors(connector: OracleConnector, model: str, texts: Sequence[str]) -> np.ndarray:
    """Each text through ``VECTOR_EMBEDDING`` on the database, normalised as a search binds it."""
    statement = embed_sql(model)
    rows: list[np.ndarray] = []
    with connector.connection(f"embedding golden questions with {model_name(model)}") as con:
        cur = con.cursor()
        for text in texts:
            cur.execute(statement, {"qtext": database_text(text)})
            rows.append(np.asarray(cur.fetchone()[0], dtype=np.float32))
    return np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def record_check(connector: OracleConnector, check: ParityCheck) -> None:
    """The check replaces the version's previous one for this model, in one transaction."""
    name = model_name(check.model)
    with connector.connection(f"recording the parity of {check.version}") as con:
        ensure_tables(con.cursor())
    with connector.transaction(f"recording the parity of {check.version}") as con:
        cur = con.cursor()
        cur.execute(DELETE_CHECK_SQL, {"version_name": check.version, "model_name": name})
        cur.execute(INSERT_CHECK_SQL, {
            "version_name": check.version, "model_name": name, "embed_model": check.embed_model,
            "texts": check.texts, "min_cosine": check.min_cosine, "mean_cosine": check.mean_cosine,
            "threshold": check.threshold, "passed": int(check.passed), "worst_text": check.worst_text[:1000],
            "checked_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "model_sha256": check.model_sha256 or None})


def read_check(cur: Any, version: str, model: str) -> ParityCheck | None:
    """The recorded check of ``version`` for ``model`` (None: never checked, or no checks table yet)."""
    import oracledb

    try:
        cur.execute(CHECK_SQL, {"version_name": version, "model_name": model_name(model)})
        row = cur.fetchone()
    except oracledb.DatabaseError as exc:
        if getattr(exc.args[0] if exc.args else None, "code", 0) == 942:
            return None
        raise
    if row is None:
        return None
    return ParityCheck(version, model_name(model), str(row[0]), int(row[1]), float(row[2]), float(row[3]),
                       float(row[4]), str(row[6] or ""), str(row[8] or ""))


def may_embed_in_database(check: ParityCheck | None, version_model: str, threshold: float) -> bool:
    """Pure: a version is served with database query vectors only after a passing check, made for
    the model stamp it holds now, against a floor no lower than the configured one."""
    return (check is not None and check.passed and check.embed_model == version_model
            and check.threshold >= threshold)


class QueryModelGate:
    """Per search process: which versions may embed the question in the statement (cached
    ``GATE_TTL_S`` per version, so a check recorded by ``rag oracle parity`` is seen within a minute)."""

    def __init__(self, model: str, threshold: float, clock: Any = time.monotonic) -> None:
        self.model = model_name(model)
        self.threshold = threshold
        self._clock = clock
        self._seen: dict[str, tuple[float, bool]] = {}

    def allows(self, cur: Any, version: str, version_model: str) -> bool:
        now = self._clock()
        known = self._seen.get(version)
        if known is not None and now - known[0] < GATE_TTL_S:
            return known[1]
        check = read_check(cur, version, self.model)
        allowed = may_embed_in_database(check, version_model, self.threshold)
        if not allowed:  # served with the local query vector; said once per GATE_TTL_S, with the figures
            log.warning("store.query_embedding_refused", version=version, model=self.model,
                        check=check.summary() if check else "no parity check: run `rag oracle parity`",
                        stamp=version_model)
        self._seen[version] = (now, allowed)
        return allowed

    def forget(self, version: str) -> None:
        """The next search of ``version`` reads its check again (its model went away meanwhile)."""
        self._seen.pop(version, None)

    def statement(self, statement: str, binds: dict[str, Any], text: str) -> tuple[str, dict[str, Any]]:
        """``statement`` and ``binds`` with the question embedded by the database instead of ``:q``."""
        rebound = {k: v for k, v in binds.items() if k != "q"}
        rebound["qtext"] = database_text(text)
        return embed_in_statement(statement, self.model), rebound
