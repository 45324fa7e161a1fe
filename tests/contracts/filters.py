"""Contract mixin: metadata filters stay exact at scale.

A filter is applied inside the search, not after a top-k cut, so a condition
that matches 3 chunks out of 10,000 returns exactly those 3 whatever ``k`` is.
Vectors are random (meaning does not matter here); the 3 targets are spread
over the version so no insertion-order shortcut can find them. Add
``FilterScaleTest`` to ``VectorStoreContract`` to run it for every store.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from backend.core.types import Chunk, DocumentWrite, FieldFilter, QueryVector, VersionSpec, content_hash
from tests.contracts.vector_store import Names, _Fixtures, random_vectors

SCALE_DOCS, SCALE_CHUNKS_PER_DOC, SCALE_DIM = 100, 100, 16
SCALE_MODEL = "test/random-16"
#: The only chunks tagged ``legal`` / ``audit`` / dated 2025, spread over the version.
SCALE_TARGETS = ("d000#17", "d042#42", "d099#99")
DEPARTMENTS = ("it", "hr", "finance", "sales")


def scale_metadata(chunk_id: str, n: int) -> dict[str, Any]:
    if chunk_id in SCALE_TARGETS:
        return {"department": "legal", "tags": ["policy", "audit"], "updated_at": f"2025-06-0{SCALE_TARGETS.index(chunk_id) + 1}"}
    return {"department": DEPARTMENTS[n % 4], "tags": ["policy"], "updated_at": f"2024-{n % 12 + 1:02d}-15"}


def scale_documents(vectors: np.ndarray) -> list[DocumentWrite]:
    docs = []
    for d in range(SCALE_DOCS):
        chunks = []
        for i in range(SCALE_CHUNKS_PER_DOC):
            cid, n = f"d{d:03d}#{i}", d * SCALE_CHUNKS_PER_DOC + i
            chunks.append(Chunk(cid, f"d{d:03d}", f"warehouse logistics record {n}", f"scale/d{d:03d}.txt", i,
                                metadata=scale_metadata(cid, n)))
        rows = vectors[d * SCALE_CHUNKS_PER_DOC:(d + 1) * SCALE_CHUNKS_PER_DOC]
        docs.append(DocumentWrite(f"d{d:03d}", content_hash(f"scale-{d}"), chunks, rows))
    return docs


class FilterScaleTest(_Fixtures):
    @pytest.fixture
    def scale_version(self, store: Any, names: Names) -> tuple[str, np.ndarray]:
        """10,000 chunks with random vectors; returns the version and the vectors."""
        name = names("SCALE")
        vectors = random_vectors(SCALE_DOCS * SCALE_CHUNKS_PER_DOC, SCALE_DIM, seed=11)
        store.create_version(VersionSpec(name, SCALE_MODEL, SCALE_DIM, "cosine"))
        store.write_documents(name, scale_documents(vectors))
        return name, vectors

    def test_filter_matching_3_of_10000_chunks_returns_exactly_those_3(
        self, store: Any, scale_version: tuple[str, np.ndarray]
    ) -> None:
        name, vectors = scale_version
        query = QueryVector(random_vectors(1, SCALE_DIM, seed=99)[0], SCALE_MODEL)
        conditions = [
            (FieldFilter("department", any_of=("legal",)),),
            (FieldFilter("tags", all_of=("policy", "audit")),),
            (FieldFilter("updated_at", gte="2025-01-01", lte="2025-12-31T23:59:59.999999+00:00"),),
        ]
        for filters in conditions:
            result = store.search(name, query, 10, filters)
            assert sorted(h.chunk.chunk_id for h in result.hits) == sorted(SCALE_TARGETS), filters
            lexical = store.lexical_search(name, "warehouse logistics", 10, filters)
            assert sorted(h.chunk.chunk_id for h in lexical.hits) == sorted(SCALE_TARGETS), filters

    def test_filtered_search_ranks_matches_by_similarity_and_honours_k(
        self, store: Any, scale_version: tuple[str, np.ndarray]
    ) -> None:
        name, vectors = scale_version
        q = random_vectors(1, SCALE_DIM, seed=5)[0]
        result = store.search(name, QueryVector(q, SCALE_MODEL), 2, (FieldFilter("department", any_of=("legal",)),))
        index = {cid: int(cid[1:4]) * SCALE_CHUNKS_PER_DOC + int(cid.split("#")[1]) for cid in SCALE_TARGETS}
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        expected = sorted(SCALE_TARGETS, key=lambda c: -float(unit[index[c]] @ (q / np.linalg.norm(q))))[:2]
        assert [h.chunk.chunk_id for h in result.hits] == expected

    def test_broad_filter_still_returns_k_hits_all_matching(
        self, store: Any, scale_version: tuple[str, np.ndarray]
    ) -> None:
        name, _ = scale_version
        query = QueryVector(random_vectors(1, SCALE_DIM, seed=7)[0], SCALE_MODEL)
        result = store.search(name, query, 25, (FieldFilter("department", any_of=("hr",)),
                                                 FieldFilter("tags", any_of=("policy",))))
        assert len(result.hits) == 25
        assert {h.chunk.metadata["department"] for h in result.hits} == {"hr"}
