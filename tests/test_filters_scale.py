"""Metadata filters at scale on the real SQLite store, and through the search service.

The store-level checks are the contract mixin ``FilterScaleTest`` (part of
``VectorStoreContract``, so every store runs them); this file checks that every strategy of ``SearchService`` keeps a narrow
filter exact, and that the query plan of the filtered scan is what the docs say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from backend.common.config import RetrievalSettings
from backend.common.errors import ManifestError, RequestError
from backend.core.metadata_schema import parse_filters, validate_metadata
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import FieldFilter, QueryVector, VersionSpec
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.contracts.vector_store import (
    SCALE_CHUNKS_PER_DOC,
    SCALE_DOCS,
    SCALE_TARGETS,
    random_vectors,
    scale_documents,
)

SCHEMA = RetrievalSettings.model_validate({"metadata_schema": {
    "department": {"type": "enum", "values": ["it", "hr", "finance", "sales", "legal"]},
    "tags": {"type": "string_list"},
    "updated_at": {"type": "date"},
}}).metadata_schema


@pytest.fixture(scope="module")
def real_model_scale(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[SqliteVectorStore, np.ndarray]]:
    """10,000 chunks with random vectors under the real model's id, so the service
    can embed real queries against them."""
    store = SqliteVectorStore(tmp_path_factory.mktemp("scale") / "service.sqlite")
    vectors = random_vectors(SCALE_DOCS * SCALE_CHUNKS_PER_DOC, embedder.dimension, seed=21)
    store.create_version(VersionSpec("SCALE_V1", embedder.model_id, embedder.dimension, "cosine"))
    store.write_documents("SCALE_V1", scale_documents(vectors))
    store.point_alias("SCALE", "SCALE_V1")
    yield store, vectors
    store.close()


@pytest.mark.parametrize("strategy", ["dense", "lexical", "fusion"])
def test_every_strategy_returns_exactly_the_3_filtered_chunks_of_10000(
    real_model_scale: tuple[SqliteVectorStore, np.ndarray], embedder: Any, tmp_path: Path, strategy: str
) -> None:
    store, _ = real_model_scale
    settings = make_settings(tmp_path)
    service = SearchService(store, embedder, settings.embeddings.profile_for(), settings.retrieval)
    filters = parse_filters({"department": "legal", "updated_at": {"gte": "2025-01-01", "lte": "2025-12-31"}}, SCHEMA)
    outcome = service.search(SearchRequest("warehouse logistics record", "SCALE", 10, filters, strategy))
    assert sorted(h.chunk.chunk_id for h in outcome.hits) == sorted(SCALE_TARGETS)
    assert [h.rank for h in outcome.hits] == [1, 2, 3]
    assert outcome.version == "SCALE_V1"


def test_exact_filtered_top_k_matches_a_numpy_scan_of_the_matching_rows(
    real_model_scale: tuple[SqliteVectorStore, np.ndarray], embedder: Any
) -> None:
    """2,500 rows match; the store's top 25 is the exact top 25 among them."""
    store, vectors = real_model_scale
    q = embedder.embed_queries(["quarterly warehouse report"])[0]
    result = store.search("SCALE", QueryVector(q, embedder.model_id), 25, (FieldFilter("department", any_of=("hr",)),))
    hr_rows = [n for n in range(len(vectors)) if n % 4 == 1 and not _is_target(n)]
    unit = vectors[hr_rows] / np.linalg.norm(vectors[hr_rows], axis=1, keepdims=True)
    best = np.argsort(-(unit @ (q / np.linalg.norm(q))), kind="stable")[:25]
    expected = [f"d{hr_rows[i] // SCALE_CHUNKS_PER_DOC:03d}#{hr_rows[i] % SCALE_CHUNKS_PER_DOC}" for i in best]
    assert [h.chunk.chunk_id for h in result.hits] == expected


def _is_target(n: int) -> bool:
    return f"d{n // SCALE_CHUNKS_PER_DOC:03d}#{n % SCALE_CHUNKS_PER_DOC}" in SCALE_TARGETS


def test_enum_value_outside_the_schema_is_rejected_at_ingest_with_its_line() -> None:
    with pytest.raises(ManifestError, match=r"manifests/hr.jsonl line 14: metadata department: 'marketing' not allowed; "
                                            r"allowed values: it, hr, finance, sales, legal"):
        validate_metadata({"department": "marketing"}, SCHEMA, "manifests/hr.jsonl line 14")


def test_enum_value_outside_the_schema_is_rejected_in_a_request_filter() -> None:
    with pytest.raises(RequestError, match=r"filters.department: 'marketing' not allowed; allowed values: it, hr"):
        parse_filters({"department": {"any": ["it", "marketing"]}}, SCHEMA)
