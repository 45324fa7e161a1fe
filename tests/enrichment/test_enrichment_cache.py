"""The enrichment cache: real SQLite, and the Oracle adapter's statements (Oracle-dialect parse,
named binds only) against a recording connector."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
import types
from typing import Any, Iterator

import oracledb
import pytest

from backend.common.errors import StoreError
from backend.core.ports import EnrichmentCache
from backend.providers.oracle_vs import enrichment_cache as oracle_cache
from backend.providers.oracle_vs.enrichment_cache import OracleEnrichmentCache
from backend.providers.registry import build_enrichment_cache
from backend.providers.sqlite_vs.enrichment_cache import SqliteEnrichmentCache
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.providers.test_oracle_sql_parse import check


def test_sqlite_cache_keys_on_hash_prompt_version_and_model(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    cache = build_enrichment_cache(store)
    assert isinstance(cache, SqliteEnrichmentCache) and isinstance(cache, EnrichmentCache)
    cache.put_many("1", "extractive/1", {"h1": '{"a": 1}', "h2": '{"a": 2}'})
    cache.put_many("1", "extractive/1", {"h1": '{"a": 3}'})  # replaced, not duplicated
    assert cache.get_many("1", "extractive/1", ["h1", "h2", "h3", "h1"]) == {"h1": '{"a": 3}', "h2": '{"a": 2}'}
    assert cache.get_many("2", "extractive/1", ["h1"]) == {} and cache.get_many("1", "oci/x", ["h1"]) == {}
    many = {f"k{i}": str(i) for i in range(1200)}  # more than one SELECT's worth
    cache.put_many("1", "m", many)
    assert cache.get_many("1", "m", list(many)) == many
    cache.close()
    # it lives in the store's file: a second process (connection) sees it
    assert SqliteEnrichmentCache(str(tmp_path / "rag.sqlite")).get_many("1", "extractive/1", ["h2"]) == {"h2": '{"a": 2}'}
    store.close()


class RecordingCursor:
    def __init__(self, db: "RecordingDb") -> None:
        self.db = db
        self.rows: list[tuple[Any, ...]] = []

    def execute(self, statement: str, binds: dict[str, Any] | None = None) -> None:
        self.db.log.append((statement, binds))
        if statement.startswith("SELECT"):
            wanted = [v for k, v in (binds or {}).items() if re.fullmatch(r"h\d+", k)]
            self.rows = [(h, self.db.rows[(h, binds["prompt_version"], binds["model_id"])])  # type: ignore[index]
                         for h in wanted if (h, binds["prompt_version"], binds["model_id"]) in self.db.rows]  # type: ignore[index]

    def executemany(self, statement: str, rows: list[dict[str, Any]], batcherrors: bool = False) -> None:
        """A key another enricher inserted (``db.racing``) is not seen by the MERGE's ON clause (its
        row was not committed when the statement began): the INSERT branch hits the primary key."""
        self.db.log.append((statement, rows))
        self.errors: list[Any] = []
        for offset, r in enumerate(rows):
            key = (r["content_hash"], r["prompt_version"], r["model_id"])
            error = self.db.fail_with.get(r["content_hash"]) or (1 if key in self.db.racing else None)
            if error is not None:
                if not batcherrors:
                    raise oracledb.IntegrityError(types.SimpleNamespace(
                        code=error, full_code=f"ORA-{error:05d}", message=f"ORA-{error:05d}: row {offset}"))
                self.errors.append(types.SimpleNamespace(offset=offset, code=error,
                                                         message=f"ORA-{error:05d}: row {offset}"))
                continue
            self.db.rows[key] = r["payload"]

    def getbatcherrors(self) -> list[Any]:
        return self.errors

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class RecordingDb:
    """Stands in for ``OracleConnector``: records each statement and its binds, keeps the rows."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []
        self.rows: dict[tuple[str, str, str], str] = {}
        self.racing: set[tuple[str, str, str]] = set()  # keys a concurrent enricher inserts first
        self.fail_with: dict[str, int] = {}  # content_hash -> ORA code of another error
        self.commits = 0

    @contextmanager
    def connection(self, action: str = "query") -> Iterator[Any]:
        yield self

    @contextmanager
    def transaction(self, action: str = "write") -> Iterator[Any]:
        before = dict(self.rows)
        try:
            yield self
        except BaseException:
            self.rows = before  # rollback
            raise
        self.commits += 1

    def cursor(self) -> RecordingCursor:
        return RecordingCursor(self)


def test_oracle_cache_sends_valid_oracle_sql_with_every_value_bound() -> None:
    db = RecordingDb()
    cache = OracleEnrichmentCache(db)
    assert isinstance(cache, EnrichmentCache)
    cache.put_many("1", "oci/cohere", {f"h{i}": f"payload {i}" for i in range(3)})
    assert db.commits == 1
    got = cache.get_many("1", "oci/cohere", [f"h{i}" for i in range(150)] + ["h0"])
    assert got == {f"h{i}": f"payload {i}" for i in range(3)}
    statements = [s for s, _ in db.log]
    assert statements[0] == oracle_cache.DDL and statements[1] == oracle_cache.MERGE_SQL
    # batches of 100 and 50 bound hashes, each padded to its IN-list bucket (L7: one statement text per bucket)
    assert [s.count(":h") for s in statements[2:]] == [128, 128]
    assert [sum(v is not None for k, v in b.items() if k.startswith("h")) for _, b in db.log[2:]] == [100, 50]
    for statement in {oracle_cache.DDL, oracle_cache.MERGE_SQL, oracle_cache.select_sql(3)}:
        check(statement)
        assert "payload 0" not in statement and "oci/cohere" not in statement  # values travel as binds
    merge_binds = db.log[1][1][0]
    assert set(merge_binds) == set(re.findall(r":(\w+)", oracle_cache.MERGE_SQL))


def test_two_enrichers_writing_the_same_content_do_not_fail_on_the_primary_key() -> None:
    """C8: the second MERGE of a key another enricher just inserted gets ORA-00001; it is ignored
    (batcherrors), the other rows are written, and the keys go in sorted order (same lock order)."""
    db = RecordingDb()
    cache = OracleEnrichmentCache(db)
    db.racing = {("h1", "1", "oci/cohere")}
    cache.put_many("1", "oci/cohere", {"h3": "p3", "h1": "p1", "h2": "p2"})
    assert db.commits == 1
    assert [r["content_hash"] for r in db.log[-1][1]] == ["h1", "h2", "h3"]
    assert cache.get_many("1", "oci/cohere", ["h1", "h2", "h3"]) == {"h2": "p2", "h3": "p3"}


def test_another_enrichment_cache_error_rolls_the_write_back() -> None:
    db = RecordingDb()
    cache = OracleEnrichmentCache(db)
    db.fail_with = {"h2": 12899}
    with pytest.raises(StoreError, match=r"1 of 2 rows could not be written to the enrichment cache .*ORA-12899"):
        cache.put_many("1", "m", {"h1": "p1", "h2": "p2"})
    assert db.commits == 0 and db.rows == {}


def test_a_typo_in_the_cache_sql_fails_the_oracle_parse() -> None:
    with pytest.raises(AssertionError):
        check(oracle_cache.MERGE_SQL.replace("WHEN MATCHED THEN UPDATE SET", "WHEN MATCHED UPDATE SETT"))
