"""The strategies of seeds 001 and 002 on the real SQLite store with the real model.

Test data: the contract corpus with hypothetical questions and page / document summaries
written as ingestion would write them (``tests/contracts/vector_store.enriched``), real
vectors from the local model; nothing here depends on an enricher.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import ProfileSettings, RetrievalSettings
from backend.common.errors import RequestError
from backend.core import hierarchy
from backend.core.requests import STRATEGIES
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import Chunk, FieldFilter, QueryVector, Summary, SummaryHit, VersionSpec, Visibility
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.contracts.vector_store import CORPUS, QUESTIONS, embed, enriched, enriched_corpus, make_doc

VERSION = "KB_ENRICHED_V1"
PROFILE = ProfileSettings(index_name=VERSION)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(tmp_path_factory.mktemp("enriched") / "enriched.sqlite")
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine"))
    store.write_documents(VERSION, enriched_corpus(embedder))
    yield store
    store.close()


def service(store: Any, embedder: Any, **retrieval: Any) -> SearchService:
    return SearchService(store, embedder, PROFILE, RetrievalSettings.model_validate(retrieval))


def dense_similarity(store: SqliteVectorStore, embedder: Any, query: str) -> dict[str, float]:
    q = QueryVector(embedder.embed_queries([query])[0], embedder.model_id)
    return {h.chunk.chunk_id: h.score for h in store.search(VERSION, q, 50).hits}


def test_every_strategy_is_known_and_an_unknown_one_is_refused(store: Any, embedder: Any) -> None:
    assert {"hyde", "hyde_fusion", "hierarchical", "enriched_fusion"} <= set(STRATEGIES)
    with pytest.raises(RequestError, match="hierarchical"):
        service(store, embedder).search(SearchRequest("x", VERSION, 3, strategy="summaries"))


def test_hyde_returns_parent_chunks_once_ordered_by_question_and_scored_by_their_own_similarity(
    store: Any, embedder: Any
) -> None:
    query = "Is it possible to move leftover holiday days to January?"
    outcome = service(store, embedder).search(SearchRequest(query, VERSION, 4, strategy="hyde"))
    ids = [h.chunk.chunk_id for h in outcome.hits]
    assert ids[0] == "hr-leave#1" and len(ids) == len(set(ids)) == 4
    assert set(ids) <= set(QUESTIONS)  # only chunks with questions can be found
    assert outcome.hits[0].matched_question == "Can I carry unused vacation days into next year?"
    # the order is the question's similarity; the score is the parent chunk's dense similarity
    assert [h.fused_score for h in outcome.hits] == sorted((h.fused_score for h in outcome.hits), reverse=True)
    sims = dense_similarity(store, embedder, query)
    assert [h.score for h in outcome.hits] == pytest.approx([sims[c] for c in ids], abs=1e-6)
    assert outcome.score_source == "parent_chunk_dense_similarity"
    assert outcome.details["order_by"] == "question_similarity"
    q = QueryVector(embedder.embed_queries([query])[0], embedder.model_id)
    direct = store.search_questions(VERSION, q, 4)
    assert [h.fused_score for h in outcome.hits] == pytest.approx([h.score for h in direct.hits], abs=1e-6)


def test_hyde_fusion_fuses_dense_lexical_and_questions_by_rrf(store: Any, embedder: Any) -> None:
    query = "By when must travel receipts be handed in?"
    outcome = service(store, embedder).search(SearchRequest(query, VERSION, 5, strategy="hyde_fusion"))
    fusion = outcome.details["fusion"]
    assert fusion["sides"] == ["dense", "lexical", "hyde"] and fusion["method"] == "rrf"  # type: ignore[index]
    assert outcome.hits[0].chunk.chunk_id == "fin-expense#0"
    assert outcome.score_source == "parent_chunk_dense_similarity"
    # each fused score is sum of w / (k + rank) over the sides that found the chunk
    sv = service(store, embedder)
    sides = {s: [h.chunk.chunk_id for h in sv.search(SearchRequest(query, VERSION, 50, strategy=s)).hits]
             for s in ("dense", "lexical", "hyde")}
    for h in outcome.hits:
        expected = sum(1.0 / (60 + ids.index(h.chunk.chunk_id) + 1) for ids in sides.values()
                       if h.chunk.chunk_id in ids)
        assert h.fused_score == pytest.approx(expected, abs=1e-9)
    sims = dense_similarity(store, embedder, query)
    assert [h.score for h in outcome.hits] == pytest.approx([sims[h.chunk.chunk_id] for h in outcome.hits], abs=1e-6)


def test_hierarchical_returns_a_document_page_chunk_tree_with_summaries(store: Any, embedder: Any) -> None:
    query = "carrying unused vacation days over into the next year"
    outcome = service(store, embedder).search(SearchRequest(query, VERSION, 4, strategy="hierarchical"))
    assert outcome.score_source == "dense_similarity"
    assert outcome.details["order_by"] == "hierarchical_score"
    top = outcome.tree[0]
    assert (top.doc_id, top.source) == ("hr-leave", "handbook/hr.md")
    assert top.summary and "leave policy" in top.summary
    carry = next(p for p in top.pages if p.page == "Leave > Carry-over")
    assert carry.summary == "Unused vacation may be carried into the first quarter."
    assert [c.chunk_id for c in carry.chunks] == ["hr-leave#1"]
    # every hit is in the tree exactly once, documents ordered by their score
    in_tree = [c.chunk_id for d in outcome.tree for p in d.pages for c in p.chunks]
    assert sorted(in_tree) == sorted(h.chunk.chunk_id for h in outcome.hits)
    assert [d.score for d in outcome.tree] == sorted((d.score for d in outcome.tree), reverse=True)
    # hits keep their dense similarity; the hierarchical score orders them
    sims = dense_similarity(store, embedder, query)
    assert [h.score for h in outcome.hits] == pytest.approx([sims[h.chunk.chunk_id] for h in outcome.hits], abs=1e-6)
    assert [h.fused_score for h in outcome.hits] == sorted((h.fused_score for h in outcome.hits), reverse=True)
    assert outcome.details["candidates"]["artifact_summary"] == 5  # type: ignore[index]


def test_hierarchical_respects_visibility_and_filters(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "acl.sqlite")
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine"))
    acls = {"hr-leave": ["group:hr"], "it-vpn": ["public"], "fin-expense": ["public"], "it-password": [],
            "kitchen": ["public"]}
    store.write_documents(VERSION, [
        enriched(embedder, make_doc(d, parts, {**meta, "rag_acl": acls[d]}, src, embed(embedder, [t for t, _ in parts])))
        for d, src, parts, meta in CORPUS])
    sv = service(store, embedder)
    query = "carrying unused vacation days over"
    for strategy in ("hierarchical", "hyde", "enriched_fusion"):
        outcome = sv.search(SearchRequest(query, VERSION, 10, strategy=strategy, visibility=Visibility.of("eve")))
        docs = {h.chunk.doc_id for h in outcome.hits} | {d.doc_id for d in outcome.tree}
        assert docs and not docs & {"hr-leave", "it-password"}, strategy
        summaries = [d.summary for d in outcome.tree if d.summary]
        assert not [s for s in summaries if "leave" in s.lower()], strategy
    hr = sv.search(SearchRequest(query, VERSION, 10, strategy="hierarchical", visibility=Visibility.of("bob", ("hr",)),
                                 filters=(FieldFilter("dept", any_of=("hr",)),)))
    assert {h.chunk.doc_id for h in hr.hits} == {"hr-leave"} and hr.tree[0].doc_id == "hr-leave"
    store.close()


def test_a_document_found_only_by_its_summary_gets_its_best_chunks(tmp_path: Path, embedder: Any) -> None:
    """chunk_depth 1: the chunk search alone returns one chunk; a document whose summary
    matches gets its passages looked up, so it is cited with text, not only a summary."""
    store = SqliteVectorStore(tmp_path / "support.sqlite")
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine"))
    store.write_documents(VERSION, enriched_corpus(embedder))
    query = "weekly cleaning of the office kitchen"
    outcome = service(store, embedder, hierarchical={"chunk_depth": 1, "summary_depth": 5}).search(
        SearchRequest(query, VERSION, 1, strategy="hierarchical"))
    assert outcome.details["candidates"]["supporting_chunks"] >= 1  # type: ignore[index]
    none = service(store, embedder, hierarchical={"chunk_depth": 1, "summary_depth": 5, "chunks_per_document": 0})
    assert none.search(SearchRequest(query, VERSION, 1, strategy="hierarchical")).details["candidates"][  # type: ignore[index]
        "supporting_chunks"] == 0
    store.close()


def test_enriched_fusion_fuses_four_sides_and_keeps_the_tree(store: Any, embedder: Any) -> None:
    outcome = service(store, embedder).search(
        SearchRequest("How often do I have to rotate my password?", VERSION, 3, strategy="enriched_fusion"))
    assert outcome.details["fusion"]["sides"] == ["dense", "lexical", "hyde", "hierarchical"]  # type: ignore[index]
    assert outcome.hits[0].chunk.chunk_id == "it-password#0"
    assert outcome.tree and outcome.tree[0].doc_id == "it-password"


# --- the pure ranking -------------------------------------------------------------------
def _chunk(cid: str, doc: str, page: int | None = None) -> Chunk:
    return Chunk(cid, doc, cid, f"{doc}.pdf", 0, metadata={"page": page} if page is not None else {})


def _summary(sid: str, doc: str, kind: str, score: float, page: str | None = None,
             chunks: tuple[str, ...] = ()) -> SummaryHit:
    return SummaryHit(Summary(sid, doc, kind, f"summary {sid}", page, chunks), score, 0)  # type: ignore[arg-type]


def test_scores_are_normalised_per_type_so_raw_summary_scores_never_swamp_chunks() -> None:
    """Summaries score 0.6-0.8 raw, chunks ~0.4: compared raw, every summary would beat every
    chunk. Normalised per type, the best of each type is 1: document B's summary (best of the
    summaries) lifts chunk b1 above a1, whose raw similarity is higher but whose document
    matched worst; c1, the best chunk, stays first."""
    chunks = [(_chunk("a1", "A", 1), 0.42), (_chunk("b1", "B", 1), 0.41), (_chunk("c1", "C", 1), 0.45)]
    summaries = [_summary("B@doc", "B", "artifact_summary", 0.82), _summary("C@doc", "C", "artifact_summary", 0.70),
                 _summary("A@doc", "A", "artifact_summary", 0.60)]
    ranking = hierarchy.rank(chunks, summaries, normalization="minmax", weights=hierarchy.Weights(1, 0, 1))
    assert [cid for cid, _ in ranking.order] == ["c1", "b1", "a1"]
    # chunks: c1 1, a1 (0.42-0.41)/0.04 = 0.25, b1 0; documents: best of their summary and chunks
    assert ranking.document_scores == pytest.approx({"A": 0.25, "B": 1.0, "C": 1.0})
    assert dict(ranking.order) == pytest.approx({"c1": 1.0, "b1": 0.5, "a1": 0.25})
    # the chunk's own weight alone gives back the dense order
    dense = hierarchy.rank(chunks, summaries, normalization="minmax", weights=hierarchy.Weights(1, 0, 0))
    assert [cid for cid, _ in dense.order] == ["c1", "a1", "b1"]
    zscore = hierarchy.rank(chunks, summaries, normalization="zscore", weights=hierarchy.Weights(1, 0, 1))
    assert [cid for cid, _ in zscore.order] == ["c1", "b1", "a1"]


def test_page_of_a_chunk_comes_from_the_page_summary_else_its_metadata() -> None:
    assert hierarchy.page_of(_chunk("x", "D", 3)) == "3"
    assert hierarchy.page_of(Chunk("y", "D", "t", "d.docx", 0, metadata={"heading_path": ["Leave", "Carry-over"]})) \
        == "Leave > Carry-over"
    assert hierarchy.page_of(Chunk("z", "D", "t", "d.txt", 0)) is None
    chunks = [(_chunk("p1", "D", 1), 0.5), (_chunk("p2", "D", 2), 0.45), (_chunk("p3", "D", 3), 0.6)]
    summaries = [_summary("D@p2", "D", "page_summary", 0.9, "2", ("p2",)), _summary("D@p1", "D", "page_summary", 0.1,
                                                                                   "1", ("p1",))]
    ranking = hierarchy.rank(chunks, summaries, normalization="minmax", weights=hierarchy.Weights(1, 1, 0))
    # page 2's summary (best page summary) outweighs p1's better chunk on a weakly summarised page
    assert dict(ranking.order) == pytest.approx({"p3": 1.0, "p2": 0.5, "p1": (0.05 / 0.15) })
    assert [cid for cid, _ in ranking.order] == ["p3", "p2", "p1"]
    by_id = {c.chunk_id: c for c, _ in chunks}
    nodes = hierarchy.tree([(by_id[cid], s) for cid, s in ranking.order], summaries, ranking)
    assert [p.page for p in nodes[0].pages] == ["3", "2", "1"]
    assert [p.summary for p in nodes[0].pages] == [None, "summary D@p2", "summary D@p1"]
    assert hierarchy.as_dict(nodes)[0]["pages"][1]["chunks"][0]["chunk_id"] == "p2"  # type: ignore[index]


def test_documents_without_chunks_are_listed_best_summary_first() -> None:
    summaries = [_summary("X@doc", "X", "artifact_summary", 0.9), _summary("A@doc", "A", "artifact_summary", 0.8),
                 _summary("Y@p1", "Y", "page_summary", 0.7, "1"), _summary("X@p1", "X", "page_summary", 0.6, "1")]
    assert hierarchy.documents_without_chunks(["A"], summaries, limit=5) == ["X", "Y"]
    assert hierarchy.documents_without_chunks(["A"], summaries, limit=1) == ["X"]
    assert hierarchy.rank([], summaries, normalization="minmax", weights=hierarchy.Weights()).order == ()


def test_chat_context_follows_the_tree_document_by_document_page_by_page() -> None:
    from backend.core.answer_report import tree_order
    from backend.core.answer_mode import Candidate

    chunks = {cid: _chunk(cid, cid[0].upper(), int(cid[1])) for cid in ("a1", "b1", "a2", "b2", "x9")}
    # flat order interleaves documents; the tree groups A (best) then B, page by page
    candidates = [Candidate(chunks[c], 0.5, 0.5, rank) for rank, c in enumerate(["a1", "b1", "a2", "x9", "b2"], 1)]
    nodes = (
        hierarchy.DocumentNode("A", "A.pdf", 1.0, None, (
            hierarchy.PageNode("2", 1.0, None, (hierarchy.ChunkNode("a2", 0.9),)),
            hierarchy.PageNode("1", 0.8, None, (hierarchy.ChunkNode("a1", 0.95),)))),
        hierarchy.DocumentNode("B", "B.pdf", 0.7, None, (
            hierarchy.PageNode("1", 0.7, None, (hierarchy.ChunkNode("b1", 0.9), hierarchy.ChunkNode("b2", 0.4))),)),
    )
    ordered = tree_order(candidates, nodes)
    assert [(c.chunk.chunk_id, c.rank) for c in ordered] == [("a2", 1), ("a1", 2), ("b1", 3), ("b2", 4), ("x9", 5)]
