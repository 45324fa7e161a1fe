"""SearchService on the real SQLite store with the real model.

The corpus mixes an exact identifier the model has never seen (seed 002's
``SACC-111``) with ordinary prose, so dense and lexical rankings really differ.
Each test checks that ``score`` stays the dense similarity under every strategy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from backend.common.config import ProfileSettings, RetrievalSettings
from backend.common.errors import AliasNotFound, RequestError
from backend.core.fusion import reciprocal_rank_fusion
from backend.core.services.search_service import (
    SearchRequest,
    SearchService,
    apply_preset,
    describe_presets,
    find_preset,
)
from backend.core.types import Chunk, DocumentWrite, FieldFilter, QueryVector, VersionSpec, content_hash
from backend.providers.sqlite_vs.store import SqliteVectorStore

TEXTS = {
    "lab-1": ("Compound SACC-111 inhibited NadD in the TAMU enzyme assay at low micromolar concentration.", "lab"),
    "lab-2": ("Enzyme inhibitors slow down biochemical reactions by binding to the active site.", "lab"),
    "lab-3": ("The assay plates were incubated overnight before the fluorescence readout.", "lab"),
    "hr-1": ("Employees receive twenty-five days of paid annual leave per year.", "hr"),
    "hr-2": ("Annual leave requests are approved by the line manager in the HR portal.", "hr"),
    "hr-3": ("Sick leave longer than three days requires a medical certificate.", "hr"),
    "it-1": ("Reset your password in the self-service portal every ninety days.", "it"),
    "it-2": ("The VPN client must be installed before connecting from home.", "it"),
}
PROFILE = ProfileSettings(index_name="KB_SEARCH_V1")
ALIAS = "KB_SEARCH"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(tmp_path_factory.mktemp("search") / "search.sqlite")
    store.create_version(VersionSpec("KB_SEARCH_V1", embedder.model_id, embedder.dimension, "cosine"))
    ids = list(TEXTS)
    vectors = embedder.embed_documents([TEXTS[i][0] for i in ids])
    store.write_documents("KB_SEARCH_V1", [
        DocumentWrite(cid, content_hash(TEXTS[cid][0]),
                      [Chunk(cid, cid, TEXTS[cid][0], f"{TEXTS[cid][1]}.md", 0, metadata={"department": TEXTS[cid][1]})],
                      vectors[n:n + 1])
        for n, cid in enumerate(ids)
    ])
    store.point_alias(ALIAS, "KB_SEARCH_V1")
    yield store
    store.close()


def service(store: Any, embedder: Any, **retrieval: Any) -> SearchService:
    return SearchService(store, embedder, PROFILE, RetrievalSettings.model_validate(retrieval))


def similarities(store: SqliteVectorStore, embedder: Any, query: str) -> dict[str, float]:
    """Dense similarity of every chunk to ``query``, straight from an unfiltered search."""
    q = QueryVector(embedder.embed_queries([query])[0], embedder.model_id)
    return {h.chunk.chunk_id: h.score for h in store.search(ALIAS, q, len(TEXTS)).hits}


def test_dense_strategy_returns_the_stores_similarity_ranking(store: Any, embedder: Any) -> None:
    query = "How many vacation days do employees get?"
    outcome = service(store, embedder).search(SearchRequest(query, ALIAS, 3))
    sims = similarities(store, embedder, query)
    expected = sorted(sims, key=lambda c: -sims[c])[:3]
    assert [h.chunk.chunk_id for h in outcome.hits] == expected
    assert expected[0] == "hr-1"
    assert [h.score for h in outcome.hits] == pytest.approx([sims[c] for c in expected], abs=1e-6)
    assert (outcome.strategy, outcome.version, outcome.score_source) == ("dense", "KB_SEARCH_V1", "dense_similarity")
    assert outcome.details["order_by"] == "dense_similarity"
    assert [h.lexical_score for h in outcome.hits] == [None, None, None]


def test_lexical_strategy_orders_by_bm25_but_scores_with_dense_similarity(store: Any, embedder: Any) -> None:
    query = "SACC-111 assay"
    outcome = service(store, embedder).search(SearchRequest(query, ALIAS, 5, strategy="lexical"))
    lexical = store.lexical_search(ALIAS, query, 5)
    sims = similarities(store, embedder, query)
    assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in lexical.hits] == ["lab-1", "lab-3"]
    assert [h.lexical_score for h in outcome.hits] == pytest.approx([h.score for h in lexical.hits])
    assert [h.score for h in outcome.hits] == pytest.approx([sims["lab-1"], sims["lab-3"]], abs=1e-6)
    assert [h.rank for h in outcome.hits] == [1, 2]
    assert outcome.details["order_by"] == "lexical_score"
    assert outcome.details["dense_lookups"] == 2


def test_fusion_orders_by_rrf_and_looks_up_dense_similarity_of_lexical_only_hits(store: Any, embedder: Any) -> None:
    """Dense candidates are max(dense_depth, top_k) = 4 deep, so a leave chunk that only
    BM25 finds gets its similarity from the restricted dense search and its fused score
    is the lexical term alone."""
    query = "leave SACC-111"
    svc = service(store, embedder, fusion={"k": 60, "dense_depth": 2, "lexical_depth": 5, "dense_weight": 0.5})
    outcome = svc.search(SearchRequest(query, ALIAS, 4, strategy="fusion"))
    sims = similarities(store, embedder, query)
    dense_top = sorted(sims, key=lambda c: -sims[c])[:4]
    lexical = [h.chunk.chunk_id for h in store.lexical_search(ALIAS, query, 5).hits]
    fused = reciprocal_rank_fusion({"dense": dense_top, "lexical": lexical}, {"dense": 0.5, "lexical": 1.0}, 60)[:4]
    assert [h.chunk.chunk_id for h in outcome.hits] == [f.chunk_id for f in fused]
    assert [h.fused_score for h in outcome.hits] == pytest.approx([f.score for f in fused])
    assert [h.score for h in outcome.hits] == pytest.approx([sims[f.chunk_id] for f in fused], abs=1e-6)
    lexical_only = [h for h in outcome.hits if h.chunk.chunk_id not in dense_top]
    assert [h.chunk.chunk_id for h in lexical_only] != []
    for hit in lexical_only:
        assert hit.fused_score == pytest.approx(1.0 / (60 + lexical.index(hit.chunk.chunk_id) + 1))
    assert outcome.details["dense_lookups"] == len(set(lexical) - set(dense_top))
    assert outcome.details["candidates"] == {"dense": 4, "lexical": len(lexical)}
    assert outcome.score_source == "dense_similarity"


def test_fusion_hits_found_only_densely_have_no_lexical_score(store: Any, embedder: Any) -> None:
    outcome = service(store, embedder).search(SearchRequest("time off from work", ALIAS, 8, strategy="fusion"))
    lexical = {h.chunk.chunk_id for h in store.lexical_search(ALIAS, "time off from work", 8).hits}
    assert len(outcome.hits) == len(TEXTS)
    assert {h.chunk.chunk_id for h in outcome.hits if h.lexical_score is None} == set(TEXTS) - lexical


def test_default_strategy_comes_from_retrieval_settings(store: Any, embedder: Any) -> None:
    outcome = service(store, embedder, strategy="lexical").search(SearchRequest("VPN client", ALIAS, 3))
    assert outcome.strategy == "lexical"
    assert [h.chunk.chunk_id for h in outcome.hits] == ["it-2"]


@pytest.mark.parametrize("strategy", ["dense", "lexical", "fusion"])
def test_filters_apply_to_every_strategy(store: Any, embedder: Any, strategy: str) -> None:
    request = SearchRequest("portal leave password", ALIAS, 8, (FieldFilter("department", any_of=("hr",)),), strategy)
    outcome = service(store, embedder).search(request)
    assert {h.chunk.chunk_id for h in outcome.hits} <= {"hr-1", "hr-2", "hr-3"}
    assert "hr-2" in {h.chunk.chunk_id for h in outcome.hits}


def test_unknown_strategy_and_bad_top_k_are_request_errors(store: Any, embedder: Any) -> None:
    svc = service(store, embedder)
    with pytest.raises(RequestError, match="strategy must be one of dense, lexical, fusion, hyde, .*, got 'hybrid'"):
        svc.search(SearchRequest("x", ALIAS, 3, strategy="hybrid"))
    with pytest.raises(RequestError, match="top_k must be at least 1, got 0"):
        svc.search(SearchRequest("x", ALIAS, 0))


def test_unknown_target_raises_alias_not_found(store: Any, embedder: Any) -> None:
    with pytest.raises(AliasNotFound, match="'KB_NOPE' is neither an alias nor an index version"):
        service(store, embedder).search(SearchRequest("leave", "KB_NOPE", 3, strategy="fusion"))


def test_query_prefix_changes_the_query_vector(store: Any, embedder: Any) -> None:
    plain = SearchService(store, embedder, PROFILE, RetrievalSettings()).embed_query("annual leave")
    prefixed = SearchService(store, embedder, ProfileSettings(index_name="KB_SEARCH_V1", query_prefix="search_query: "),
                             RetrievalSettings()).embed_query("annual leave")
    np.testing.assert_allclose(prefixed.values, embedder.embed_queries(["search_query: annual leave"])[0], rtol=1e-5)
    assert float(np.dot(plain.values, prefixed.values)) < 0.999


@pytest.fixture
def dated_store(tmp_path: Path, embedder: Any) -> Iterator[SqliteVectorStore]:
    """Three near-identical texts (similarities within a few thousandths) of different ages."""
    store = SqliteVectorStore(tmp_path / "dated.sqlite")
    store.create_version(VersionSpec("KB_DATED_V1", embedder.model_id, embedder.dimension, "cosine"))
    texts = {
        "p-2023": ("The travel policy allows economy class flights for trips under six hours.", "2023-05-01"),
        "p-nodate": ("The travel policy allows economy-class flights for trips under six hours.", None),
        "p-2025": ("Travel policy: economy class flights are allowed for trips under six hours.", "2025-02-01T09:00:00Z"),
    }
    vectors = embedder.embed_documents([t for t, _ in texts.values()])
    store.write_documents("KB_DATED_V1", [
        DocumentWrite(cid, cid, [Chunk(cid, cid, text, "travel.md", 0, metadata={"updated_at": d} if d else {})],
                      vectors[n:n + 1])
        for n, (cid, (text, d)) in enumerate(texts.items())
    ])
    yield store
    store.close()


@pytest.mark.parametrize("strategy", ["dense", "fusion"])
def test_freshness_prefers_the_newer_of_near_tied_chunks(dated_store: Any, embedder: Any, strategy: str) -> None:
    request = SearchRequest("Which flights does the travel policy allow?", "KB_DATED_V1", 3, strategy=strategy)
    off = service(dated_store, embedder).search(request)
    spread = max(h.score for h in off.hits) - min(h.score for h in off.hits)
    assert 0 < spread < 0.05
    on = service(dated_store, embedder, freshness={"enabled": True, "epsilon": 0.05}).search(request)
    assert [h.chunk.chunk_id for h in on.hits] == ["p-2025", "p-2023", "p-nodate"]
    assert [h.rank for h in on.hits] == [1, 2, 3]
    moved = sum(a.chunk.chunk_id != b.chunk.chunk_id for a, b in zip(off.hits, on.hits))
    assert on.details["freshness"] == {"epsilon": 0.05, "field": "updated_at", "reordered": moved}
    tight = service(dated_store, embedder, freshness={"enabled": True, "epsilon": 0.0}).search(request)
    assert [h.chunk.chunk_id for h in tight.hits] == [h.chunk.chunk_id for h in off.hits]


# --- presets -------------------------------------------------------------------------
PRESETS = RetrievalSettings.model_validate({
    "metadata_schema": {"department": {"type": "enum", "values": ["lab", "hr", "it"]}},
    "presets": [
        {"name": "by_department", "description": "Search one department.", "filter_field": "department"},
        {"name": "by_tag", "filter_field": "tags", "query_template": "{value} guidelines"},
    ],
})


def test_preset_applies_its_filter_and_template() -> None:
    text, filters = apply_preset(find_preset(PRESETS.presets, "by_tag"), None, "safety", PRESETS.metadata_schema)
    assert (text, filters) == ("safety guidelines", (FieldFilter("tags", any_of=("safety",)),))


def test_preset_value_is_checked_against_the_schema() -> None:
    with pytest.raises(RequestError, match="filters.department: 'sales' not allowed; allowed values: lab, hr, it"):
        apply_preset(find_preset(PRESETS.presets, "by_department"), "leave", "sales", PRESETS.metadata_schema)


def test_preset_missing_parameters_are_named() -> None:
    preset = find_preset(PRESETS.presets, "by_department")
    with pytest.raises(RequestError, match="preset by_department: parameter 'value' is required"):
        apply_preset(preset, "leave", None, PRESETS.metadata_schema)
    with pytest.raises(RequestError, match="preset by_department: parameter 'q' is required"):
        apply_preset(preset, " ", "hr", PRESETS.metadata_schema)


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(RequestError, match="unknown preset 'by_muscle'; known presets: by_department, by_tag"):
        find_preset(PRESETS.presets, "by_muscle")


def test_presets_describe_their_parameters_for_agents() -> None:
    assert describe_presets(PRESETS.presets, PRESETS.metadata_schema) == [
        {"name": "by_department", "description": "Search one department.", "filter_field": "department",
         "query_template": "{query}",
         "parameters": {"q": {"type": "string", "required": True, "description": "The search query."},
                        "value": {"type": "string", "required": True, "description": "Value of department to filter on.",
                                  "enum": ["lab", "hr", "it"]}}},
        {"name": "by_tag", "description": "", "filter_field": "tags", "query_template": "{value} guidelines",
         "parameters": {"value": {"type": "string", "required": True, "description": "Value of tags to filter on."}}},
    ]



# --- duplicates across documents ----------------------------------------------------
@pytest.fixture
def boilerplate_store(tmp_path: Path, embedder: Any) -> Iterator[SqliteVectorStore]:
    """Twelve documents repeat the same leave notice; four distinct chunks say other things."""
    store = SqliteVectorStore(tmp_path / "dupes.sqlite")
    store.create_version(VersionSpec("KB_DUPES_V1", embedder.model_id, embedder.dimension, "cosine"))
    notice = "Annual leave requests must be filed in the HR portal two weeks ahead."
    distinct = ["Employees get twenty-five days of annual leave.", "Unused leave carries over until March.",
                "Sick leave needs a medical certificate after three days.", "The canteen opens at noon."]
    texts = [(f"memo-{n}", notice) for n in range(12)] + [(f"doc-{n}", t) for n, t in enumerate(distinct)]
    vectors = embedder.embed_documents([t for _, t in texts])
    store.write_documents("KB_DUPES_V1", [
        DocumentWrite(did, content_hash(text), [Chunk(f"{did}:0", did, text, f"{did}.md", 0)], vectors[n:n + 1])
        for n, (did, text) in enumerate(texts)
    ])
    yield store
    store.close()


@pytest.mark.parametrize("strategy", ["dense", "lexical", "fusion"])
def test_text_repeated_across_documents_fills_one_slot_and_top_k_still_fills(
    boilerplate_store: Any, embedder: Any, strategy: str
) -> None:
    request = SearchRequest("How do I file an annual leave request in the HR portal?", "KB_DUPES_V1", 4,
                            strategy=strategy)
    outcome = service(boilerplate_store, embedder).search(request)
    texts = [h.chunk.text for h in outcome.hits]
    assert len(texts) == len(set(texts))
    assert texts.count("Annual leave requests must be filed in the HR portal two weeks ahead.") == 1
    assert [h.rank for h in outcome.hits] == list(range(1, len(outcome.hits) + 1))
    assert outcome.details["duplicates_collapsed"] >= 1
    if strategy != "lexical":  # BM25 finds only chunks sharing a term with the query
        assert len(outcome.hits) == 4
