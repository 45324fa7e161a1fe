"""The enrichment cache: real SQLite, and the Oracle adapter's statements (Oracle-dialect parse,
named binds only) against a recording connector."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

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

    def executemany(self, statement: str, rows: list[dict[str, Any]]) -> None:
        self.db.log.append((statement, rows))
        for r in rows:
            self.db.rows[(r["content_hash"], r["prompt_version"], r["model_id"])] = r["payload"]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class RecordingDb:
    """Stands in for ``OracleConnector``: records each statement and its binds, keeps the rows."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []
        self.rows: dict[tuple[str, str, str], str] = {}
        self.commits = 0

    @contextmanager
    def connection(self, action: str = "query") -> Iterator[Any]:
        yield self

    @contextmanager
    def transaction(self, action: str = "write") -> Iterator[Any]:
        yield self
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
    assert [s.count(":h") for s in statements[2:]] == [100, 50]  # batches of bound hashes
    for statement in {oracle_cache.DDL, oracle_cache.MERGE_SQL, oracle_cache.select_sql(3)}:
        check(statement)
        assert "payload 0" not in statement and "oci/cohere" not in statement  # values travel as binds
    merge_binds = db.log[1][1][0]
    assert set(merge_binds) == set(re.findall(r":(\w+)", oracle_cache.MERGE_SQL))


def test_a_typo_in_the_cache_sql_fails_the_oracle_parse() -> None:
    with pytest.raises(AssertionError):
        check(oracle_cache.MERGE_SQL.replace("WHEN MATCHED THEN UPDATE SET", "WHEN MATCHED UPDATE SETT"))
