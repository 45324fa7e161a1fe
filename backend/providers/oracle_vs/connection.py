"""python-oracledb connection pool in thin mode: no Instant Client, no ``init_oracle_client``.

Credentials and wallet passwords come from ``OracleSettings`` (filled from the
environment, ``RAG_STORE__ORACLE__PASSWORD`` ...), never from the YAML file.
``tcp_connect_timeout`` bounds how long an unreachable server can stall a
command; the pool is pinged once at start so a wrong DSN fails there, with a
message naming the host and port (never the password). Driver errors become
``StoreUnavailable`` (cannot reach or log in, or the connection was lost) or ``StoreError`` (anything else).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

import structlog

from backend.common.config import OracleSettings
from backend.common.errors import ConfigError, EmbeddingModelMismatch, RagError, StoreError, StoreUnavailable

log = structlog.get_logger(__name__)

#: ORA codes that mean "cannot reach or log in": listener, network, credentials, account.
UNAVAILABLE_ORA = frozenset({1017, 1033, 1034, 1089, 3113, 3114, 3135, 12154, 12170, 12514, 12541, 12543,
                             12545, 28000, 28001})
_HOST = re.compile(r"\(\s*HOST\s*=\s*([^)\s]+)\s*\)", re.IGNORECASE)
_PORT = re.compile(r"\(\s*PORT\s*=\s*(\d+)\s*\)", re.IGNORECASE)
_SERVICE = re.compile(r"\(\s*(?:SERVICE_NAME|SID)\s*=\s*([^)\s]+)\s*\)", re.IGNORECASE)
#: Driver codes of a session that died under us (python-oracledb turns ORA-03113, ORA-03135, DPI-1080 ...
#: into DPY-4011 and marks the error ``is_session_dead``); DPY-1001/DPI-1010: used after it died.
LOST_CODES = frozenset({"DPY-4011", "DPY-1001", "DPI-1080", "DPI-1010"})
#: The same ORA codes as the driver's (killed session, end-of-file on the channel, lost contact ...),
#: for an error that reaches us untranslated.
LOST_ORA = frozenset({28, 1012, 1092, 2396, 3113, 3114, 3135, 12537, 12547, 12570, 12583})


def dsn_endpoint(dsn: str) -> str:
    """``host:port`` of an Easy Connect string or connect descriptor; a TNS alias as is.

    Used in every message about the store, so operators see *where* without the
    service name's query options or any credential.
    """
    text = dsn.strip()
    if text.startswith("("):
        host, port = _HOST.search(text), _PORT.search(text)
        if host:
            return f"{host.group(1)}:{port.group(1)}" if port else host.group(1)
        return "connect descriptor"
    text = re.sub(r"^[a-z]+://", "", text, flags=re.IGNORECASE)
    text = text.split("@")[-1]
    endpoint = re.split(r"[/?]", text, maxsplit=1)[0]
    if "/" not in text and ":" not in text and "." not in endpoint:
        return f"TNS alias {endpoint}"
    return endpoint


#: What a lost connection means for a write outside the served version (the ingest's writes): the
#: server rolls back the dead session's transaction, so nothing half-written stays.
RESUMES = "the served version is unchanged and the next run resumes"
#: The same for an ``--in-place`` write, whose committed groups are already served.
RESUMES_IN_PLACE = "the next run resumes (groups committed before the loss are served already: --in-place)"


def dsn_service(dsn: str) -> str | None:
    """The service name (or SID) of an Easy Connect string or connect descriptor; None for a TNS
    alias, whose name already says which database. Named when a connection is lost mid-run, so
    operators know which database went away (never the user or a password)."""
    text = dsn.strip()
    if text.startswith("("):
        found = _SERVICE.search(text)
        return found.group(1) if found else None
    text = re.sub(r"^[a-z]+://", "", text, flags=re.IGNORECASE).split("@")[-1].split("?", 1)[0]
    if "/" not in text:
        return None
    return text.split("/", 1)[1].split(":", 1)[0] or None


def connection_lost(exc: BaseException) -> bool:
    """Whether the driver error means the session died (server restart, network cut, killed session)."""
    err = exc.args[0] if exc.args else None
    full_code, code = str(getattr(err, "full_code", "") or ""), int(getattr(err, "code", 0) or 0)
    return bool(getattr(err, "is_session_dead", False)) or full_code in LOST_CODES or code in LOST_ORA


def _error_parts(exc: BaseException) -> tuple[str, int, str]:
    err = exc.args[0] if exc.args else None
    full_code = str(getattr(err, "full_code", "") or "")
    code = int(getattr(err, "code", 0) or 0)
    message = str(getattr(err, "message", None) or exc)
    return full_code, code, " ".join(line.strip() for line in message.splitlines() if line.strip())


#: What to do about each error the adapter can expect, by ORA number or DPY code. The message a
#: user sees is the driver's first line plus this hint, never a traceback.
HINTS: dict[int | str, str] = {
    54: "another session holds a lock on the table (an ingest writing it, or another rag command's DDL) and "
        "this DDL waited store.oracle.ddl_lock_timeout_s for it: run it again once that session commits, or raise "
        "store.oracle.ddl_lock_timeout_s",
    60: "a deadlock with another session (two ingests or enrichers writing the same cache keys or rows "
        "concurrently): Oracle rolled back this statement and the write was rolled back with it; run it again, "
        "and serialize ingests that share content (one series lock per version) if it recurs",
    942: "a table or view is missing or not visible to this user: the catalog is created on first connection "
         "by store.oracle.user (check it owns the schema), and `rag index list` shows the versions that exist; "
         "during a search, the version the alias served was dropped (`rag index gc`) after the alias was "
         "resolved: run it again, which resolves the alias anew",
    955: "an object with this name already exists in the schema: choose another index_name or alias, "
         "or drop the object",
    1017: "check RAG_STORE__ORACLE__USER and RAG_STORE__ORACLE__PASSWORD",
    1031: "store.oracle.user lacks a privilege: it needs CREATE SESSION, CREATE TABLE, CREATE VIEW, CREATE SEQUENCE "
          "(identity columns), CTXAPP (Oracle Text and JSON search indexes) and a tablespace quota; a DBA grants "
          "DB_DEVELOPER_ROLE (all but the quota) plus ALTER USER <user> QUOTA UNLIMITED ON <tablespace> "
          "(see docs/ORACLE.md)",
    1461: "a text over 4,000 bytes was bound as a string; this adapter declares such texts as CLOBs, so report it",
    1950: "store.oracle.user has no quota on its tablespace (DB_DEVELOPER_ROLE grants no UNLIMITED TABLESPACE): "
          "a DBA runs ALTER USER <user> QUOTA UNLIMITED ON <tablespace> (USERS by default)",
    8103: "the table was dropped while this statement read it: a search met a version `rag index gc` dropped "
          "after the alias was resolved; run it again, which resolves the alias anew",
    12899: "a value is longer than its column: chunk_id, doc_id and question or summary ids hold at most 1,000 "
           "bytes (UTF-8), so shorten the document's id or its chunk-id scheme",
    12514: "the listener does not know the service in store.oracle.dsn: check the service name after the '/' "
           "(e.g. FREEPDB1) and that the pluggable database is open",
    12541: "nothing listens at this host and port: check store.oracle.dsn and that the database listener is running",
    28000: "the database account is locked: a DBA must run ALTER USER <user> ACCOUNT UNLOCK",
    29861: "a text or JSON search index is unusable after a failed build: an ingest's finish step drops and "
           "re-creates a failed index, so for a version no alias serves run the ingest again; a served version "
           "is never written by a plain ingest, so repair it with `rag ingest --in-place` and the same manifest "
           "(unchanged documents are skipped, the finish step rebuilds the index) or ingest a new version "
           "and promote it",
    51803: "a vector's dimension differs from the version's VECTOR column: embed with the version's model "
           "(`rag index list` shows it)",
    51815: "the HNSW vector index's snapshot is too old (the index was repopulated while this search ran): "
           "run it again",
    51928: "this Oracle Database release refuses DML on a table with an HNSW index: ingest into a new version "
           "(its vector index is built after the load), or set store.oracle.vector_index.type: ivf, "
           "or apply a 23ai release update that allows DML on HNSW-indexed tables",
    "DPY-4011": "the database or the network closed the connection (server restart, idle-connection timeout "
                "in a firewall, or Native Network Encryption, which thin mode does not support): retry, and "
                "check the server's sqlnet.ora if it persists",
    "DPY-6005": "check the host and port in store.oracle.dsn, that the database is running and that no "
                "firewall blocks the port",
}


def _hint(full_code: str, code: int) -> str:
    hint = HINTS.get(full_code) if full_code.startswith("DPY-") else HINTS.get(code)
    return f" ({hint})" if hint else ""


def hints_in(messages: list[str]) -> str:
    """What to do about the ORA errors named in per-row messages (``executemany`` batch errors)."""
    codes = dict.fromkeys(int(c) for m in messages for c in re.findall(r"\b(?:ORA|DIA)-(\d{5})\b", m))
    return "".join(_hint("", c) for c in codes)


def map_error(exc: BaseException, where: str, action: str, *, service: str | None = None,
              then: str = "") -> StoreError:
    """The most specific ``StoreError`` for a driver error, naming the endpoint and what to do.
    A lost connection also names the service and, with ``then``, what that means for the caller's
    work (the ingest: the served version is unchanged and the next run resumes)."""
    import oracledb

    full_code, code, message = _error_parts(exc)
    lost = connection_lost(exc)
    unreachable = (
        lost or full_code.startswith("DPY-6") or code in UNAVAILABLE_ORA or isinstance(exc, oracledb.InterfaceError)
    )
    hint = _hint(full_code, code)
    if lost:
        named = f"{where} (service {service})" if service else where
        return StoreUnavailable(f"Oracle store at {named} lost the connection ({action}): {message}{hint}"
                                + (f"; {then}" if then else ""), endpoint=where, code=full_code, lost=True)
    if unreachable:
        return StoreUnavailable(f"Oracle store at {where} is unavailable ({action}): {message}{hint}",
                                endpoint=where, code=full_code)
    if "vector memory" in message.lower():
        hint += " (HNSW indexes live in the vector pool: size VECTOR_MEMORY_SIZE, see docs/ORACLE.md)"
    if code == 51803:
        return EmbeddingModelMismatch(f"Oracle store at {where}: {action} failed: {message}{hint}", endpoint=where,
                                      code=full_code)
    return StoreError(f"Oracle store at {where}: {action} failed: {message}{hint}", endpoint=where, code=full_code)


def ddl_lock_timeout_sql(seconds: int) -> str:
    """How long this session's DDL waits for a lock held by another session's DML before ORA-00054
    (Oracle's default, 0, is NOWAIT: a catalog upgrade, an index build or a drop fails at once while
    an ingest writes the table)."""
    if not isinstance(seconds, int) or not 0 <= seconds <= 1_000_000:
        raise ValueError(f"DDL_LOCK_TIMEOUT must be an integer in 0..1000000, got {seconds!r}")
    return f"ALTER SESSION SET DDL_LOCK_TIMEOUT = {seconds}"


def session_setup(ddl_lock_timeout_s: int) -> Any:
    """The pool's ``session_callback``: run once on each new pooled session (thin mode calls it when
    the pool creates a connection), so every DDL of the store waits ``ddl_lock_timeout_s``."""
    statement = ddl_lock_timeout_sql(ddl_lock_timeout_s)

    def setup(connection: Any, requested_tag: str | None = None) -> None:
        connection.cursor().execute(statement)

    return setup


class Rollback(Exception):
    """Raised inside ``OracleConnector.transaction`` to end it with a rollback and no error: a write
    that changed nothing leaves no trace (its generation bump is undone) and costs no commit."""


class OracleConnector:
    """A pool plus the three ways the store uses a connection: plain, write
    transaction (one commit, rollback on error) and read snapshot."""

    def __init__(self, pool: Any, where: str, service: str | None = None) -> None:
        self._pool = pool
        self.where = where
        self.service = service

    @classmethod
    def from_settings(cls, settings: OracleSettings) -> "OracleConnector":
        try:
            import oracledb
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise ConfigError("store.backend 'oracle' needs the oracledb package: pip install oracledb") from exc
        if not settings.dsn:
            raise ConfigError("store.oracle.dsn is not set (env RAG_STORE__ORACLE__DSN)")
        if not settings.user or settings.password is None:
            raise ConfigError("store.oracle.user and the password (env RAG_STORE__ORACLE__USER, "
                              "RAG_STORE__ORACLE__PASSWORD) are required for store 'oracle'")
        where = dsn_endpoint(settings.dsn)
        oracledb.defaults.fetch_lobs = False  # CLOB text arrives as str
        params: dict[str, Any] = {
            "user": settings.user,
            "password": settings.password.get_secret_value(),
            "dsn": settings.dsn,
            "min": settings.pool_min,
            "max": settings.pool_max,
            "increment": 1,
            "tcp_connect_timeout": settings.connect_timeout_s,
            "retry_count": 0,
            "getmode": oracledb.POOL_GETMODE_TIMEDWAIT,
            "wait_timeout": int(settings.connect_timeout_s * 1000),
            "session_callback": session_setup(settings.ddl_lock_timeout_s),
        }
        if settings.config_dir:
            params["config_dir"] = settings.config_dir
        if settings.wallet_location:
            params["wallet_location"] = settings.wallet_location
        if settings.wallet_password is not None:
            params["wallet_password"] = settings.wallet_password.get_secret_value()
        try:
            pool = oracledb.create_pool(**params)
        except oracledb.Error as exc:
            raise map_error(exc, where, "creating the connection pool") from exc
        connector = cls(pool, where, dsn_service(settings.dsn))
        try:
            connector.ping()
        except RagError:
            connector.close()
            raise
        log.info("oracle.pool_ready", endpoint=where, pool_min=settings.pool_min, pool_max=settings.pool_max)
        return connector

    @contextmanager
    def connection(self, action: str = "query", *, then: str = "") -> Iterator[Any]:
        """A pooled connection; ``then`` is added to the message of a lost connection (see ``map_error``)."""
        import oracledb

        try:
            with self._pool.acquire() as con:
                yield con
        except oracledb.Error as exc:
            raise map_error(exc, self.where, action, service=self.service, then=then) from exc

    @contextmanager
    def transaction(self, action: str = "write", *, then: str = "") -> Iterator[Any]:
        """Commit once at the end; roll back on any error (driver or ours)."""
        with self.connection(action, then=then) as con:
            try:
                yield con
            except Rollback:
                _quiet_rollback(con)
                return
            except BaseException:
                _quiet_rollback(con)
                raise
            con.commit()

    @contextmanager
    def snapshot(self, action: str = "read") -> Iterator[Any]:
        """A read-only transaction: every query inside sees one point in time, so an
        alias resolved here and the search that follows agree even mid-rotation."""
        with self.connection(action) as con:
            con.cursor().execute("SET TRANSACTION READ ONLY")
            try:
                yield con
            finally:
                _quiet_rollback(con)

    def ping(self) -> None:
        with self.connection("connecting") as con:
            con.ping()

    def close(self) -> None:
        import oracledb

        try:
            self._pool.close(force=True)
        except oracledb.Error as exc:  # already closed or never opened
            log.debug("oracle.pool_close_failed", endpoint=self.where, error=str(exc))


class OnConnector:
    """A port on the store's ``OracleConnector`` (the same pool as the vector store): the
    interaction, conversation, audit and quota tables are tables of fixed names beside the versions."""

    def __init__(self, connector: OracleConnector) -> None:
        self.connector = connector


def _quiet_rollback(con: Any) -> None:
    """Roll back; a rollback on a dead connection must not mask the original error."""
    import oracledb

    try:
        con.rollback()
    except oracledb.Error as exc:
        # a dead session's work is rolled back by the server: the error that killed it is the news
        (log.debug if connection_lost(exc) else log.warning)("oracle.rollback_failed", error=_error_parts(exc)[2])
