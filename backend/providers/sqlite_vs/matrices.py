"""A version's vectors as one in-memory matrix, and its HNSW index, cached per process.

Both the vector store (searches) and the index admin (building and dropping indexes) read
them, so they live here, keyed by ``(database file, version@created_at[#side])`` and
reloaded when the version's generation moves. ``MATRICES`` and ``INDEXES`` are module
globals on purpose: two store objects on one file in one process share one copy.
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from backend.common.config import SqliteAnnSettings
from backend.core.types import QueryVector
from backend.providers.sqlite_vs import ann, dense

MATRICES = dense.MatrixCache()
INDEXES = ann.AnnCache()


def cache_key(vrow: sqlite3.Row, side: str = "") -> str:
    """Keyed by creation time too: a version dropped and re-created under the same name
    (possibly by another process) restarts its generation at 0."""
    return f"{vrow['name']}@{vrow['created_at']}" + (f"#{side}" if side else "")


class VersionMatrices:
    """The matrices and indexes of the versions in one database file."""

    def __init__(self, path: str, ann_settings: SqliteAnnSettings) -> None:
        self.path = path
        self.ann = ann_settings

    def matrix(self, con: sqlite3.Connection, vrow: sqlite3.Row, side: str = "") -> dense.Matrix:
        """The version's chunk vectors, or with ``side`` those of its ``questions`` or
        ``summaries`` table, read once per generation and cached."""
        name, generation = vrow["name"], vrow["generation"]
        key = cache_key(vrow, side)
        m = MATRICES.get(self.path, key, generation)
        if m is None:
            # chunk matrices keep each row's chunk id, so dense candidates need no row reads
            columns = "rowid, embedding, chunk_id" if not side else "rowid, embedding"
            rows = con.execute(f"SELECT {columns} FROM {name}{'_' + side if side else ''}").fetchall()
            dim = vrow["dimension"]
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = (
                np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                if rows else np.zeros((0, dim), dtype=np.float32)
            )
            ids = np.array([r[2] for r in rows], dtype=object) if not side else None
            m = dense.prepare(rowids, vectors, vrow["distance"], generation, ids)
            MATRICES.put(self.path, key, m)
        return m

    def index(self, vrow: sqlite3.Row, side: str, m: dense.Matrix) -> tuple[ann.Searcher | None, str]:
        """The loaded HNSW index of this version's ``side`` when it describes the rows being
        searched (same generation, same count), else ``None`` and why not."""
        if not self.ann.enabled:
            return None, "store.sqlite.ann.enabled is off"
        stamp = json.loads(vrow["ann"]) if "ann" in vrow.keys() and vrow["ann"] else {}
        entry = stamp.get(side or "chunks")
        if entry is None:
            if len(m.rowids) < self.ann.min_vectors:
                return None, f"{len(m.rowids)} rows < store.sqlite.ann.min_vectors ({self.ann.min_vectors})"
            return None, "no index built (finish_load has not run since the last write)"
        if stamp["generation"] != vrow["generation"] or entry["count"] != len(m.rowids):
            return None, "index stale (the version was written after finish_load)"
        index = INDEXES.get(self.path, cache_key(vrow, side), vrow["generation"],
                            ann.index_file(self.path, vrow["name"], side), entry)
        return index, ("index file unusable (logged); run finish_load to rebuild" if index is None else "")

    def ranked(self, vrow: sqlite3.Row, side: str, m: dense.Matrix, query: QueryVector, depth: int,
               allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, ann.Plan]:
        """Positions in ``m`` of the best ``depth`` rows among ``allowed`` (sorted rowids; None: all)
        and their exact similarities, best first, ties by rowid. By the HNSW index where there is one
        and the filter leaves enough rows (widened by the visible fraction); when the widened search
        still finds fewer than ``depth`` visible rows, by the exact scan over them, so no hidden row is
        ever returned and no visible one is missed for lack of depth."""
        q = query.values.astype(np.float32)
        index, why_none = self.index(vrow, side, m)
        visible = len(m.rowids) if allowed is None else len(allowed)
        how = ann.plan(len(m.rowids), None if allowed is None else visible, depth, index is not None, self.ann,
                       why_none)
        if how.kind == "hnsw" and index is not None:
            keys = ann.query(index, q, how.depth, live=len(m.rowids))  # sorted, each once
            if allowed is not None:
                keys = keys[np.isin(keys, allowed, assume_unique=True)]
            positions = np.minimum(np.searchsorted(m.rowids, keys), max(len(m.rowids) - 1, 0))
            positions = positions[m.rowids[positions] == keys]  # a key this matrix lacks is never a hit
            sims = dense.scores(m.vectors[positions], q, vrow["distance"])
            best = dense.top_k(sims, depth)
            if len(best) >= min(depth, visible):
                return positions[best], sims[best], how
            how = ann.Plan("exact", f"hnsw at depth {how.depth} found {len(best)} of {min(depth, visible)} "
                                    "visible rows; exact over the visible rows")
        if allowed is None:  # the whole matrix, not a copy of it
            sims = dense.scores(m.vectors, q, vrow["distance"])
            best = dense.top_k(sims, depth)
            return best, sims[best], how
        positions = np.searchsorted(m.rowids, allowed)
        sims = dense.scores(m.vectors[positions], q, vrow["distance"])
        best = dense.top_k(sims, depth)
        return positions[best], sims[best], how

    def drop_indexes(self, vrow: sqlite3.Row) -> None:
        """Forget the loaded indexes of the version (rebuilt files are loaded on next use)."""
        for side in ann.SIDES:
            INDEXES.drop(self.path, cache_key(vrow, side))

    def forget(self, name: str, created_at: str) -> None:
        """A dropped version: its cached matrices and indexes, and its index files."""
        for suffix in ("", "#questions", "#summaries"):
            MATRICES.drop(self.path, f"{name}@{created_at}{suffix}")
            INDEXES.drop(self.path, f"{name}@{created_at}{suffix}")
        if self.path != ":memory:":
            ann.remove(self.path, name)
