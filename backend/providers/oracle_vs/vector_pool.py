"""Does an HNSW build fit the vector pool? Pure decisions for ``finish_load`` (review §2.6, U8).

HNSW graphs live in the SGA's vector pool. A build that does not fit fails with ORA-51962 after
the old index was dropped. ``finish_load`` therefore asks first, before it drops or changes
anything. ``DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR`` says how much each graph needs (one call per
indexed table: the chunks, and the HyDE questions when there are any). ``V$VECTOR_MEMORY_POOL``
says what the pool has free (allocated minus used, over its sub-pools), except where the pool
grows on demand (Autonomous Database, an elastic 26ai pool, a PDB quota above the allocation:
``grows_on_demand``), where the free figure is unknown and HNSW is built. When the graphs need more
than the pool has free, ``vector_index.pool_shortfall`` decides: ``fail`` (the default) stops with
the figures and the parameter to raise, ``ivf`` builds IVF instead (its centroids are small; the
vectors stay on disk) and says so in the ingest's report, and ``build`` goes ahead.

The advisor's ``RESPONSE_JSON`` is documented only by example ("Suggested vector memory pool size:
59918628 Bytes"; DBMS_VECTOR reference, ``INDEX_VECTOR_MEMORY_ADVISOR``), so ``advised_bytes``
reads a byte figure from JSON or text. When the advisor cannot be read, the sizing formula of
"Size the Vector Pool" (1.3 x vectors x dimensions x bytes per dimension) stands in for it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, Sequence

Shortfall = Literal["ivf", "fail", "build"]
#: Bytes per unit of the sizes an advisor response may use.
_UNITS = {"": 1, "B": 1, "BYTE": 1, "BYTES": 1, "K": 1024, "KB": 1024, "M": 1024 ** 2, "MB": 1024 ** 2,
          "G": 1024 ** 3, "GB": 1024 ** 3, "T": 1024 ** 4, "TB": 1024 ** 4}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(BYTES|BYTE|TB|GB|MB|KB|[BKMGT])?\b", re.IGNORECASE)


def formula_bytes(vectors: int, dimension: int, bytes_per_dimension: int = 4) -> int:
    """'Size the Vector Pool' (AI Vector Search User's Guide): 1.3 x vectors x dimensions x bytes."""
    return int(1.3 * vectors * dimension * bytes_per_dimension)


def _size(text: str) -> int | None:
    found = _SIZE.search(text)
    if found is None:
        return None
    return int(float(found.group(1)) * _UNITS[(found.group(2) or "").upper()])


def advised_bytes(response: str) -> int | None:
    """The suggested pool size in an advisor response, in bytes; None when none can be read.

    JSON: the first member whose name mentions ``suggest`` (or else ``memory``/``size``), as a
    number of bytes or a string such as ``"2MB"``. Text: the figure after "suggested ... size:"."""
    text = (response or "").strip()
    if not text:
        return None
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        items = [(str(k).lower(), v) for k, v in _flatten(data)]
        for wanted in ("suggest", "memory", "size"):
            for key, value in items:
                if wanted in key:
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        return int(value)
                    if isinstance(value, str) and (size := _size(value)) is not None:
                        return size
        return None
    found = re.search(r"suggested[^:]*:\s*(.+)", text, re.IGNORECASE)
    return _size(found.group(1)) if found else None


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def grows_on_demand(cloud_service: str | None, vector_memory_size: int | None, allocated: int) -> str | None:
    """Why the pool's free bytes say nothing about what an HNSW build can get, or None when they do
    (review 4, M1). On Autonomous Database the pool "dynamically grows and shrinks when HNSW indexes
    are created or dropped"; with ``VECTOR_MEMORY_SIZE=1`` (26ai) it is elastic; and a PDB's
    ``VECTOR_MEMORY_SIZE`` is "the maximum Vector Pool usage allowed by a PDB", a quota the
    allocation grows into (AI Vector Search User's Guide, *Vector Memory Management*, *Size the
    Vector Pool*). Pure: ``SYS_CONTEXT('USERENV','CLOUD_SERVICE')``, the parameter in bytes, and
    ``V$VECTOR_MEMORY_POOL``'s allocated bytes."""
    if cloud_service:
        return f"Autonomous Database (CLOUD_SERVICE {cloud_service}): the vector pool grows with its HNSW indexes"
    if vector_memory_size == 1:
        return "an elastic vector pool (VECTOR_MEMORY_SIZE=1): it grows with its HNSW indexes"
    if vector_memory_size is not None and vector_memory_size > allocated:
        return (f"VECTOR_MEMORY_SIZE {vector_memory_size} is above the {allocated} bytes allocated: a quota the "
                "pool grows into")
    return None


def pool_mode(row: Sequence[Any] | None) -> tuple[str | None, int | None]:
    """``(cloud service, VECTOR_MEMORY_SIZE in bytes)`` from ``POOL_MODE_SQL``'s row (None: unknown)."""
    if not row:
        return None, None
    service = (str(row[0]).strip() or None) if row[0] else None
    try:
        size = int(str(row[1]).strip()) if row[1] is not None else None
    except ValueError:
        size = None
    return service, size


def free_bytes(rows: Sequence[Sequence[Any]]) -> int | None:
    """Allocated minus used over ``V$VECTOR_MEMORY_POOL``'s rows ``(pool, alloc_bytes, used_bytes,
    ...)``; None for no rows (nothing known: the caller builds as before)."""
    if not rows:
        return None
    return sum(int(r[1] or 0) - int(r[2] or 0) for r in rows)


@dataclass(frozen=True)
class PoolVerdict:
    """What ``finish_load`` builds: ``hnsw`` (fits, unknown, or ``build``), ``ivf`` (fallback), or
    ``fail`` with ``message``."""

    action: Literal["hnsw", "ivf", "fail"]
    needed: int | None
    free: int | None
    message: str = ""


def decide(*, version: str, needed: int | None, free: int | None, shortfall: Shortfall) -> PoolVerdict:
    """HNSW when the graphs fit (or either figure is unknown); otherwise what ``shortfall`` says,
    with a message naming both figures and the parameter to raise."""
    if needed is None or free is None or needed <= free:
        return PoolVerdict("hnsw", needed, free)
    figures = (f"the HNSW graphs of {version} need about {needed} bytes of vector pool "
               f"(DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR) but V$VECTOR_MEMORY_POOL has {free} bytes free")
    raise_it = (f"raise VECTOR_MEMORY_SIZE by at least {needed - max(free, 0)} bytes (as a DBA: ALTER SYSTEM SET "
                "VECTOR_MEMORY_SIZE = ...; 26ai: VECTOR_MEMORY_SIZE=1 for an elastic pool)")
    if shortfall == "build":
        return PoolVerdict("hnsw", needed, free, f"{figures}; building HNSW anyway "
                           "(store.oracle.vector_index.pool_shortfall: build)")
    if shortfall == "ivf":
        return PoolVerdict("ivf", needed, free, f"{figures}; building IVF instead "
                           f"(store.oracle.vector_index.pool_shortfall: ivf). For HNSW, {raise_it} and finish the "
                           "load of a new version")
    return PoolVerdict("fail", needed, free, f"{figures}: nothing was dropped or changed. {raise_it}, or set "
                       "store.oracle.vector_index.pool_shortfall: ivf (or vector_index.type: ivf), then run the "
                       "ingest again")
