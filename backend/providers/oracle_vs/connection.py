"""python-oracledb connection pool in thin mode: no Instant Client, no ``init_oracle_client``.

Credentials and wallet passwords come from ``OracleSettings`` (filled from the
environment, ``RAG_STORE__ORACLE__PASSWORD`` ...), never from the YAML file.
``tcp_connect_timeout`` bounds how long an unreachable server can stall a
command; the pool is pinged once at start so a wrong DSN fails there, with a
message naming the host and port (never the password). Driver errors become
``StoreUnavailable`` (cannot reach or log in) or ``StoreError`` (anything else).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

import structlog

from backend.common.config import OracleSettings
from backend.common.errors import ConfigError, RagError, StoreError, StoreUnavailable

log = structlog.get_logger(__name__)

#: ORA codes that mean "cannot reach or log in": listener, network, credentials, account.
UNAVAILABLE_ORA = frozenset({1017, 1033, 1034, 1089, 3113, 3114, 3135, 12154, 12170, 12514, 12541, 12543,
                             12545, 28000, 28001})
_HOST = re.compile(r"\(\s*HOST\s*=\s*([^)\s]+)\s*\)", re.IGNORECASE)
_PORT = re.compile(r"\(\s*PORT\s*=\s*(\d+)\s*\)", re.IGNORECASE)


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


def _error_parts(exc: BaseException) -> tuple[str, int, str]:
    err = exc.args[0] if exc.args else None
    full_code = str(getattr(err, "full_code", "") or "")
    code = int(getattr(err, "code", 0) or 0)
    message = str(getattr(err, "message", None) or exc)
    return full_code, code, " ".join(line.strip() for line in message.splitlines() if line.strip())


def map_error(exc: BaseException, where: str, action: str) -> StoreError:
    """The most specific ``StoreError`` for a driver error, naming the endpoint."""
    import oracledb

    full_code, code, message = _error_parts(exc)
    unreachable = (
        full_code.startswith("DPY-6") or code in UNAVAILABLE_ORA or full_code in {"DPY-4011", "DPY-1001"}
        or isinstance(exc, oracledb.InterfaceError)
    )
    if unreachable:
        return StoreUnavailable(f"Oracle store at {where} is unavailable ({action}): {message}",
                                endpoint=where, code=full_code)
    if "vector memory" in message.lower():
        message += " (HNSW indexes live in the vector pool: size VECTOR_MEMORY_SIZE, see docs/ORACLE.md)"
    return StoreError(f"Oracle store at {where}: {action} failed: {message}", endpoint=where, code=full_code)


class OracleConnector:
    """A pool plus the three ways the store uses a connection: plain, write
    transaction (one commit, rollback on error) and read snapshot."""

    def __init__(self, pool: Any, where: str) -> None:
        self._pool = pool
        self.where = where

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
        connector = cls(pool, where)
        try:
            connector.ping()
        except RagError:
            connector.close()
            raise
        log.info("oracle.pool_ready", endpoint=where, pool_min=settings.pool_min, pool_max=settings.pool_max)
        return connector

    @contextmanager
    def connection(self, action: str = "query") -> Iterator[Any]:
        import oracledb

        try:
            with self._pool.acquire() as con:
                yield con
        except oracledb.Error as exc:
            raise map_error(exc, self.where, action) from exc

    @contextmanager
    def transaction(self, action: str = "write") -> Iterator[Any]:
        """Commit once at the end; roll back on any error (driver or ours)."""
        with self.connection(action) as con:
            try:
                yield con
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


def _quiet_rollback(con: Any) -> None:
    """Roll back; a rollback on a dead connection must not mask the original error."""
    import oracledb

    try:
        con.rollback()
    except oracledb.Error as exc:
        log.warning("oracle.rollback_failed", error=_error_parts(exc)[2])
