"""Row decoding and the query pieces the SQLite vector store's reads share.

Functions of an open connection and a validated table name (callers validate identifiers
before they reach here); every value is a bound parameter.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any, Sequence

import numpy as np

from backend.common.errors import EmbeddingModelMismatch, StoreError
from backend.common.identifiers import validate_identifier
from backend.core.types import Chunk, FieldFilter, QueryVector, Visibility
from backend.providers.sqlite_vs import dense
from backend.providers.sqlite_vs.filters import check_filter_fields, filter_sql

ROW_COLUMNS = "rowid, chunk_id, doc_id, chunk_index, chunk_type, source, text, content_hash, metadata"


def row_to_chunk(row: sqlite3.Row) -> Chunk:
    return Chunk(
        chunk_id=row["chunk_id"],
        doc_id=row["doc_id"],
        text=row["text"],
        source=row["source"],
        chunk_index=row["chunk_index"],
        chunk_type=row["chunk_type"],
        metadata=json.loads(row["metadata"]),
        content_hash=row["content_hash"],
    )


def tuples(con: sqlite3.Connection, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Rows as plain tuples: building a ``sqlite3.Row`` per row costs more than the query
    itself on the hot paths that read a few hundred (id, score) or (id, text) pairs."""
    cur = con.cursor()
    cur.row_factory = None
    return cur.execute(statement, list(params)).fetchall()


def fts_query(text: str) -> str:
    """User text as an FTS5 query: every word quoted (no operators), OR-ed. A repeated word
    stays repeated: ``bm25()`` sums over the query's phrases, so it counts once per occurrence
    (query term frequency, ``retrieval.lexical.query_term_frequency``; the search service
    sends each word once when that is off)."""
    words = re.findall(r"\w+", text.lower())
    return " OR ".join(f'"{w}"' for w in words)


def with_visibility(filters: Sequence[FieldFilter], visibility: Visibility | None) -> tuple[FieldFilter, ...]:
    """Access control as one more facet condition, so it narrows the candidate rowids in the
    same indexed query as the filters, before the NumPy top-k (a hidden chunk never takes a slot)."""
    return (*filters, visibility.as_filter()) if visibility is not None else tuple(filters)


def search_conditions(target: str, k: int, filters: Sequence[FieldFilter], visibility: Visibility | None
                       ) -> tuple[FieldFilter, ...]:
    """What every search checks before any SQL runs (``k``, the target's name, each filter
    field), and the filters with the reader's visibility added."""
    if k <= 0:
        raise StoreError(f"k must be positive, got {k}")
    validate_identifier(target, "retrieval target")
    filters = with_visibility(filters, visibility)
    check_filter_fields(filters)
    return filters


def fetch(con: sqlite3.Connection, table: str, rowids: Sequence[int]) -> dict[int, Chunk]:
    out: dict[int, Chunk] = {}
    for start in range(0, len(rowids), 500):
        part = [int(r) for r in rowids[start:start + 500]]
        marks = ",".join("?" * len(part))
        for row in con.execute(f"SELECT {ROW_COLUMNS} FROM {table} WHERE rowid IN ({marks})", part):
            out[row["rowid"]] = row_to_chunk(row)
    return out


def visible_rowids(con: sqlite3.Connection, t: str, m: dense.Matrix, chunk_ids: Sequence[str],
                    visibility: Visibility | None) -> np.ndarray:
    """Sorted rowids of these chunks (ids from the cached matrix, no index probe); with
    ``visibility``, hidden ones are left out by the same facet condition every search applies."""
    assert m.positions is not None
    known = sorted({m.positions[c] for c in chunk_ids if c in m.positions})
    rowids = m.rowids[np.asarray(known, dtype=np.int64)]
    if visibility is None or not len(rowids):
        return rowids
    where, params = filter_sql(with_visibility((), visibility), t)
    kept: list[int] = []
    for start in range(0, len(rowids), 500):
        part = rowids[start:start + 500].tolist()
        kept += [r[0] for r in tuples(con, f"SELECT t.rowid FROM {t} AS t WHERE t.rowid IN "
                                            f"({','.join('?' * len(part))}) AND {where}", [*part, *params])]
    return np.sort(np.asarray(kept, dtype=np.int64))


def check_query(vrow: sqlite3.Row, query: QueryVector) -> None:
    if not query.fits(vrow["model"], vrow["dimension"]):
        raise EmbeddingModelMismatch(
            f"query embedded with {query.model} ({query.dimension} dims) but {vrow['name']} holds vectors from "
            f"{vrow['model']} ({vrow['dimension']} dims); embed the query with the version's model"
            " (or declare both runtimes in embeddings.local.compatible_runtimes)",
            version=vrow["name"],
        )


def allowed(con: sqlite3.Connection, sql: str, params: Sequence[Any]) -> np.ndarray:
    """Sorted rowids a filter lets through."""
    return np.sort(np.fromiter((r[0] for r in con.execute(sql, list(params))), dtype=np.int64))


def best_per_chunk(con: sqlite3.Connection, t: str, rowids: Sequence[int]) -> list[tuple[int, str, str, str]]:
    """``(rowid, chunk_id, question_id, text)`` of the first question of each chunk, in ``rowids`` order."""
    rows: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(rowids), 500):
        part = [int(r) for r in rowids[start:start + 500]]
        marks = ",".join("?" * len(part))
        for r in con.execute(f"SELECT rowid, chunk_id, question_id, text FROM {t}_questions WHERE rowid IN "
                             f"({marks})", part):
            rows[r[0]] = (r[1], r[2], r[3])
    seen: set[str] = set()
    out: list[tuple[int, str, str, str]] = []
    for rid in rowids:
        chunk_id, question_id, text = rows[int(rid)]
        if chunk_id not in seen:
            seen.add(chunk_id)
            out.append((int(rid), chunk_id, question_id, text))
    return out


def fetch_chunks(con: sqlite3.Connection, t: str, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
    out: dict[str, Chunk] = {}
    for start in range(0, len(chunk_ids), 500):
        part = list(chunk_ids[start:start + 500])
        marks = ",".join("?" * len(part))
        for row in con.execute(f"SELECT {ROW_COLUMNS} FROM {t} WHERE chunk_id IN ({marks})", part):
            out[row["chunk_id"]] = row_to_chunk(row)
    return out


def lexical_rows(con: sqlite3.Connection, t: str, text: str, k: int, filters: Sequence[FieldFilter]
                  ) -> list[tuple[int, float]]:
    """``(rowid, score)`` of the top-``k`` full-text matches, best first (ties by rowid). Without
    filters the FTS table is ranked alone: joining the chunk table costs as much as bm25 itself
    when a query word occurs in most chunks."""
    match = fts_query(text)
    if not match:
        return []
    if filters:
        where, params = filter_sql(filters, t)
        statement = (f"SELECT t.rowid AS rid, -bm25({t}_fts) AS score FROM {t}_fts JOIN {t} AS t "
                     f"ON t.rowid = {t}_fts.rowid WHERE {t}_fts MATCH ? AND {where} ORDER BY score DESC, t.rowid "
                     f"LIMIT ?")
    else:
        params = []
        statement = (f"SELECT rowid AS rid, -bm25({t}_fts) AS score FROM {t}_fts WHERE {t}_fts MATCH ? "
                     f"ORDER BY score DESC, rowid LIMIT ?")
    return tuples(con, statement, [match, *params, k])
