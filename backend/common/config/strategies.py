"""Knobs of the search strategies: fusion, HyDE, hierarchical, lexical analysis and reranking."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from backend.common.config.base import RetrySettings, _Model

#: every search strategy a request (or ``retrieval.strategy``) may name
SearchStrategy = Literal["dense", "lexical", "fusion", "hyde", "hyde_fusion", "hierarchical", "enriched_fusion"]


class FusionSettings(_Model):
    k: int = Field(60, ge=1, description="Reciprocal rank fusion constant.")
    dense_depth: int = Field(100, ge=1, description="Candidates taken from dense search.")
    lexical_depth: int = Field(100, ge=1, description="Candidates taken from lexical search.")
    dense_weight: float = Field(1.0, ge=0, description="Weight of a dense rank in the fused score w / (k + rank).")
    lexical_weight: float = Field(1.0, ge=0, description="Weight of a lexical rank in the fused score w / (k + rank).")
    method: Literal["rrf", "score"] = Field(
        "rrf", description="rrf: (weighted) reciprocal rank fusion of the ranks; score: convex combination of each "
        "side's normalised score, dense_weight x dense + lexical_weight x lexical (weights divided by their sum).")
    normalization: Literal["minmax", "zscore"] = Field(
        "minmax", description="method score: how each side's scores are put on one scale over its candidates "
        "(a side that did not find a chunk contributes its lowest normalised score).")
    dense_feedback_docs: int = Field(
        0, ge=0, le=50, description="Lexical-to-dense feedback (Rocchio on the query vector): the dense side searches "
        "with the query vector moved toward the mean stored vector of the first dense_feedback_docs lexical hits, "
        "so documents worded like the best keyword matches rank higher; 0 = off. Needs the lexical side first "
        "(one store read of that many vectors, no extra embedding).")
    dense_feedback_weight: float = Field(
        0.5, ge=0, le=5, description="Weight of the feedback centroid: dense query = unit(q) + w x mean(unit(v)).")

    @model_validator(mode="after")
    def _some_weight(self) -> "FusionSettings":
        if self.dense_weight + self.lexical_weight <= 0:
            raise ValueError("dense_weight and lexical_weight cannot both be 0")
        return self


class HyDESettings(_Model):
    """Seed 001: match the question against each chunk's hypothetical questions (docs/SEARCH.md)."""

    depth: int = Field(100, ge=1, description="Distinct parent chunks taken from the question table (hyde side of "
                       "hyde_fusion / enriched_fusion; hyde alone takes at least top_k).")
    weight: float = Field(1.0, ge=0, description="Weight of the hyde side in hyde_fusion / enriched_fusion (same "
                          "formula as fusion.dense_weight).")


class HierarchicalSettings(_Model):
    """Seed 002: chunks and page/document summaries searched together, scores normalised per
    type, results as a document -> page -> chunk tree (docs/SEARCH.md)."""

    chunk_depth: int = Field(50, ge=1, description="Chunk candidates (dense).")
    summary_depth: int = Field(50, ge=1, description="Page and document summary candidates.")
    chunks_per_document: int = Field(
        3, ge=0, le=20, description="Supporting chunks looked up for a document found only through its summaries "
        "(0 = none: such a document adds nothing to the hits).")
    normalization: Literal["minmax", "zscore"] = Field(
        "minmax", description="How scores are put on one scale, separately for chunks, page summaries and document "
        "summaries (a 0.85 from a summary and from a chunk do not mean the same relevance).")
    chunk_weight: float = Field(1.0, ge=0, description="Weight of the chunk's own normalised score.")
    page_weight: float = Field(0.5, ge=0, description="Weight of its page's score (best of the page summary and "
                               "the page's chunks).")
    document_weight: float = Field(0.5, ge=0, description="Weight of its document's score (best of the document "
                                   "summary, page summaries and chunks).")
    weight: float = Field(1.0, ge=0, description="Weight of the hierarchical side in enriched_fusion.")

    @model_validator(mode="after")
    def _some_weight(self) -> "HierarchicalSettings":
        if self.chunk_weight + self.page_weight + self.document_weight <= 0:
            raise ValueError("chunk_weight, page_weight and document_weight cannot all be 0")
        return self


class LexicalSettings(_Model):
    """How the query is analysed for the lexical side (``lexical`` and ``fusion`` strategies;
    docs/SEARCH.md). Applied to the query only, so changing it never re-indexes a version."""

    stop_words: Literal["none", "english"] = Field(
        "none", description="english: drop the Glasgow/scikit-learn English stop list (318 words) from the lexical "
        "query, so 'what are the' no longer match; a query made only of stop words keeps its words. none: every word.")
    extra_stop_words: tuple[str, ...] = Field((), description="More words dropped from the lexical query (lowercase).")
    feedback_docs: int = Field(
        0, ge=0, le=50, description="Pseudo-relevance feedback (RM3-style): expand the lexical query with the best "
        "terms of its first feedback_docs hits and search again; 0 = off.")
    feedback_terms: int = Field(10, ge=1, le=100, description="Expansion terms added by feedback.")
    feedback_weight: float = Field(
        0.3, ge=0, le=1, description="Weight of the expanded search: lexical score = (1 - w) x first + w x "
        "expanded, each min-max normalised over its candidates.")
    query_term_frequency: bool = Field(
        False, description="Keep a word as often as the query says it (BM25's query term frequency): a long "
        "question that repeats 'retrieval' four times weighs it four times. Off: each word once. Embedded store "
        "(FTS5) only; Oracle Text ACCUMulates each word once either way.")

    @field_validator("extra_stop_words")
    @classmethod
    def _lowercase(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(w.strip().lower() for w in v if w.strip())


class RerankSettings(_Model):
    """Second-stage ordering of the first ``top_n`` candidates of any strategy (docs/SEARCH.md)."""

    provider: Literal["none", "sentences", "cross_encoder", "http", "oci"] = Field(
        "none", description="none; sentences: the embedding model re-scores each candidate by its best sentence "
        "(no extra model); cross_encoder: a sentence-transformers CrossEncoder from model_path; http: a /rerank "
        "endpoint (Cohere-compatible or text-embeddings-inference); oci: OCI Generative AI rerank_text.")
    top_n: int = Field(20, ge=1, le=200, description="Candidates re-scored; the rest keep their order after them.")
    model: str | None = Field(
        None, description="http: model name sent to the service; oci: the model name (e.g. cohere.rerank.v3-5), "
        "or the OCID of its dedicated endpoint (ocid1.generativeaiendpoint...), which is then called.")
    endpoint_id: str | None = Field(
        None, description="oci: OCID of the dedicated AI cluster endpoint that serves the rerank model (Cohere "
        "Rerank 3.5 is dedicated-only; never embeddings.oci.endpoint_id). Required with provider oci unless "
        "model is that endpoint's OCID.")
    model_path: str | None = Field(None, description="cross_encoder: local folder of the model (never downloaded).")
    base_url: str | None = Field(
        None, description="http: base URL; POST {base_url}/rerank (e.g. http://127.0.0.1:8081 for TEI, "
        "https://host/v1 for a Cohere-compatible server).")
    api: Literal["cohere", "tei"] = Field(
        "cohere", description="http request shape: cohere {query, documents, top_n} -> {results: [{index, "
        "relevance_score}]}; tei {query, texts} -> [{index, score}].")
    api_key: SecretStr | None = Field(None, description="http: bearer token; environment only (RAG_RETRIEVAL__RERANK__API_KEY).")
    timeout_s: float = Field(30.0, gt=0, description="http / oci: read timeout of one rerank call.")
    max_chars: int = Field(4000, ge=16, description="Characters of each candidate sent to the reranker.")
    batch_size: int = Field(16, ge=1, description="cross_encoder: pairs scored per forward pass.")
    sentence_weight: float = Field(
        0.5, ge=0, le=1, description="sentences: score = (1 - w) x chunk similarity + w x best sentence similarity.")
    retry: RetrySettings = Field(
        RetrySettings(max_attempts=3), description="http / oci: retries of 429, 5xx and timeouts (tenacity).")

    @model_validator(mode="after")
    def _needs(self) -> "RerankSettings":
        need = {"cross_encoder": ("model_path",), "http": ("base_url",), "oci": ("model",)}.get(self.provider, ())
        for name in need:
            if not getattr(self, name):
                raise ValueError(f"rerank.{name} is required with rerank.provider {self.provider!r}")
        if self.provider == "oci" and not self.endpoint_id \
                and not (self.model or "").startswith("ocid1.generativeaiendpoint"):
            raise ValueError("rerank.endpoint_id is required with rerank.provider 'oci': OCI serves Cohere Rerank "
                             "3.5 on dedicated AI clusters only (no on-demand mode); set the OCID of the rerank "
                             "endpoint (ocid1.generativeaiendpoint...), or put that OCID in rerank.model")
        if self.endpoint_id and not self.endpoint_id.startswith("ocid1.generativeaiendpoint"):
            raise ValueError(f"rerank.endpoint_id must be a dedicated endpoint OCID (ocid1.generativeaiendpoint...), "
                             f"not {self.endpoint_id!r}")
        return self
