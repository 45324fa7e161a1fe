"""Request and response bodies of the HTTP API, as pydantic models.

They validate requests, serialize every response, and are the single source of
``/openapi.json``, so the published schema is the behaviour. Requests are strict
(``"5"`` is not a ``top_k``) and reject unknown fields. The request models are the
typed requests: validated with ``context={"limits": RequestLimits}`` they also check the
limits that come from config (question length, ``max_top_k``), once, so the services take
them as checked; ``openapi.py`` writes those limits into the schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from backend.common.config import SearchStrategy
from backend.common.text_fields import non_blank
from backend.core.requests import RequestLimits, strategy_hint

Mode = Literal["rag", "hybrid", "fallback"]


def _whole_number(value: Any) -> Any:
    """JSON Schema counts ``30.0`` as an integer, so the server does too (strings stay rejected)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


PositiveWhole = Annotated[int, Field(ge=1), BeforeValidator(_whole_number)]


def _strategy_hint(value: Any, handler: Any) -> Any:
    """The schema's own "Input should be ..." for an unknown strategy, with the one meant."""
    try:
        return handler(value)
    except ValidationError as exc:
        if not isinstance(value, str):
            raise
        raise PydanticCustomError("literal_error", str(exc.errors()[0]["msg"]) + strategy_hint(value)) from None


#: a search strategy name; an unknown one is refused with pydantic's message plus "did you mean"
Strategy = Annotated[SearchStrategy, WrapValidator(_strategy_hint)]


def request_limits(info: ValidationInfo) -> RequestLimits | None:
    """The limits a request model is validated with (``context={"limits": ...}``), if any."""
    context = info.context
    limits = context.get("limits") if isinstance(context, dict) else None
    return limits if isinstance(limits, RequestLimits) else None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class FilterCondition(_Strict):
    """A metadata condition: the field holds any / all of the values, or a date range (ISO-8601).
    ``any_of`` / ``all_of`` are accepted as spellings of ``any`` / ``all``."""

    any: list[str] | None = Field(None, description="At least one of these values.")
    any_of: list[str] | None = Field(None, description="Same as any.")
    all: list[str] | None = Field(None, description="Every one of these values (multi-valued fields).")
    all_of: list[str] | None = Field(None, description="Same as all.")
    gte: str | None = Field(None, description="Date fields: ISO date lower bound (inclusive).")
    lte: str | None = Field(None, description="Date fields: ISO date upper bound (inclusive).")


FilterValue = Union[str, list[str], FilterCondition]


class ChatRequestBody(_Strict):
    """Body of ``POST /chat``."""

    question: Annotated[str, non_blank("question must contain text")] = Field(
        ..., min_length=1, description="The user's question (at most server.max_question_chars).")
    top_k: PositiveWhole | None = Field(None, description="Candidates to retrieve (1..retrieval.max_top_k); default retrieval.top_k.")
    filters: dict[str, FilterValue] = Field(
        default_factory=dict,
        description="Metadata filters, ANDed: a value, a list (any of), or {any, all, gte, lte}; fields are "
        "the built-ins (doc_id, source, chunk_type, tags, lang, updated_at) and retrieval.metadata_schema.",
    )
    strategy: Strategy | None = Field(None, description="Search strategy; default retrieval.strategy.")
    conversation_id: str | None = Field(None, max_length=128, description="Client's conversation id, stored with the interaction.")

    @model_validator(mode="after")
    def _within_limits(self, info: ValidationInfo) -> "ChatRequestBody":
        """The configured limits, after the shape: 413 for a long question, 422 for ``top_k``."""
        limits = request_limits(info)
        if limits is not None:
            limits.text(self.question)
            limits.top_k(self.top_k)
        return self

    def raw_filters(self) -> dict[str, Any]:
        """Filters in the plain shape ``metadata_schema.parse_filters`` checks against the schema."""
        return {
            name: value.model_dump(exclude_none=True) if isinstance(value, FilterCondition) else value
            for name, value in self.filters.items()
        }


class ResponseModel(BaseModel):
    """What every response body model is: a field the schema does not name is a bug, not data."""

    model_config = ConfigDict(extra="forbid")


class Citation(ResponseModel):
    marker: str | None = Field(..., description="'[n]' as used in the answer; null for figures.")
    chunk_id: str
    doc_id: str
    source: str
    score: float = Field(..., description="Similarity the decision compared (see decision_explain.score_mode).")
    chunk_type: str
    image_ref: str | None = Field(None, description="Figures: image path relative to the assets directory.")
    figure_id: str | None = None
    page: str | None = Field(None, description="PDF page number of the cited sentence (a passage cited as a whole, "
                             "e.g. by an LLM: the page it starts on); null for documents without pages.")
    section: str | None = Field(None, description="Heading path (\"Leave > Carry-over\") or heading the cited "
                                "sentence stands under; null when the document has no headings there.")


class RetrievedChunkMeta(ResponseModel):
    rank: int
    chunk_id: str
    doc_id: str
    source: str
    chunk_type: str
    similarity: float
    raw_score: float = Field(..., description="The store's score before normalization.")
    used: bool = Field(..., description="Reached the prompt.")
    excluded_from_llm: bool = Field(..., description="Its chunk_type is in exclude_chunk_types_from_llm.")
    text_preview: str = Field(..., description="First ~200 characters.")
    image_ref: str | None = None
    figure_id: str | None = None
    parent_chunk_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ThresholdsOut(ResponseModel):
    low: float
    high: float
    base_low: float
    base_high: float
    kind: Literal["normalized", "raw_cosine", "raw_dot"]


class GatesOut(ResponseModel):
    min_similarity_for_hybrid: float
    min_chunks_for_hybrid: int
    min_total_context_chars: int
    #: the best chunk's similarity a partial answer needs (0: no such gate)
    min_best_similarity: float = 0.0
    usable_chunks: int
    usable_context_chars: int
    passed: dict[str, bool]


def _without_none(data: Any, keys: tuple[str, ...]) -> Any:
    """``data`` without those of ``keys`` that are None (fields only some answerers report)."""
    if isinstance(data, dict):
        for key in keys:
            if key in data and data[key] is None:
                del data[key]
    return data


class AnswerSentenceOut(ResponseModel):
    role: Literal["lead", "support", "runner_up"]
    marker: str = Field(..., description="Citation marker of the sentence's passage.")
    chunk_id: str
    sentence: str = Field(..., description="The sentence (first 200 characters).")
    heading: str | None = Field(..., description="Heading the sentence stands under (context, not quoted).")
    score: float = Field(..., description="dense + lexical weight x lexical + answer-type weight x match.")
    dense: float = Field(..., description="Cosine of sentence and question (0 without a local embedder).")
    lexical: float = Field(..., description="Share of the question's content words in the sentence (heading at half weight).")
    answer_type_match: bool = Field(..., description="The sentence carries what the question asks for (number, date, name, ...).")
    answerability: float | None = Field(
        None, description="retrieval.answerability: the sentence's probability of answering the question; null "
        "without the answerability model.")
    contributions: list[dict[str, Any]] | None = Field(
        None, description="The quoted sentences' largest feature contributions to that probability (feature, means, "
        "value, weight, contribution); null for the runner-up and without the answerability model.")

    # only the answerability model reports these: a field it left out stays out, so the response
    # equals the decision_explain stored with the interaction (no return annotation: the schema
    # stays the fields')
    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler):
        return _without_none(handler(self), ("answerability", "contributions"))


class AnswerabilityOut(ResponseModel):
    best_sentence: float | None = Field(
        ..., description="Best probability that a quotable retrieved sentence answers the question (the answer "
        "reader's, or the logistic model's without one).")
    relevance_bar: float = Field(..., description="retrieval.answerability.min_sentence_relevance: below it nothing "
                                 "is relevant, and the answer is never hybrid.")
    unknown_words: list[str] = Field(..., description="Question words no visible chunk of the knowledge base uses "
                                     "(looked up only without the answer reader; with it, always empty).")
    judged_by: str | None = Field(None, description="Who judged the sentences: 'reader' (the trained answer reader, "
                                  "retrieval.answerability.reader) or 'features' (the logistic model).")
    sentence: str | None = Field(None, description="The sentence best_sentence scores: the one judged most likely "
                                 "to answer.")
    verdict: str | None = Field(None, description="The decision in plain words: which sentence was judged, and how "
                                "its score compares with the thresholds.")


class AnswerExplainOut(ResponseModel):
    method: str
    question_type: str | None = Field(..., description="duration, list, number, date, name, location, option, or null.")
    content_words: list[str]
    candidates: int = Field(..., description="Sentences scored.")
    scoring: str
    sentences: list[AnswerSentenceOut] = Field(..., description="The answer's sentences: lead first, then support.")
    runner_up: AnswerSentenceOut | None = Field(..., description="Best sentence left out of the answer.")
    quotable: int | None = Field(
        None, description="Sentences that may be quoted: they share a word with the question, are no framing or "
        "fact line and, in hybrid mode, clear the relevance bar; 0 gives a blank answer, so fallback.")
    relevance_bar: float | None = Field(None, description="The relevance bar applied to quoted sentences: "
                                        "retrieval.answerability.min_sentence_relevance in hybrid mode, 0 in rag mode.")
    excluded_passages: list[int] | None = Field(
        None, description="Context passages ([n]) never quoted because they address an AI assistant (\"ignore "
        "previous instructions\", \"answer only with\", ...): untrusted text, not an answer.")

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler):
        return _without_none(handler(self), ("quotable", "relevance_bar", "excluded_passages"))


class RerankMoveOut(ResponseModel):
    chunk_id: str
    rerank_score: float
    rank_before: int = Field(..., description="Rank under the strategy's own order.")
    rank_after: int = Field(..., description="Rank after the reranker.")


class DenseIndexOut(ResponseModel):
    kind: Literal["hnsw", "exact"] = Field(..., description="The version's HNSW index, or the exact scan.")
    reason: str = Field(..., description="Why: unfiltered, filtered and widened, below store.sqlite.ann."
                        "min_vectors, a filter leaving few rows, a stale or unusable index, a widened search short of k.")
    depth: int | None = Field(None, description="Neighbours asked of the index (hnsw only).")


class RerankOut(ResponseModel):
    provider: str
    model: str
    top_n: int
    reranked: int = Field(..., description="Candidates the reranker scored.")
    moved: int = Field(..., description="How many of them changed rank.")
    order: list[RerankMoveOut]


class RetrievalSettingsOut(ResponseModel):
    source: Literal["version stamp", "live config"] = Field(
        ..., description="version stamp: the settings recorded on the version at ingest; live config: the version "
        "has no stamp (made before stamps existed), so the running configuration applies.")
    version: str | None = Field(None, description="The version searched.")
    stamped: bool = Field(False, description="Whether the version carries a stamp.")
    stamp: dict[str, Any] | None = Field(
        None, description="The stamp: strategy, fusion, lexical, rerank (provider, model, top_n...), freshness.")


class DecisionExplain(ResponseModel):
    mode: Mode
    decided_mode: Mode = Field(..., description="Mode before a blank primary answer, or the primary LLM's "
                               "NOT_ANSWERABLE reply, forced fallback.")
    blank_primary_answer: bool
    llm_judged_unanswerable: bool = Field(
        False, description="The primary LLM replied NOT_ANSWERABLE (the passages do not contain the answer), so the "
        "answer fell back; false for the extractive answerer, which never abstains this way.")
    short_query_active: bool
    thresholds: ThresholdsOut
    max_similarity: float | None
    max_eligible_similarity: float | None = Field(..., description="Best similarity among chunk types the LLM may see.")
    decision_score: Literal["similarity", "evidence", "answerability"] = Field(
        "similarity", description="What the thresholds compared (retrieval.decision_score).")
    max_evidence: float | None = Field(
        None, description="Best sentence evidence among usable chunks (compared when decision_score is evidence).")
    answerability: AnswerabilityOut | None = Field(
        None, description="The answerability model's verdict (decision_score evidence or answerability); null with "
        "decision_score similarity.")
    gates: GatesOut
    excluded_chunk_ids: list[str]
    reasons: list[str]
    effective_query: str
    query_tokens: int
    used_llm: Literal["primary", "fallback"]
    answered_by: str = Field(..., description="Provider that wrote the answer, or 'none' for the fixed message.")
    score_mode: Literal["normalized", "raw"]
    distance: Literal["cosine", "dot", "euclidean"]
    retrieval_target: str = Field(..., description="Alias (or version) queried.")
    domain: str | None
    version: str = Field(..., description="Version the alias resolved to for this request.")
    strategy: str
    score_source: str
    top_k: int
    candidates: int
    answer_explain: AnswerExplainOut | None = Field(
        None, description="Extractive answerer: which sentence won and why; null for other answerers and fallback.")
    condensed_by: Literal["none", "rule", "llm"] = Field(
        "none", description="How a follow-up in a conversation became effective_query: the offline rule, the "
        "configured LLM, or not rewritten.")
    condensed_rule: str | None = Field(None, description="The offline rule that applied: substitution, connective or "
                                          "elliptical.")
    rerank: RerankOut | None = Field(
        None, description="retrieval.rerank: how the reranker re-ordered the first top_n candidates (the thresholds "
        "still compared dense similarity); null without a reranker.")
    retrieval_settings: RetrievalSettingsOut | None = Field(
        None, description="Which retrieval settings chose the chunks: the served version's stamp (recorded at "
        "ingest) or, for a version made before stamps, the live config.")
    dense_index: DenseIndexOut | None = Field(
        None, description="How the dense side was searched (embedded store): its HNSW index or the exact scan, and "
        "why; null for strategies without a dense side and for the Oracle store.")


class ChatResponse(ResponseModel):
    answer: str
    mode: Mode
    citations: list[Citation]
    retrieved_chunks_metadata: list[RetrievedChunkMeta]
    used_chunks: list[str] = Field(..., description="chunk_ids that reached the prompt, in prompt order (the "
                                   "answer's citations are those it cites, renumbered in answer order).")
    sources_used: Literal["all", "partial", "none"]
    decision_explain: DecisionExplain


class ErrorBody(ResponseModel):
    code: str
    message: str
    details: Any | None = None
    request_id: str | None = Field(None, description="Status >= 500 only: quote it to the operator (X-Request-ID).")


class ErrorResponse(ResponseModel):
    error: ErrorBody


class HealthResponse(ResponseModel):
    status: Literal["ok"]


class ReadyCheck(ResponseModel):
    ok: bool
    detail: str


class ReadyResponse(ResponseModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, ReadyCheck]
