"""Retrieval without an answer: embed the query, search the target, return hits.

Three strategies (``retrieval.strategy`` or per request): ``dense`` (vector
similarity), ``lexical`` (the store's BM25-style full-text search) and
``fusion`` (reciprocal rank fusion of both). Whatever the strategy, every hit's
``score`` is the dense similarity of the chunk to the query under the version's
distance, so the answer-mode thresholds always compare a similarity they were
tuned for; ``lexical_score`` and ``fused_score`` carry the other scores and the
strategy's own score decides the order. ``lexical`` and ``fusion`` rank the store's
``(chunk_id, score)`` candidates and read rows for the hits they return only; hits found
only lexically get their similarity from ``VectorStore.similarities`` for exactly their
ids. Fusion is (weighted)
RRF or a normalised score combination (``fusion.method``; the profile's own
``fusion`` overrides ``retrieval.fusion``); with ``fusion.dense_feedback_docs`` the lexical
side runs first and its best hits' stored vectors move the dense query (``dense_feedback``),
``score`` staying the similarity to the question itself. With ``retrieval.rerank`` a reranker
re-orders the first ``top_n`` candidates of any strategy; ``rerank_score`` and the
rank each hit had before are kept for the explanation, ``score`` stays dense.

Every call after the first names the version the first one resolved, so an alias
rotation between the dense and the lexical half can never mix two versions.

Why one module over 500 lines: the strategies are methods of one service because each reads the
same pinned version with the same query vector, pool and reranker; what they decide is already
pure and elsewhere (``core/fusion``, ``search_request``, ``search_presets``, ``hierarchy``,
``lexical_query``, ``dense_feedback``), so what stays here is the order of the store reads.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import structlog

from backend.common import telemetry
from backend.common.config import ProfileSettings, RerankSettings, RetrievalSettings
from backend.core.embedding_text import query_input
from backend.core.ports import Embedder, Reranker, VectorStore, accepted_models
from backend.core.fusion import (
    apply_freshness,
    apply_rerank,
    collapse_duplicates,
    reciprocal_rank_fusion,
    score_fusion,
)
from backend.core.dense_feedback import feedback_query
from backend.core.lexical_query import (
    ENGLISH_STOP_WORDS,
    combine_feedback,
    expansion_terms,
    lexical_terms,
    query_words,
    stop_words,
)
from backend.core import hierarchy
from backend.core.hierarchy import DocumentNode
from backend.core.services.query_embedding import LEXICAL_FIRST, PendingQuery
from backend.core.retrieval_stamp import stamped_settings
from backend.core.search_presets import (
    apply_preset as apply_preset,
    describe_presets as describe_presets,
    find_preset as find_preset,
    preset_parameters as preset_parameters,
    preset_uses as preset_uses,
)
from backend.core.search_request import (
    FUSED_SIDES as FUSED_SIDES,
    ORDER_BY as ORDER_BY,
    SCORE_SOURCE as SCORE_SOURCE,
    SearchOutcome as SearchOutcome,
    SearchRequest as SearchRequest,
    check_filter_limits as check_filter_limits,
    stamp_summary as stamp_summary,
)
from backend.core.types import (
    Candidates, Chunk, FieldFilter, QueryVector, ScoredChunk, SummaryHit, Vector, Visibility,
)

log = structlog.get_logger(__name__)

#: widening limit when cross-document duplicates crowd the candidate pool
_MAX_POOL = 1000
@dataclass(frozen=True)
class _Ranked:
    version: str
    hits: tuple[ScoredChunk, ...]
    details: dict[str, Any]
    #: the summaries a hierarchical side found (for the tree) and its ranking
    summaries: tuple[SummaryHit, ...] = ()
    ranking: hierarchy.Ranking | None = None


class SearchService:
    """Search one embedding profile's versions; stateless, so safe to share across threads."""

    def __init__(
        self, store: VectorStore, embedder: Embedder, profile: ProfileSettings, settings: RetrievalSettings,
        reranker: Reranker | None = None, *, follow_stamp: bool = False,
        rerankers: Callable[[RerankSettings], Reranker | None] | None = None, defer_query_vector: bool = False,
    ) -> None:
        """``follow_stamp``: search each version with the retrieval settings stamped on it
        (serving and the evaluation gate); off, ``settings`` apply to every version (``rag tune``
        and the benchmarks measure candidate settings that way). ``rerankers`` builds the
        reranker a stamp names when it is not the configured one (``reranker``). ``defer_query_vector``:
        the store may embed the question itself (``embed_query``)."""
        self._store = store
        self._embedder = embedder
        self._profile = profile
        self._settings = settings
        self._reranker = reranker
        self._follow_stamp = follow_stamp
        self._rerankers = rerankers
        self._defer_query_vector = defer_query_vector
        self._fusion_settings = profile.fusion or settings.fusion

    @property
    def reranker(self) -> Reranker | None:
        return self._reranker

    def embed_query(self, text: str) -> QueryVector:
        """The question's vector. With ``defer_query_vector`` (a store that may embed the question
        itself: Oracle's in-database query embedding) it is deferred: made here only if something
        reads ``values`` (a version not cleared for in-database embedding, dense feedback), so a
        search the database embeds costs no local embedding (review 4, N5)."""
        embedded = query_input(text, self._profile)
        accepts = accepted_models(self._embedder)

        def compute() -> Vector:
            with telemetry.span("rag.embed", lambda: {**telemetry.model_attributes("embeddings", self._embedder),
                                                      "rag.texts": 1}):
                vector: Vector = self._embedder.embed_queries([embedded])[0]
                return vector

        if self._defer_query_vector:
            return QueryVector.deferred(compute, self._embedder.model_id, self._embedder.dimension, accepts,
                                        text=embedded)
        return QueryVector(compute(), self._embedder.model_id, accepts, text=embedded)

    def probe(self, version: str, visibility: Visibility | None = None
              ) -> Callable[[str, Sequence[Chunk]], tuple[str, ...]]:
        """The answerability model's ``unknown_words``: question words ``version``'s knowledge base
        never uses, through the store's full-text index and ``visibility``."""
        from backend.core.services.answerability import store_probe

        return store_probe(self._store, version, visibility)

    @telemetry.traced("rag.search", attributes=lambda self, request: {
        "rag.target": request.target, "rag.k": request.top_k, "rag.strategy": request.strategy},
        result=lambda outcome: _outcome_attributes(outcome), group=True)
    def search(self, request: SearchRequest) -> SearchOutcome:
        """Top ``request.top_k`` hits under the request's strategy (default
        ``retrieval.strategy``, or the version's stamped one); the request checked itself
        when it was made. Store errors (unknown alias, model mismatch) propagate."""
        target = request.target
        request, stamp_details = self._resolve(request)
        cfg = request.retrieval
        assert cfg is not None
        strategy = request.strategy or cfg.strategy
        check_filter_limits(request.filters, cfg)
        fresh = cfg.freshness
        reranker = self._reranker_for(cfg.rerank)
        # a tie can straddle the cut-off, so freshness looks one top_k further down
        want = request.top_k * 2 if fresh.enabled else request.top_k
        rerank_n = cfg.rerank.top_n if reranker is not None else 0
        want = max(want, rerank_n)
        # lexical-first strategies embed the question beside their full-text search (query_embedding)
        query = PendingQuery(lambda: self.embed_query(request.query), overlap=strategy in LEXICAL_FIRST)
        run = {"dense": self._dense, "lexical": self._lexical, "fusion": self._fusion, "hyde": self._hyde,
               "hierarchical": self._hierarchical}.get(strategy) or self._fused(FUSED_SIDES[strategy])
        pool = want
        while True:
            ranked = run(request, query, pool)
            hits, duplicates = collapse_duplicates(ranked.hits)
            # duplicates across documents may have crowded out distinct hits: widen
            # until enough distinct ones are found or the target has no more
            if len(hits) >= want or len(ranked.hits) < pool or pool >= _MAX_POOL:
                break
            pool = min(pool * 2 + duplicates, _MAX_POOL)
        details = {"order_by": ORDER_BY[strategy], "score": "dense_similarity", **ranked.details,
                   "retrieval_settings": stamp_details}
        if duplicates:
            details["duplicates_collapsed"] = duplicates
        if fresh.enabled:
            before = [h.chunk.chunk_id for h in hits]
            hits = apply_freshness(hits, fresh.epsilon, fresh.field)
            moved = sum(a != b.chunk.chunk_id for a, b in zip(before, hits))
            details["freshness"] = {"epsilon": fresh.epsilon, "field": fresh.field, "reordered": moved}
        if reranker is not None and hits:
            hits = self._rerank(reranker, cfg.rerank, request.query, hits, details)
        hits = hits[: request.top_k]
        nodes: tuple[DocumentNode, ...] = ()
        if ranked.ranking is not None:
            nodes = hierarchy.tree([(h.chunk, h.fused_score if h.fused_score is not None else h.score) for h in hits],
                                   ranked.summaries, ranked.ranking)
        log.debug("search.done", strategy=strategy, target=target, version=ranked.version, hits=len(hits))
        return SearchOutcome(target, ranked.version, strategy, tuple(hits),
                             SCORE_SOURCE.get(strategy, "dense_similarity"), details, nodes)

    # --- the settings in force: the version's stamp, or the live config --------------------
    def _resolve(self, request: SearchRequest) -> tuple[SearchRequest, dict[str, Any]]:
        """The request with ``retrieval`` set and, when following stamps, ``target`` replaced by
        the version the alias resolves to now (every later call of the search names it, so a
        rotation cannot mix two versions, nor one version's settings with another's rows)."""
        if not self._follow_stamp:
            settings = stamped_settings(self._settings, self._profile, None)
            return dataclasses.replace(request, retrieval=settings), {"source": "live config", "version": None,
                                                                      "stamped": False, "stamp": None}
        version, stamp = self._store.resolve_retrieval(request.target)
        settings = stamped_settings(self._settings, self._profile, stamp)
        details = stamp_summary(version, stamp)
        return dataclasses.replace(request, target=version, retrieval=settings), details

    def _reranker_for(self, rerank: RerankSettings) -> Reranker | None:
        """The reranker the settings in force name: the configured one when they are the
        configured settings, else one built by ``rerankers`` (none when the stamp says none)."""
        if rerank == self._settings.rerank:
            return self._reranker
        if rerank.provider == "none":
            return None
        if self._rerankers is None:
            log.warning("search.stamped_reranker_unavailable", provider=rerank.provider)
            return self._reranker
        return self._rerankers(rerank)

    def _rerank(self, reranker: Reranker, cfg: RerankSettings, query: str, hits: Sequence[ScoredChunk],
                details: dict[str, Any]) -> tuple[ScoredChunk, ...]:
        head = hits[: cfg.top_n]
        with telemetry.span("rag.rerank", {"rag.rerank.provider": cfg.provider, "rag.rerank.top_n": len(head),
                                           "rag.rerank.model": getattr(reranker, "name", cfg.provider)}):
            scores = reranker.rerank(query, [h.chunk.text[: cfg.max_chars] for h in head])
            reranked, moves = apply_rerank(hits, scores)
            telemetry.annotate({"rag.rerank.moved": sum(m.before != m.after for m in moves)})
        details["order_by"] = f"rerank_score (top {len(head)}), then {details['order_by']}"
        details["rerank"] = {
            "provider": cfg.provider, "model": getattr(reranker, "name", cfg.provider), "top_n": cfg.top_n,
            "reranked": len(head), "moved": sum(m.before != m.after for m in moves),
            "order": [{"chunk_id": m.chunk_id, "rerank_score": round(m.score, 6), "rank_before": m.before,
                       "rank_after": m.after} for m in moves],
        }
        return reranked

    # --- strategies ---------------------------------------------------------------
    def _dense(self, request: SearchRequest, query: PendingQuery, pool: int) -> _Ranked:
        vector = query.get()
        with _dense_span(pool):
            result = self._store.search(request.target, vector, pool, request.filters, visibility=request.visibility)
            telemetry.annotate({"rag.candidates": len(result.hits)})
        return _Ranked(result.version, result.hits, {"candidates": {"dense": len(result.hits)},
                                                     "dense_index": result.dense_index})

    def _lexical(self, request: SearchRequest, query: PendingQuery, pool: int) -> _Ranked:
        lexical, analysis = self._lexical_hits(request, request.target, pool)
        ids = [c for c, _ in lexical.hits]
        hits = self._scored(lexical, query.get(), ids, {}, request.visibility,
                            lexical=dict(lexical.hits))
        details = {"candidates": {"lexical": len(lexical.hits)}, "dense_lookups": len(ids), "lexical": analysis}
        return _Ranked(lexical.version, hits, details)

    def _fusion(self, request: SearchRequest, query: PendingQuery, pool: int) -> _Ranked:
        """Both sides as ``(chunk_id, score)`` candidates; rows are read for the fused top
        ``pool`` only, and only their lexical-only members get a dense similarity lookup.
        The lexical side runs first, while the question is being embedded."""
        cfg = request.retrieval.fusion if request.retrieval is not None else self._fusion_settings
        feedback: dict[str, Any] | None = None
        if cfg.dense_feedback_docs:
            # lexical first: its best hits move the dense query (dense_feedback); hit.score stays
            # the similarity to the question itself, looked up for the shown hits below
            lexical, analysis = self._lexical_hits(request, request.target, max(cfg.lexical_depth, pool))
            moved, feedback = self._dense_feedback(lexical, query.get(), cfg.dense_feedback_docs,
                                                   cfg.dense_feedback_weight, request.visibility)
            with _dense_span(max(cfg.dense_depth, pool)):
                dense = self._store.dense_candidates(lexical.version, moved, max(cfg.dense_depth, pool),
                                                     request.filters, visibility=request.visibility)
        else:
            lexical, analysis = self._lexical_hits(request, request.target, max(cfg.lexical_depth, pool))
            vector = query.get()
            with _dense_span(max(cfg.dense_depth, pool)):
                dense = self._store.dense_candidates(lexical.version, vector, max(cfg.dense_depth, pool),
                                                     request.filters, visibility=request.visibility)
        weights = {"dense": cfg.dense_weight, "lexical": cfg.lexical_weight}
        with telemetry.span("rag.fuse", {"rag.fusion.method": cfg.method, "rag.k": pool}):
            if cfg.method == "score":
                fused = score_fusion({"dense": list(dense.hits), "lexical": list(lexical.hits)},
                                     weights, cfg.normalization, limit=pool)
            else:
                fused = reciprocal_rank_fusion(
                    {"dense": [c for c, _ in dense.hits], "lexical": [c for c, _ in lexical.hits]}, weights, cfg.k,
                    limit=pool,
                )
            by_dense = dict(dense.hits) if feedback is None else {}
            missing = [f.chunk_id for f in fused if f.chunk_id not in by_dense]
            hits = self._scored(dense, query.get(), [f.chunk_id for f in fused], by_dense, request.visibility,
                                lexical=dict(lexical.hits), fused={f.chunk_id: f.score for f in fused})
            telemetry.annotate({"rag.hits": len(hits)})
        details = {
            "candidates": {"dense": len(dense.hits), "lexical": len(lexical.hits)},
            "dense_lookups": len(missing),
            "dense_index": dense.dense_index,
            "fusion": {"method": cfg.method, "k": cfg.k, "normalization": cfg.normalization,
                       "dense_depth": cfg.dense_depth, "lexical_depth": cfg.lexical_depth,
                       "dense_weight": cfg.dense_weight, "lexical_weight": cfg.lexical_weight},
            "lexical": analysis,
        }
        if feedback is not None:
            details["dense_feedback"] = feedback
        return _Ranked(dense.version, hits, details)

    def _dense_feedback(self, lexical: Candidates, query: QueryVector, docs: int, weight: float,
                        visibility: Visibility | None) -> tuple[QueryVector, dict[str, Any]]:
        """The query vector moved toward the stored vectors of the first ``docs`` lexical hits
        (``dense_feedback.feedback_query``): one read of that many vectors, no embedding."""
        ids = [c for c, _ in lexical.hits[:docs]]
        vectors = self._store.chunk_vectors(lexical.version, ids, visibility=visibility) if ids else {}
        used = [c for c in ids if c in vectors]
        moved = feedback_query(query.values, [vectors[c] for c in used], weight)
        return (query.moved(moved),
                {"docs": len(used), "weight": weight, "chunk_ids": used})

    def _scored(self, found: Candidates, query: QueryVector, order: Sequence[str], similarity: Mapping[str, float],
                visibility: Visibility | None, *, lexical: Mapping[str, float],
                fused: Mapping[str, float] | None = None) -> tuple[ScoredChunk, ...]:
        """Hits for the ids of ``order`` (in that order, ranked from 1): rows read now, ``score``
        the dense similarity (``similarity``, else looked up for exactly the ids it lacks);
        an id whose chunk the store no longer shows (hidden, deleted) is skipped."""
        missing = [c for c in order if c not in similarity]
        sims = dict(similarity)
        if missing:
            sims.update(self._store.similarities(found.version, query, missing, visibility=visibility))
            if len([c for c in missing if c in sims]) < len(set(missing)):
                log.warning("search.similarity_missing", version=found.version, asked=len(set(missing)),
                            found=len([c for c in set(missing) if c in sims]))
        shown = [c for c in order if c in sims]
        chunks = self._store.fetch_chunks(found.version, shown, visibility=visibility) if shown else {}
        return tuple(
            ScoredChunk(chunks[c], sims[c], rank, found.distance, lexical_score=lexical.get(c),
                        fused_score=fused.get(c) if fused is not None else None)
            for rank, c in enumerate((c for c in shown if c in chunks), start=1))

    @telemetry.traced("rag.lexical", attributes=lambda self, request, target, depth: {"rag.k": depth},
                      result=lambda found: {"rag.candidates": len(found[0].hits), "rag.lexical.terms": found[1]["terms"],
                                            "rag.lexical.feedback_terms": len(found[1].get("feedback", {}).get("terms", ()))})
    def _lexical_hits(self, request: SearchRequest, target: str, depth: int) -> tuple[Candidates, dict[str, Any]]:
        """The lexical side under ``retrieval.lexical``: the query without stop words, then, with
        feedback on, a second search with the best terms of the first ``feedback_docs`` hits,
        the two score lists combined (``lexical_query.combine_feedback``). Candidates only: the
        feedback reads the texts of the first hits (its idf pool), never whole rows."""
        lex = request.retrieval.lexical if request.retrieval is not None else self._settings.lexical
        terms = query_words(request.query, lex)
        sent = lexical_terms(request.query, lex)
        first = self._store.lexical_candidates(target, " ".join(sent), depth, request.filters,
                                               visibility=request.visibility)
        analysis: dict[str, Any] = {"stop_words": lex.stop_words, "terms": len(terms)}
        if lex.query_term_frequency:
            analysis["query_term_frequency"] = {"words_sent": len(sent)}
        if not lex.feedback_docs or not first.hits:
            return first, analysis
        text_of = self._store.chunk_texts(first.version, [c for c, _ in first.hits], visibility=request.visibility)
        texts = [text_of[c] for c, _ in first.hits if c in text_of]
        extra = expansion_terms(terms, texts[: lex.feedback_docs], texts, lex.feedback_terms, stop_words(lex)
                                | ENGLISH_STOP_WORDS)
        analysis["feedback"] = {"docs": min(lex.feedback_docs, len(texts)), "terms": extra,
                                "weight": lex.feedback_weight}
        if not extra:
            return first, analysis
        second = self._store.lexical_candidates(first.version, " ".join(sent + extra), depth, request.filters,
                                                visibility=request.visibility)
        combined = combine_feedback(list(first.hits), list(second.hits), lex.feedback_weight)
        return dataclasses.replace(first, hits=tuple(combined[:depth])), analysis

    # --- seeds 001 and 002: hypothetical questions and summaries ----------------------------
    def _hyde(self, request: SearchRequest, pending: PendingQuery, pool: int) -> _Ranked:
        """Seed 001: the query against the hypothetical questions; parent chunks (once each, by
        their best question) in question-similarity order, each scored with its own dense
        similarity so thresholds compare what they were tuned for."""
        query = pending.get()
        with _dense_span(pool, "questions"):
            found = self._store.search_questions(request.target, query, pool, request.filters,
                                                 visibility=request.visibility)
        ids = [h.chunk.chunk_id for h in found.hits]
        dense = self._similarities(found.version, query, ids, request.visibility)
        hits = tuple(
            dataclasses.replace(dense[h.chunk.chunk_id], rank=rank, fused_score=h.score, matched_question=h.question)
            for rank, h in enumerate((h for h in found.hits if h.chunk.chunk_id in dense), start=1)
        )
        details = {"candidates": {"hyde": len(found.hits)}, "dense_lookups": len(ids)}
        return _Ranked(found.version, hits, details)

    def _hierarchical(self, request: SearchRequest, pending: PendingQuery, pool: int) -> _Ranked:
        """Seed 002: chunks and page/document summaries of one version, scores normalised per
        type, chunks ordered by their own, their page's and their document's score
        (``hierarchy.rank``). A document found only by its summaries gets its best chunks looked
        up (``hierarchical.chunks_per_document``), so its passages can be cited."""
        query = pending.get()
        cfg = (request.retrieval or self._settings).hierarchical
        with _dense_span(max(cfg.chunk_depth, pool)):
            chunks = self._store.search(request.target, query, max(cfg.chunk_depth, pool), request.filters,
                                        visibility=request.visibility)
        version = chunks.version
        with _dense_span(cfg.summary_depth, "summaries"):
            summaries = self._store.search_summaries(version, query, cfg.summary_depth, request.filters,
                                                     visibility=request.visibility)
        candidates = list(chunks.hits)
        extra_docs = hierarchy.documents_without_chunks([h.chunk.doc_id for h in candidates], summaries.hits,
                                                        limit=pool) if cfg.chunks_per_document else []
        if extra_docs:
            support = self._store.search(
                version, query, len(extra_docs) * cfg.chunks_per_document,
                (*request.filters, FieldFilter("doc_id", any_of=tuple(extra_docs))), visibility=request.visibility)
            seen = {h.chunk.chunk_id for h in candidates}
            candidates += [h for h in support.hits if h.chunk.chunk_id not in seen]
        ranking = hierarchy.rank([(h.chunk, h.score) for h in candidates], summaries.hits,
                                 normalization=cfg.normalization,
                                 weights=hierarchy.Weights(cfg.chunk_weight, cfg.page_weight, cfg.document_weight))
        by_id = {h.chunk.chunk_id: h for h in candidates}
        hits = tuple(dataclasses.replace(by_id[cid], rank=rank, fused_score=score)
                     for rank, (cid, score) in enumerate(ranking.order, start=1))
        kinds = [h.summary.kind for h in summaries.hits]
        details = {
            "candidates": {"dense": len(chunks.hits), "page_summary": kinds.count("page_summary"),
                           "artifact_summary": kinds.count("artifact_summary"),
                           "supporting_chunks": len(candidates) - len(chunks.hits)},
            "hierarchical": {"normalization": cfg.normalization, "chunk_weight": cfg.chunk_weight,
                             "page_weight": cfg.page_weight, "document_weight": cfg.document_weight,
                             "chunk_depth": cfg.chunk_depth, "summary_depth": cfg.summary_depth,
                             "chunks_per_document": cfg.chunks_per_document},
        }
        return _Ranked(version, hits, details, summaries.hits, ranking)

    def _fused(self, sides: Sequence[str]) -> Callable[[SearchRequest, PendingQuery, int], _Ranked]:
        """A runner fusing ``sides`` (strategies above) by ``fusion.method``, the way ``fusion``
        fuses dense and lexical; every side after the first searches the version the first resolved."""
        runners = {"dense": self._dense, "lexical": self._lexical, "hyde": self._hyde,
                   "hierarchical": self._hierarchical}

        def run(request: SearchRequest, query: PendingQuery, pool: int) -> _Ranked:
            settings = request.retrieval or self._settings
            cfg = settings.fusion if request.retrieval is not None else self._fusion_settings
            depth = {"dense": cfg.dense_depth, "lexical": cfg.lexical_depth, "hyde": settings.hyde.depth,
                     "hierarchical": settings.hierarchical.chunk_depth}
            weights = {"dense": cfg.dense_weight, "lexical": cfg.lexical_weight, "hyde": settings.hyde.weight,
                       "hierarchical": settings.hierarchical.weight}
            runs: dict[str, _Ranked] = {}
            for side in sides:
                req = request if not runs else dataclasses.replace(request, target=next(iter(runs.values())).version)
                runs[side] = runners[side](req, query, max(depth[side], pool))
            if cfg.method == "score":
                fused = score_fusion({side: [(h.chunk.chunk_id, _order_score(side, h)) for h in r.hits]
                                      for side, r in runs.items()}, weights, cfg.normalization, limit=pool)
            else:
                fused = reciprocal_rank_fusion({side: [h.chunk.chunk_id for h in r.hits] for side, r in runs.items()},
                                               weights, cfg.k, limit=pool)
            by_id: dict[str, ScoredChunk] = {}
            for r in runs.values():
                for h in r.hits:
                    by_id.setdefault(h.chunk.chunk_id, h)
            lexical = {h.chunk.chunk_id: h for h in runs["lexical"].hits} if "lexical" in runs else {}
            question = {h.chunk.chunk_id: h.matched_question for h in runs["hyde"].hits} if "hyde" in runs else {}
            hits = tuple(
                dataclasses.replace(by_id[f.chunk_id], rank=rank, fused_score=f.score,
                                    lexical_score=_lexical_score(lexical[f.chunk_id]) if f.chunk_id in lexical else None,
                                    matched_question=question.get(f.chunk_id))
                for rank, f in enumerate(fused, start=1))
            first = next(iter(runs.values()))
            hier = runs.get("hierarchical")
            details: dict[str, Any] = {
                "candidates": {side: len(r.hits) for side, r in runs.items()},
                "fusion": {"method": cfg.method, "k": cfg.k, "normalization": cfg.normalization, "sides": list(sides),
                           "weights": {side: weights[side] for side in sides},
                           "depths": {side: max(depth[side], pool) for side in sides}},
            }
            if "lexical" in runs:
                details["lexical"] = runs["lexical"].details.get("lexical")
            if hier is not None:
                details["hierarchical"] = hier.details.get("hierarchical")
            return _Ranked(first.version, hits, details, hier.summaries if hier else (),
                           hier.ranking if hier else None)

        return run

    def _similarities(self, version: str, query: QueryVector, chunk_ids: Sequence[str],
                      visibility: Visibility | None = None) -> dict[str, ScoredChunk]:
        """Dense hits for exactly these chunks of ``version`` (an exact search restricted by id)."""
        if not chunk_ids:
            return {}
        result = self._store.search(version, query, len(chunk_ids), (FieldFilter("chunk_id", any_of=tuple(chunk_ids)),),
                                    visibility=visibility)
        found = {h.chunk.chunk_id: h for h in result.hits}
        if len(found) < len(set(chunk_ids)):
            log.warning("search.similarity_missing", version=version, asked=len(set(chunk_ids)), found=len(found))
        return found


def _dense_span(depth: int, side: str = "chunks") -> Any:
    """The ``rag.dense`` span of one vector search (the query vector is ready before it opens)."""
    return telemetry.span("rag.dense", {"rag.k": depth, "rag.side": side})


def _outcome_attributes(outcome: SearchOutcome) -> dict[str, Any]:
    """What ``rag.search`` records once it has run: ids, counts and the best score, no text."""
    settings = outcome.details.get("retrieval_settings")
    return {"rag.version": outcome.version, "rag.strategy": outcome.strategy, "rag.hits": len(outcome.hits),
            "rag.top_score": round(max(h.score for h in outcome.hits), 6) if outcome.hits else None,
            "rag.stamped": settings.get("stamped") if isinstance(settings, dict) else None}


def _lexical_score(hit: ScoredChunk) -> float:
    return hit.lexical_score if hit.lexical_score is not None else hit.score


def _order_score(side: str, hit: ScoredChunk) -> float:
    """The score a side ordered its hits by (what score fusion normalises)."""
    if side == "lexical":
        return _lexical_score(hit)
    if side in ("hyde", "hierarchical") and hit.fused_score is not None:
        return hit.fused_score
    return hit.score
