"""A database table or query as a source (SQLAlchemy): one row a document, so Oracle tables are
a source too (``oracle+oracledb://``).

The configured ``query`` is run as written (it is the operator's, from the connectors file,
never from a request) and must return the id, content and change columns (and, when set, the
title and readers columns); the column names are validated identifiers. A row's token is its
change column (``updated_at``, a version number, an ``ORA_ROWSCN``); its readers the readers
column split on commas or spaces. The password comes from ``secrets.password`` (an environment
variable), set on the URL object, never formatted into a string that could be logged.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from backend.common.errors import ConfigError, SourceItemFailed, SourceUnavailable
from backend.core.connector import FetchedItem, SourceItem

_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$#]{0,127}$")


def _column(name: str, field: str) -> str:
    if not _COLUMN.fullmatch(name):
        raise ConfigError(f"options.{field}: {name!r} is not a column name", field=f"options.{field}")
    return name


class SqlConnector:
    kind = "sql"

    def __init__(self, url: str, query: str, *, id_column: str = "id", content_column: str = "content",
                 change_column: str = "updated_at", title_column: str | None = None,
                 readers_column: str | None = None, password: str | None = None) -> None:
        from sqlalchemy.engine import make_url

        self.url = make_url(url)
        if self.url.password:
            raise ConfigError("options.url holds a password; give it in secrets.password (an environment variable)",
                              field="options.url")
        if password is not None:
            self.url = self.url.set(password=password)
        self.query = query
        self.columns = {"id": _column(id_column, "id_column"), "content": _column(content_column, "content_column"),
                        "change": _column(change_column, "change_column"),
                        "title": _column(title_column, "title_column") if title_column else None,
                        "readers": _column(readers_column, "readers_column") if readers_column else None}
        self._rows: dict[str, str] = {}

    def list_items(self) -> Iterator[SourceItem]:
        from sqlalchemy import create_engine, text
        from sqlalchemy.exc import SQLAlchemyError

        engine = create_engine(self.url)
        try:
            with engine.connect() as con:
                result = con.execute(text(self.query))
                keys = {k.lower(): k for k in result.keys()}
                wanted = {role: keys.get(col.lower()) for role, col in self.columns.items() if col}
                missing = [self.columns[r] for r, k in wanted.items() if k is None]
                if missing:
                    raise SourceUnavailable(f"{self.url.render_as_string(hide_password=True)}: the query returns no "
                                            f"column {', '.join(str(m) for m in missing)}")
                rows: list[Any] = [r._mapping for r in result]
        except SQLAlchemyError as exc:
            raise SourceUnavailable(f"{self.url.render_as_string(hide_password=True)}: "
                                    f"{type(exc).__name__}: {str(exc.orig if hasattr(exc, 'orig') else exc)[:300]}") \
                from exc
        finally:
            engine.dispose()
        self._rows = {}
        for row in rows:
            item_id = str(row[wanted["id"]])
            content = row[wanted["content"]]
            self._rows[item_id] = "" if content is None else str(content)
            readers = None
            if wanted.get("readers") is not None and row[wanted["readers"]] is not None:
                readers = tuple(r for r in re.split(r"[,\s]+", str(row[wanted["readers"]])) if r)
            title = str(row[wanted["title"]]) if wanted.get("title") is not None else item_id
            yield SourceItem(item_id, str(row[wanted["change"]]), title=title,
                             url=f"{self.url.render_as_string(hide_password=True)}#{item_id}", readers=readers,
                             content_type="text/plain")

    def fetch(self, item: SourceItem) -> FetchedItem:
        if item.item_id not in self._rows:
            raise SourceItemFailed(f"row {item.item_id}: not in this listing")
        title = item.title if item.title != item.item_id else ""
        text = (title + "\n\n" if title else "") + self._rows[item.item_id]
        return FetchedItem(item.item_id, text.encode("utf-8"), ".txt")
