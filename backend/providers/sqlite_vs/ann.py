"""An HNSW index (faiss) per version of the embedded store, beside the SQLite file.

Why faiss: of the ANN libraries that install as wheels with nothing downloaded at run time
(hnswlib ships only a source archive), faiss and usearch were level per query at recall@10 >= 0.97,
but importing usearch before ONNX Runtime creates its session (the default embedder) crashes the
process (docs/BENCHMARKS.md, section 11). A version is immutable once its load
finishes, so its index is built once then (``finish_load``) from the rows SQLite holds, written
to ``<db>.ann/<version>[.<side>].faiss`` under a temporary name and renamed, and recorded in
the version's ``ann`` stamp with the generation it describes. A search uses it only while that
generation is the version's; otherwise (a later write, a missing or unreadable file) the exact
NumPy scan answers, which stays the reference. The index holds rowids as keys; its hits are
re-scored exactly from the float32 matrix, so scores are those of the exact scan.

A version built from a parent (a sync, an upload, an incremental ingest) keeps the parent's
rowids (``schema.copy_version_sql``), so its index starts from a copy of the parent's graph
(``extend``): only rows the parent's index lacks, or holds with another vector, are added
(``catalog.carried_rows``). faiss's
HNSW cannot delete, so the keys of deleted or replaced rows stay in the graph as stale entries:
a search asks for proportionally more neighbours and drops every key the version's matrix lacks
(and keeps each key once) at the exact re-scoring. Past ``rebuild_stale_share`` stale entries,
or when the parent's index was built with other settings, the index is built whole again.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import structlog

from backend.common.config import SqliteAnnSettings
from backend.common.identifiers import validate_identifier
from backend.core.types import Distance

log = structlog.get_logger(__name__)
LIBRARY = "faiss"
SIDES = ("", "questions", "summaries")


def index_dir(db_path: str) -> Path:
    return Path(db_path + ".ann")


def index_file(db_path: str, version: str, side: str = "") -> Path:
    name = validate_identifier(version, "index_name") + (f".{side}" if side else "")
    return index_dir(db_path) / f"{name}.{LIBRARY}"


def _metric(distance: Distance) -> str:
    # cosine rows are stored unit-length in the matrix, so inner product ranks them alike
    return "l2" if distance == "euclidean" else "ip"


def build(path: Path, rowids: np.ndarray, vectors: np.ndarray, distance: Distance,
          settings: SqliteAnnSettings) -> dict[str, Any]:
    """Build and write the index atomically; the stamp describing it (without the generation)."""
    import faiss

    metric = faiss.METRIC_L2 if distance == "euclidean" else faiss.METRIC_INNER_PRODUCT
    dim = vectors.shape[1]
    graph: Any  # faiss's stubs type the two classes apart and the quantizer argument as an object
    if settings.dtype == "f32":
        graph = faiss.IndexHNSWFlat(dim, settings.connectivity, metric)
    else:
        qtype = faiss.ScalarQuantizer.QT_fp16 if settings.dtype == "f16" else faiss.ScalarQuantizer.QT_8bit
        graph = faiss.IndexHNSWSQ(dim, qtype, settings.connectivity, metric)  # type: ignore[arg-type]
    graph.hnsw.efConstruction = settings.expansion_add
    graph.hnsw.efSearch = settings.expansion_search
    index = faiss.IndexIDMap(graph)
    _add(index, rowids, vectors, train=True)
    return _write(index, path, distance, settings, live=len(rowids))


def extend(path: Path, parent_path: Path, parent_entry: Mapping[str, Any], rowids: np.ndarray,
           vectors: np.ndarray, stale: int, distance: Distance, settings: SqliteAnnSettings) -> dict[str, Any]:
    """The parent's index file read afresh (never the loaded copy searches share), the new version's
    ``rowids``/``vectors`` that it lacks added, written atomically beside it; the stamp describing it,
    with ``keys`` (entries in the graph) above ``count`` (the version's rows) by ``stale``."""
    import faiss

    index = faiss.read_index(str(parent_path))
    if index.ntotal != parent_entry.get("keys", parent_entry.get("count")):
        raise OSError(f"{parent_path.name} is not the index its stamp describes")
    _add(index, rowids, vectors, train=False)
    entry = _write(index, path, distance, settings, live=int(index.ntotal) - stale)
    return {**entry, "added": int(len(rowids)), "from": parent_path.name}


def _add(index: Any, rowids: np.ndarray, vectors: np.ndarray, *, train: bool) -> None:
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        if train and not index.is_trained:
            index.train(vectors)
        if len(rowids):
            index.add_with_ids(vectors, rowids.astype(np.int64))
    finally:
        faiss.omp_set_num_threads(1)  # a query is one thread; idle OpenMP threads must not spin on serving cores


def _write(index: Any, path: Path, distance: Distance, settings: SqliteAnnSettings, *, live: int) -> dict[str, Any]:
    import faiss

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    faiss.write_index(index, str(tmp))
    os.replace(tmp, path)
    return {"library": LIBRARY, "type": "hnsw", "metric": _metric(distance), "dtype": settings.dtype,
            "M": settings.connectivity, "ef_construction": settings.expansion_add,
            "ef_search": settings.expansion_search, "count": live, "keys": int(index.ntotal), "file": path.name,
            "bytes": path.stat().st_size}


def reusable(entry: Mapping[str, Any], distance: Distance, settings: SqliteAnnSettings) -> bool:
    """Whether a parent's index was built as this store would build one now (same metric and graph)."""
    return (entry.get("metric"), entry.get("dtype"), entry.get("M"), entry.get("ef_construction")) == \
        (_metric(distance), settings.dtype, settings.connectivity, settings.expansion_add)


def remove(db_path: str, version: str) -> None:
    for side in SIDES:
        try:
            index_file(db_path, version, side).unlink(missing_ok=True)
        except OSError as exc:
            log.warning("store.ann_not_removed", version=version, error=str(exc)[:200])


class Searcher:
    """A loaded index. faiss searches are read-only and safe from several threads at once; the
    beam (efSearch) is passed per call, never set on the shared index."""

    def __init__(self, index: Any, ef_search: int) -> None:
        self.index = index
        self.ef_search = ef_search

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def search(self, vector: np.ndarray, depth: int) -> np.ndarray:
        import faiss

        faiss.omp_set_num_threads(1)  # per thread: one query needs no team of spinning OpenMP threads
        params = faiss.SearchParametersHNSW(efSearch=max(self.ef_search, depth))  # type: ignore[attr-defined]
        _, labels = self.index.search(vector.reshape(1, -1), depth, params=params)
        keys = labels[0]
        return np.asarray(keys[keys >= 0], dtype=np.int64)  # -1: fewer than depth reachable


@dataclass(frozen=True)
class Loaded:
    generation: int
    built_at: str | None  # a rebuild at the same generation (a damaged file replaced) is loaded again
    index: Searcher | None  # None: recorded but unusable (missing, truncated); the exact scan answers


class AnnCache:
    """Indexes loaded per process, keyed like the matrix cache, valid for one generation and build.
    A file that cannot be read is remembered as unusable for that build (warned once); a rebuild by
    any process records a new ``built_at``, so it is loaded again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str], Loaded] = {}

    def get(self, db: str, key: str, generation: int, path: Path, stamp: Mapping[str, Any]) -> Searcher | None:
        with self._lock:
            item = self._items.get((db, key))
        if item is not None and (item.generation, item.built_at) == (generation, stamp.get("built_at")):
            return item.index
        index = _load(path, stamp)
        with self._lock:
            self._items[(db, key)] = Loaded(generation, stamp.get("built_at"), index)
        return index

    def drop(self, db: str, key: str) -> None:
        with self._lock:
            self._items.pop((db, key), None)


def _load(path: Path, stamp: Mapping[str, Any]) -> Searcher | None:
    import faiss

    try:
        if not path.is_file() or path.stat().st_size != stamp.get("bytes"):
            raise OSError("missing or not the size recorded")
        index = faiss.read_index(str(path))
        if index.ntotal != stamp.get("keys", stamp.get("count")):
            raise OSError("not a complete index")
        faiss.omp_set_num_threads(1)
        return Searcher(index, int(stamp.get("ef_search", 64)))
    except Exception as exc:  # noqa: BLE001 - any unreadable file means: search exactly, say so
        log.warning("store.ann_unusable", file=str(path), error=str(exc)[:200],
                    fallback="exact search; finish_load rebuilds it")
        return None


# --- the decision (pure) -----------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    kind: str  # "hnsw" or "exact"
    reason: str
    depth: int = 0  # how many neighbours to ask the index for

    def explain(self) -> dict[str, Any]:
        return {"kind": self.kind, "reason": self.reason, "depth": self.depth if self.kind == "hnsw" else None}


def plan(rows: int, allowed: int | None, k: int, has_index: bool, settings: SqliteAnnSettings,
         why_none: str = "no index") -> Plan:
    """Exact or HNSW, and how deep: a filter leaving few rows is scanned exactly (cheaper than the
    graph); otherwise the index is asked deep enough that ``k`` visible rows are expected among
    its hits (``k / fraction visible``, twice over)."""
    if not has_index:
        return Plan("exact", why_none)
    if allowed is None:
        return Plan("hnsw", "unfiltered", min(rows, max(k, 1)))
    if allowed <= settings.min_vectors:
        return Plan("exact", f"filters leave {allowed} rows (<= store.sqlite.ann.min_vectors): exact over them")
    depth = math.ceil(2 * k * rows / max(allowed, 1))
    if depth > settings.max_depth:
        return Plan("exact", f"filters leave {allowed} of {rows} rows: k={k} would need depth {depth} "
                             f"> max_depth {settings.max_depth}; exact over the visible rows")
    return Plan("hnsw", f"filtered ({allowed} of {rows} rows visible), widened", min(rows, depth))


def query(index: Searcher, vector: np.ndarray, depth: int, live: int | None = None) -> np.ndarray:
    """Rowids of the ``depth`` nearest, by the graph, searched with a beam of
    ``max(ef_search, depth)``: a widened search widens its beam too. An index holding stale
    entries (``live`` of its keys are the version's rows) is asked deeper in proportion, and
    each key comes back once (a replaced row's old and new entries share it)."""
    total = len(index)
    if live is not None and 0 < live < total:
        depth = min(total, math.ceil(depth * total / live))
    return np.unique(index.search(vector.astype(np.float32), depth))
