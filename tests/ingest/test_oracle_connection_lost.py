"""The Oracle connection lost in the middle of an ingest's chunk writes (server restart, network
cut, killed session): one line naming host and service, a non-zero exit, no alias change, and
the next run resumes (issue 34).

No Oracle server runs here: ``oracle_fake.CatalogDb``, extended to keep each version's chunk rows,
stands in, and the errors injected are the driver's own (``oracledb.errors._Error`` turns ORA-03113,
ORA-03135, DPI-1080 ... into DPY-4011 with ``is_session_dead`` exactly as on a real connection).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import oracledb
import pytest
import yaml
from click.testing import CliRunner
from oracledb import errors as driver

from backend.cli.main import cli
from backend.common.config import OracleSettings
from backend.common.errors import StoreError, StoreUnavailable
from backend.ingest.pipeline import IngestPipeline
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OracleConnector, map_error
from backend.providers.oracle_vs.store import OracleVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import write_config, write_corpus, write_manifest
from tests.providers.oracle_fake import CatalogDb, _Connection, _Cursor, ora

ALIAS = "KB_ACTIVE"
DSN = "db.example.com:1521/FREEPDB1"
PASSWORD = "s3cret-never-shown"
RESUMES = "the served version is unchanged and the next run resumes"


def lost(message: str, code: int = 0) -> Exception:
    """A connection-lost error as python-oracledb raises it (its own translation to DPY-4011)."""
    err = driver._Error(message, code=code)
    return err.exc_type(err)  # type: ignore[no-any-return]


LOSSES: dict[str, Callable[[], Exception]] = {
    "ORA-03113": lambda: lost("ORA-03113: end-of-file on communication channel", 3113),
    "ORA-03114": lambda: lost("ORA-03114: not connected to ORACLE", 3114),
    "ORA-03135": lambda: lost("ORA-03135: connection lost contact", 3135),
    "ORA-00028": lambda: lost("ORA-00028: your session has been killed", 28),
    "DPI-1080": lambda: lost("DPI-1080: connection was closed by ORA-3113"),
    "DPY-4011": lambda: driver._create_exception(driver.ERR_CONNECTION_CLOSED),
}


class ChunkDb(CatalogDb):
    """``CatalogDb`` that also keeps each version's chunks (``chunk_id -> (doc_id, doc_hash)``), undone
    by a rollback like the rest, and loses the connection at the ``nth`` statement containing a fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: dict[str, dict[str, tuple[str, str]]] = {}
        self.loss: tuple[str, int, Exception] | None = None
        self.dead = False

    def lose(self, fragment: str, error: Exception, nth: int = 1) -> None:
        self.loss = (fragment, nth, error)

    def check(self, statement: str) -> None:
        if self.dead:
            raise driver._create_exception(driver.ERR_NOT_CONNECTED)
        if self.loss and self.loss[0] in statement:
            fragment, nth, error = self.loss
            self.loss = (fragment, nth - 1, error) if nth > 1 else None
            if nth == 1:
                self.dead = True
                raise error

    def run(self, statement: str, binds: dict[str, Any], session: int | None = None) -> list[tuple[Any, ...]]:
        if m := re.match(r"SELECT doc_id, MIN\(doc_hash\) FROM (\w+) GROUP BY doc_id$", statement):
            return sorted({d: h for d, h in self.chunks.get(m.group(1), {}).values()}.items())
        rows = super().run(statement, binds, session)
        if m := re.match(r"DELETE FROM (\w+)$", statement):
            self._set(self.chunks, m.group(1), {})
        elif m := re.match(r"INSERT INTO (\w+) \(chunk_id.* FROM (\w+)$", statement):
            self._set(self.chunks, m.group(1), {**self.chunks.get(m.group(1), {}), **self.chunks.get(m.group(2), {})})
        return rows

    def many(self, statement: str, rows: list[dict[str, Any]]) -> None:
        if (m := re.match(r"(?:INSERT INTO|UPDATE) (\w+) ", statement)) and m.group(1) in self.tables:
            table = m.group(1)
            self._set(self.chunks, table, {**self.chunks.get(table, {}),
                                           **{r["chunk_id"]: (r["doc_id"], r["doc_hash"]) for r in rows}})
            self._set(self.tables, table, len(self.chunks[table]))


class LosingCursor(_Cursor):
    db: ChunkDb

    def execute(self, statement: str, binds: dict[str, Any] | None = None) -> None:
        self.db.check(statement)
        super().execute(statement, binds)

    def executemany(self, statement: str, rows: list[dict[str, Any]], batcherrors: bool = False,
                    arraydmlrowcounts: bool = False) -> None:
        self.db.check(statement)
        super().executemany(statement, rows, batcherrors, arraydmlrowcounts)
        self.db.many(statement, rows)


class LosingConnection(_Connection):
    """After the loss every call fails with DPY-1001, as on a dead session; the server rolls back
    the session's open transaction, and the pool hands out a new session next time."""

    db: ChunkDb

    def cursor(self) -> LosingCursor:
        return LosingCursor(self.db, self.session)

    def commit(self) -> None:
        self.db.check("COMMIT")
        super().commit()

    def rollback(self) -> None:
        self.db.check("ROLLBACK")
        super().rollback()

    def ping(self) -> None:
        self.db.check("PING")
        super().ping()

    def __exit__(self, *exc: object) -> None:
        self.db.dead = False
        super().__exit__(*exc)


class Pool:
    def __init__(self, db: ChunkDb) -> None:
        self.db = db

    def acquire(self) -> LosingConnection:
        return LosingConnection(self.db)

    def close(self, force: bool = False) -> None:
        pass


def oracle_store(db: ChunkDb) -> OracleVectorStore:
    settings = OracleSettings(dsn=DSN, user="rag", password=PASSWORD)
    return OracleVectorStore(OracleConnector(Pool(db), "db.example.com:1521", "FREEPDB1"), settings)


def served_state(db: ChunkDb, version: str) -> tuple[Any, ...]:
    return dict(db.aliases), list(db.history), list(db.versions[version]), dict(db.chunks[version])


def docs_of(root: Path, paths: list[Path]) -> Path:
    return write_manifest(root / "manifest.jsonl", [{"path": str(p), "doc_id": f"{p.parent.name}-{p.stem}"}
                                                    for p in paths])


def test_lost_connection_errors_are_store_unavailable_naming_host_and_service() -> None:
    for code, make in LOSSES.items():
        mapped = map_error(make(), "db.example.com:1521", "writing to KB_V2", service="FREEPDB1", then=RESUMES)
        assert type(mapped) is StoreUnavailable, code
        assert mapped.user_message.startswith("Oracle store at db.example.com:1521 (service FREEPDB1) lost the "
                                              "connection (writing to KB_V2): DPY-4011"), mapped.user_message
        assert mapped.user_message.endswith(f"; {RESUMES}") and "\n" not in mapped.user_message
        assert code in mapped.user_message and mapped.context["lost"] is True
    untranslated = map_error(ora(3135, "connection lost contact"), "h:1521", "reading", service="S")
    assert untranslated.user_message.startswith("Oracle store at h:1521 (service S) lost the connection (reading)")
    refused = map_error(ora(942, "table or view does not exist"), "h:1521", "reading", service="S", then=RESUMES)
    assert type(refused) is StoreError and "service S" not in refused.user_message and RESUMES not in refused.user_message


@pytest.mark.parametrize("code", sorted(LOSSES))
def test_a_connection_lost_mid_ingest_ends_with_one_line_and_the_next_run_resumes(
        code: str, tmp_path: Path, embedder: Any) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(tmp_path)], "documents_per_transaction": 2})
    db = ChunkDb()
    store = oracle_store(db)
    first = write_corpus(tmp_path / "docs", 4)
    served = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(docs_of(tmp_path, first)).version
    assert served is not None
    store.point_alias(ALIAS, served, reason="test")
    before = served_state(db, served)

    more = first + write_corpus(tmp_path / "more", 6)
    db.lose("VALUES (:chunk_id, :doc_id,", LOSSES[code](), nth=2)  # the second group of new documents
    with pytest.raises(StoreUnavailable) as failed:
        IngestPipeline.from_settings(settings, store, embedder, progress=False).run(docs_of(tmp_path, more))
    message = failed.value.user_message
    candidate = next(n for n in db.versions if n != served)
    assert message.startswith(f"Oracle store at db.example.com:1521 (service FREEPDB1) lost the connection "
                              f"(writing to {candidate}): DPY-4011: the database or network closed the connection")
    assert message.endswith(RESUMES) and "\n" not in message and PASSWORD not in message and "rag@" not in message
    assert served_state(db, served) == before
    assert len(db.chunks[candidate]) == 6  # the 4 carried and the 2 committed before the loss; the group lost rolled back

    resumed = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(docs_of(tmp_path, more))
    assert resumed.ok and resumed.version == candidate
    assert (resumed.skipped_unchanged, resumed.documents_written) == (6, 4)
    assert {d for d, _ in db.chunks[candidate].values()} == {f"{p.parent.name}-{p.stem}" for p in more}
    assert served_state(db, served) == before


def test_rag_ingest_losing_the_oracle_connection_prints_one_line_and_exits_1_then_resumes(
        tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kb = tmp_path / "kb"
    first = write_corpus(kb / "docs", 4)
    config = write_config(tmp_path, kb, ingest={"allowed_roots": [str(kb)], "progress": False,
                                                "documents_per_transaction": 2})
    data = yaml.safe_load(config.read_text())
    data["store"] = {"backend": "oracle", "oracle": {"dsn": DSN, "user": "rag"}}
    data["logging"] = {"level": "WARNING", "format": "console"}
    config.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("RAG_STORE__ORACLE__PASSWORD", PASSWORD)
    db, opened = ChunkDb(), []

    def create_pool(**params: Any) -> Pool:
        opened.append(params)
        return Pool(db)

    monkeypatch.setattr(oracledb, "create_pool", create_pool)

    def ingest(paths: list[Path]) -> Any:
        return CliRunner().invoke(cli, ["--config", str(config), "ingest", str(docs_of(kb, paths))])

    assert ingest(first).exit_code == 0
    served = next(iter(db.versions))
    db.aliases[ALIAS] = served
    before = served_state(db, served)
    more = first + write_corpus(kb / "more", 6)
    db.lose("VALUES (:chunk_id, :doc_id,", LOSSES["ORA-03113"](), nth=2)
    failed = ingest(more)
    assert failed.exit_code == 1, failed.output
    lines = failed.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert re.fullmatch(r"error: Oracle store at db\.example\.com:1521 \(service FREEPDB1\) lost the connection "
                        r"\(writing to KB_SAMPLE_V\d+\): DPY-4011: the database or network closed the connection "
                        r"ORA-03113: end-of-file on communication channel .*; " + RESUMES, lines[0]), lines[0]
    assert PASSWORD not in failed.output and opened[-1]["password"] == PASSWORD
    assert served_state(db, served) == before

    resumed = ingest(more)
    assert resumed.exit_code == 0 and resumed.stderr == "", resumed.output
    assert "documents written:    4" in resumed.stdout and "skipped unchanged:    6" in resumed.stdout
    assert served_state(db, served) == before and sql.oracle_name(served, "index_name") == served
