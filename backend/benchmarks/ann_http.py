"""End-to-end ``GET /search`` on the ANN benchmark's store, with the index and exact (issue 33).

The real app (``create_app`` over ``build_runtime``) through Flask's test client, strategy
dense, top_k 10, each query text embedded by the real local model; the index-on and exact
runtimes share one store file (so one resident matrix) and are timed query by query,
interleaved, so load from other jobs hits both alike. "Exact" is today's path: a store with
``store.sqlite.ann.enabled`` off.
"""

from __future__ import annotations

import time
from typing import Any

from backend.benchmarks.scale import QUERIES, VOCABULARY, _search_client
from backend.benchmarks.stats import percentiles
from backend.common.config import Settings
from backend.providers.sqlite_vs.store import SqliteVectorStore

ALIAS = "BENCH_ALIAS"  # the alias scale._search_client serves


def query_texts(count: int) -> list[str]:
    """Distinct texts (no embedding reused between requests): the latency queries with one word each."""
    return [f"{QUERIES[i % len(QUERIES)]} {VOCABULARY[i % len(VOCABULARY)]}" for i in range(count)]


def search_p50(indexed: SqliteVectorStore, exact: SqliteVectorStore, embedder: Any, settings: Settings,
               queries: int = 100, warmup: int = 5) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Percentiles (ms) of GET /search for ``index`` and ``exact``, and the dense paths the
    answers report (``dense_index.kind``); any answer but 200 stops the bench."""
    retrieval = settings.retrieval.model_dump(mode="json") | {"strategy": "dense"}
    clients = {"index": _search_client(indexed, embedder, settings, retrieval),
               "exact": _search_client(exact, embedder, settings, retrieval)}
    times: dict[str, list[float]] = {name: [] for name in clients}
    kinds: dict[str, set[str]] = {name: set() for name in clients}
    for i, text in enumerate(query_texts(warmup + queries)):
        for name, client in clients.items():
            t = time.perf_counter()
            response = client.get("/search", query_string={"q": text, "top_k": 10, "strategy": "dense"})
            ms = (time.perf_counter() - t) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"GET /search ({name}) answered {response.status_code}: "
                                   f"{str(response.get_json())[:300]}")
            kinds[name] |= _index_kinds(response.get_json())
            if i >= warmup:
                times[name].append(ms)
    return ({name: percentiles(ms) for name, ms in times.items()},
            {name: ",".join(sorted(found)) for name, found in kinds.items()})


def _index_kinds(body: Any) -> set[str]:
    """Every ``dense_index.kind`` in an answer, wherever its details put it."""
    if isinstance(body, dict):
        found = {str(body["dense_index"].get("kind"))} if isinstance(body.get("dense_index"), dict) else set()
        return found.union(*(_index_kinds(v) for v in body.values()))
    if isinstance(body, list):
        return set().union(*(_index_kinds(v) for v in body))
    return set()
