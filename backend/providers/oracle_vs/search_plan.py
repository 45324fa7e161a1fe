"""How a dense search keeps its promise of ``k`` hits, as pure functions.

The trap: an approximate search (``FETCH APPROX``) whose metadata filter is
applied after the index produced its top candidates can return fewer than
``k`` rows, even none, although ``k`` matching rows exist. The port promises
``k`` hits whenever ``k`` chunks match, so:

* no vector index: exact search, always;
* HNSW with a filter (review §2.8): one ``FETCH APPROX ... WHERE <filter>`` statement
  (``filtered``): Oracle's HNSW plans apply the filter before or during the graph scan, so the
  index itself yields matching rows and no count is needed first. Should it still come back short
  of ``k``, the filter's rows are counted and, if more exist, the search turns exact;
* IVF (whose filtered plan may post-filter and return fewer than ``k``), with a filter that
  matches at most ``exact_filter_threshold`` rows: exact search (``FETCH FIRST`` without
  ``APPROX``), cheap because the filter is selective;
* IVF with a broad filter: approximate candidates first (``depth`` = ``k`` x factor), the
  filter after; while fewer than ``min(k, matching)`` survive, the depth grows by
  the factor, and once it would cover the table the search turns exact;
* no filter: approximate; if it comes back short of ``min(k, total)``, exact.

Exact search is the final word, so the loop always ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence, TypeVar

Row = TypeVar("Row")
Mode = Literal["approx", "filtered", "candidates", "exact"]


@dataclass(frozen=True)
class SearchPlan:
    mode: Mode
    depth: int = 0


def first_plan(*, k: int, filtered: bool, matching: int | None, index_type: str, threshold: int,
               factor: int = 4) -> SearchPlan:
    """The cheapest search that can honour ``k``; ``matching`` is the filter's row count (not needed,
    and not asked for, by an HNSW version's filtered search)."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if index_type == "none":
        return SearchPlan("exact")
    if not filtered:
        return SearchPlan("approx")
    if index_type == "hnsw":
        return SearchPlan("filtered")
    if matching is None:
        raise ValueError("a filtered search needs the number of matching rows")
    if matching <= threshold:
        return SearchPlan("exact")
    return SearchPlan("candidates", depth=k * factor)


def needs_count(index_type: str, filtered: bool) -> bool:
    """Whether ``first_plan`` needs the filter's row count before the first search."""
    return filtered and index_type not in ("none", "hnsw")


def next_plan(plan: SearchPlan, *, got: int, k: int, matching: int, total: int, factor: int = 4) -> SearchPlan | None:
    """None when ``got`` honours the promise, else the wider search to run next (a short ``filtered``
    or ``approx`` search turns exact)."""
    if got >= min(k, matching) or plan.mode == "exact":
        return None
    if plan.mode == "candidates":
        depth = plan.depth * factor
        return SearchPlan("candidates", depth=depth) if depth < total else SearchPlan("exact")
    return SearchPlan("exact")


def run_with_guarantee(
    run: Callable[[SearchPlan], Sequence[Row]],
    plan: SearchPlan,
    *,
    k: int,
    matching: Callable[[], int],
    total: Callable[[], int],
    factor: int = 4,
) -> tuple[Sequence[Row], list[SearchPlan]]:
    """Run ``plan`` and widen until ``k`` hits (or every match) came back.

    ``matching`` is called only when a result is short, and ``total`` only when candidates must
    widen (the only plan whose next step depends on it), so the common case costs one query.
    Returns the rows and the plans tried.
    """
    tried = [plan]
    rows = run(plan)
    while len(rows) < k:
        nxt = next_plan(plan, got=len(rows), k=k, matching=matching(),
                        total=total() if plan.mode == "candidates" else 0, factor=factor)
        if nxt is None:
            break
        plan = nxt
        tried.append(plan)
        rows = run(plan)
    return rows, tried
