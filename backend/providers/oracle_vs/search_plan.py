"""How a dense search keeps its promise of ``k`` hits, as pure functions.

The trap: an approximate search (``FETCH APPROX``) whose metadata filter is
applied after the index produced its top candidates can return fewer than
``k`` rows, even none, although ``k`` matching rows exist. The port promises
``k`` hits whenever ``k`` chunks match, so:

* no vector index: exact search, always;
* a filter that matches at most ``exact_filter_threshold`` rows: exact search
  (``FETCH FIRST`` without ``APPROX``), cheap because the filter is selective;
* a broad filter: approximate candidates first (``depth`` = ``k`` x factor), the
  filter after; while fewer than ``min(k, matching)`` survive, the depth grows by
  the factor, and once it would cover the table the search turns exact;
* no filter: approximate; if it comes back short of ``min(k, total)``, exact.

Exact search is the final word, so the loop always ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence, TypeVar

Row = TypeVar("Row")
Mode = Literal["approx", "candidates", "exact"]


@dataclass(frozen=True)
class SearchPlan:
    mode: Mode
    depth: int = 0


def first_plan(*, k: int, filtered: bool, matching: int | None, index_type: str, threshold: int,
               factor: int = 4) -> SearchPlan:
    """The cheapest search that can honour ``k``; ``matching`` is the filter's row count."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if index_type == "none":
        return SearchPlan("exact")
    if not filtered:
        return SearchPlan("approx")
    if matching is None:
        raise ValueError("a filtered search needs the number of matching rows")
    if matching <= threshold:
        return SearchPlan("exact")
    return SearchPlan("candidates", depth=k * factor)


def next_plan(plan: SearchPlan, *, got: int, k: int, matching: int, total: int, factor: int = 4) -> SearchPlan | None:
    """None when ``got`` honours the promise, else the wider search to run next."""
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

    ``matching`` / ``total`` are called only when a result is short, so the
    common case costs one query. Returns the rows and the plans tried.
    """
    tried = [plan]
    rows = run(plan)
    while len(rows) < k:
        nxt = next_plan(plan, got=len(rows), k=k, matching=matching(), total=total(), factor=factor)
        if nxt is None:
            break
        plan = nxt
        tried.append(plan)
        rows = run(plan)
    return rows, tried
