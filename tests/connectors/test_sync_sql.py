"""A database table synced into a knowledge base (issue 46): SQLAlchemy against a real SQLite
database file, one row a document, ``updated_at`` the change column, readers in a column."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import ConfigError, SourceUnavailable
from backend.connectors.sql_table import SqlConnector
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario

QUERY = "SELECT slug, title, body, updated_at, readers FROM articles WHERE published = 1"


class SqlSource:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.tick = 0
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE articles (slug TEXT PRIMARY KEY, title TEXT, body TEXT, updated_at INTEGER, "
                        "readers TEXT, published INTEGER)")
            con.execute("INSERT INTO articles VALUES ('draft', 'Draft', 'Not yet.', 1, 'public', 0)")

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        with sqlite3.connect(self.path) as con:
            con.execute(sql, args)

    def put(self, name: str, text: str, readers: list[str]) -> None:
        self.tick += 1
        title, _, body = text.partition("\n\n")
        self._write("INSERT INTO articles VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT(slug) DO UPDATE SET body = excluded.body, "
                    "updated_at = excluded.updated_at, readers = excluded.readers",
                    (name, title, body, self.tick, ",".join(readers)))

    def delete(self, name: str) -> None:
        self._write("DELETE FROM articles WHERE slug = ?", (name,))

    def set_readers(self, name: str, readers: list[str]) -> None:
        self._write("UPDATE articles SET readers = ? WHERE slug = ?", (",".join(readers), name))

    def publish(self) -> None:
        return None

    def doc_id(self, name: str) -> str:
        return name

    def connector(self) -> SqlConnector:
        return SqlConnector(f"sqlite:///{self.path}", QUERY, id_column="slug", content_column="body",
                            change_column="updated_at", title_column="title", readers_column="readers")

    def broken(self) -> SqlConnector:
        return SqlConnector(f"sqlite:///{self.path}", "SELECT * FROM no_such_table", id_column="slug")


def test_sql_table_end_to_end(tmp_path: Path, embedder: Any) -> None:
    synced = Synced(tmp_path, embedder, "sql", {"url": "sqlite:///x.db", "query": QUERY, "id_column": "slug",
                                                "content_column": "body", "title_column": "title",
                                                "readers_column": "readers"})
    run_scenario(synced, SqlSource(tmp_path / "articles.db"))


def test_bad_columns_and_passwords_are_named(tmp_path: Path) -> None:
    source = SqlSource(tmp_path / "a.db")
    with pytest.raises(SourceUnavailable, match="the query returns no column missing_col"):
        list(SqlConnector(f"sqlite:///{source.path}", QUERY, id_column="slug", content_column="missing_col").list_items())
    with pytest.raises(ConfigError, match="options.id_column: 'slug; drop' is not a column name"):
        SqlConnector(f"sqlite:///{source.path}", QUERY, id_column="slug; drop")
    with pytest.raises(ConfigError, match="holds a password; give it in secrets.password"):
        SqlConnector("postgresql://u:hunter2@db/x", QUERY)
    with pytest.raises(SourceUnavailable, match="no such table: no_such_table") as err:
        list(source.broken().list_items())
    assert "hunter2" not in str(err.value)
