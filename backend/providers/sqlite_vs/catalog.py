"""Reads of the version catalog that the index admin and the vector store both make.

Pure functions of an open connection (inside the caller's transaction), so a write checks
protection in the same transaction that writes, and a search resolves its alias in the same
snapshot that it searches.
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from backend.common.errors import AliasNotFound, VersionNotFound, VersionServed
from backend.common.identifiers import validate_identifier
from backend.core.types import IndexVersion


def version_row(con: sqlite3.Connection, name: str) -> sqlite3.Row:
    row: sqlite3.Row | None = con.execute("SELECT * FROM rag_versions WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise VersionNotFound(f"index version {name!r} does not exist", version=name)
    return row


def resolve_target(con: sqlite3.Connection, target: str) -> sqlite3.Row:
    """The catalog row of the version an alias (or a version name) names."""
    validate_identifier(target, "retrieval target")
    row: sqlite3.Row | None = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (target,)).fetchone()
    if row is not None:
        return version_row(con, row["version"])
    row = con.execute("SELECT * FROM rag_versions WHERE name = ?", (target,)).fetchone()
    if row is None:
        raise AliasNotFound(f"{target!r} is neither an alias nor an index version; ingest and promote first",
                            target=target)
    return row


def protected(con: sqlite3.Connection) -> dict[str, str]:
    """``version -> why`` for each version an alias serves or keeps as its rollback target."""
    out: dict[str, str] = {}
    for r in con.execute("SELECT alias, version FROM rag_aliases ORDER BY alias"):
        out.setdefault(r["version"], f"{r['alias']} live")
    rows = con.execute(
        "SELECT h.alias, h.previous FROM rag_alias_history AS h WHERE h.previous IS NOT NULL AND h.id = "
        "(SELECT MAX(id) FROM rag_alias_history WHERE alias = h.alias) ORDER BY h.alias")
    for r in rows:
        out.setdefault(r["previous"], f"{r['alias']} rollback")
    return out


def check_writable(con: sqlite3.Connection, version: str, allow_served: bool) -> None:
    if allow_served:
        return
    why = protected(con).get(version)
    if why is not None:
        raise VersionServed(
            f"{version} is served ({why}) and served versions are never written; ingest builds the next "
            "version instead (or pass --in-place to write it anyway)", version=version)


def count(con: sqlite3.Connection, name: str) -> tuple[int, int, int]:
    """Chunks, documents and bytes of a version: a scan of every row."""
    t = validate_identifier(name, "index_name")
    chunks, docs, size = con.execute(
        f"SELECT COUNT(*), COUNT(DISTINCT doc_id), "
        f"COALESCE(SUM(LENGTH(CAST(text AS BLOB)) + LENGTH(metadata) + LENGTH(embedding)), 0) FROM {t}"
    ).fetchone()
    return int(chunks), int(docs), int(size)


def to_version(con: sqlite3.Connection, row: sqlite3.Row) -> IndexVersion:
    """The counts ``finish_load`` recorded at the version's present generation, else a scan (L9:
    listing versions reads one registry row per finished version, not every chunk)."""
    recorded = json.loads(row["counts"]) if "counts" in row.keys() and row["counts"] else None
    if recorded is not None and recorded[0] == row["generation"]:
        chunks, docs, size = recorded[1:]
    else:
        chunks, docs, size = count(con, row["name"])
    return IndexVersion(
        name=row["name"],
        model=row["model"],
        dimension=row["dimension"],
        distance=row["distance"],
        created_at=row["created_at"],
        chunk_count=chunks,
        doc_count=docs,
        profile=row["profile"],
        evaluation=json.loads(row["evaluation"]) if row["evaluation"] else None,
        generation=row["generation"],
        parent=row["parent"],
        size_bytes=int(size),
        retrieval=json.loads(row["retrieval"]) if row["retrieval"] else None,
    )


def carried_rows(con: sqlite3.Connection, parent: str, version: str, side: str = "") -> tuple[np.ndarray, int]:
    """Against its ``parent`` (whose rowids it kept, ``schema.copy_version_sql``): the rowids of
    ``version``'s rows (of its ``side`` table) that the parent lacks or holds with another vector, in
    order, and how many of the parent's rows it no longer holds as they were (deleted or replaced).
    A join on rowid in SQL: neither version's vectors are read into memory."""
    suffix = f"_{side}" if side else ""
    p = validate_identifier(parent, "index_name") + suffix
    v = validate_identifier(version, "index_name") + suffix
    added = con.execute(f"SELECT v.rowid FROM {v} AS v LEFT JOIN {p} AS p ON p.rowid = v.rowid AND "
                        f"p.embedding = v.embedding WHERE p.rowid IS NULL ORDER BY v.rowid").fetchall()
    (held,) = con.execute(f"SELECT count(*) FROM {p}").fetchone()
    (rows,) = con.execute(f"SELECT count(*) FROM {v}").fetchone()
    kept = int(rows) - len(added)  # every other row of the version is one of the parent's, as it was
    return np.fromiter((r[0] for r in added), dtype=np.int64, count=len(added)), int(held) - kept
