"""Retrieval and the answer decision: top_k, thresholds, the answerability model, strategy knobs."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from backend.common.config.base import Distance, _Model, hint, validate_identifier
from backend.common.config.metadata import BUILTIN_FILTER_FIELDS, CHUNK_COLUMNS, MetadataFieldSettings, SearchPreset
from backend.common.config import strategies

#: how similarities are compared with the thresholds (see ``RetrievalSettings.score_mode``)
ScoreMode = Literal["normalized", "raw"]


class ShortQuerySettings(_Model):
    enabled: bool = Field(True, description="Tighten the thresholds for short questions.")
    max_tokens: int = Field(3, ge=0, description="Questions with at most this many tokens count as short.")
    threshold_low: float | None = Field(None, description="Low threshold while short (normalized mode); default: low + boost.")
    threshold_high: float | None = Field(None, description="High threshold while short (normalized mode); default: high + boost.")
    boost: float = Field(0.05, ge=0, description="Added to both thresholds when no explicit short thresholds are set.")


class HybridGateSettings(_Model):
    min_similarity_for_hybrid: float = Field(0.40, description="A chunk counts towards the hybrid gates only at or above this similarity.")
    min_chunks_for_hybrid: int = Field(2, ge=0, description="Hybrid needs at least this many usable chunks.")
    min_total_context_chars: int = Field(300, ge=0, description="Hybrid needs at least this much usable context.")
    min_best_similarity: float = Field(
        0.0, ge=0.0, le=1.0, description="Hybrid needs the best retrieved chunk at or above this similarity (0: no "
        "such gate). Unlike min_similarity_for_hybrid it leaves the context alone: a question whose best chunk is "
        "only loosely about it is off-topic, so it falls back rather than getting a partial answer.")
    exclude_chunk_types_from_llm: tuple[str, ...] = Field(("figure",), description="Chunk types kept out of the prompt.")
    max_context_chars: int = Field(6000, ge=100, description="Prompt context budget.")


class ReaderSettings(_Model):
    """The answer reader: a cross-encoder trained here (``rag train answerability``) that reads the
    question against each sentence and gives its probability of answering (docs/CALIBRATION.md)."""

    enabled: bool = Field(
        False, description="Judge sentences with the trained reader: its probability is the sentence's answerability "
        "(the logistic features stay as explanations), and no word of the question vetoes a sentence.")
    path: str = Field("models/answer-reader", description="Folder with the reader's ONNX file, tokenizer and card "
                      "(relative to the repository root; committed, never downloaded).")
    max_length: int = Field(128, ge=16, le=512, description="Tokens per (question, sentence) pair; the sentence is cut.")
    max_sentences: int = Field(
        24, ge=1, le=1000, description="The reader reads this many sentences per question: those the sentence scorer "
        "(meaning and words, already computed) ranks first; the others count as not answering. Bounds /chat's cost.")


#: the answerability model's features, in the order of its weight vector (``core/services/answerability.py``
#: computes them; the names live here so the settings check them without importing a service)
FEATURES: tuple[str, ...] = ("dense", "lexical", "answer_type", "passage_cover", "context_cover", "missing_topic",
                             "entity_cover", "entity_missing", "similarity", "name_cover", "number_missing",
                             "bigram_cover", "novelty", "unknown_words", "evidence", "conflict", "reader")


class AnswerabilitySettings(_Model):
    """The answerability model (``decision_score: answerability``): logistic weights per
    feature, fitted by ``rag calibrate --answerability`` (docs/CALIBRATION.md)."""

    enabled: bool = Field(
        True, description="decision_score evidence: also judge every sentence with this model (the relevance bar, "
        "which sentences are quoted); false gives the evidence decision and answerer of before wave 3. Always on "
        "with decision_score answerability.")
    intercept: float = Field(-4.5919, description="Logit of a sentence with every feature at 0.")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"dense": 3.3258, "lexical": 0.608, "answer_type": 0.5114, "passage_cover": 0.481,
                                 "similarity": 0.0141, "number_missing": -0.0719, "bigram_cover": 1.763,
                                 "novelty": 0.2104, "unknown_words": -1.1472, "conflict": -3.163},
        description="Weight per feature (see docs/CALIBRATION.md for each: dense, lexical, answer_type, passage_cover, "
        "context_cover, missing_topic, entity_cover, entity_missing, similarity, name_cover, number_missing, "
        "bigram_cover, novelty, unknown_words, evidence, conflict, reader); a feature left out weighs 0.")
    min_sentence_relevance: float = Field(
        0.2, ge=0, le=1, description="decision_score evidence or answerability: hybrid needs a sentence at or above "
        "this probability that may be quoted (shares a content word with the question, asks nothing beyond the "
        "context), and quotes only such sentences; rag (the high threshold reached) needs one quotable sentence of "
        "any probability. No quotable sentence means fallback, whatever the thresholds.")
    reader: ReaderSettings = ReaderSettings()

    @field_validator("weights")
    @classmethod
    def _known_features(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(v) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown feature(s) {unknown}; known: {', '.join(FEATURES)}{hint(unknown[0], FEATURES)}")
        return v


class FreshnessSettings(_Model):
    enabled: bool = Field(False, description="Break near-ties in favour of the newer document (seed 003).")
    epsilon: float = Field(
        0.01, ge=0, description="Dense similarities closer than this are ties; the newer `field` wins."
    )
    field: str = Field("updated_at", description="Metadata field holding an ISO date.")


class RetrievalSettings(_Model):
    top_k: int = Field(8, ge=1, le=200, description="Candidates retrieved per question.")
    max_top_k: int = Field(50, ge=1, le=1000, description="Largest top_k a request may ask for.")
    max_filters: int = Field(16, ge=1, le=64, description="Most metadata filters (fields) one request may send; more answer 400.")
    max_filter_values: int = Field(
        100, ge=1, le=500,
        description="Most values in one filter's any/all list; more answer 400 (SQLite caps the expression depth at 1000).")
    distance: Distance = Field("cosine", description="Distance the thresholds were tuned for; must match the profiles.")
    score_mode: ScoreMode = Field(
        "normalized",
        description="normalized: similarities mapped into [0,1] and compared with threshold_*; raw: the distance's own "
        "similarity compared with raw_<distance>_* (dot and cosine only).",
    )
    threshold_low: float = Field(0.35, description="normalized: hybrid starts here.")
    threshold_high: float = Field(0.55, description="normalized: rag starts here.")
    decision_score: Literal["similarity", "evidence", "answerability"] = Field(
        "similarity",
        description="What the thresholds compare: `similarity` (best chunk similarity), `evidence` (best sentence "
        "score of the usable chunks times the question's word coverage, in [0, 1]) or `answerability` (the best "
        "sentence's probability of answering under `answerability`, in [0, 1]); the last two need score_mode "
        "normalized; see docs/CALIBRATION.md.",
    )
    answerability: AnswerabilitySettings = AnswerabilitySettings()

    @property
    def judges_sentences(self) -> bool:
        """Whether the answerability model judges sentences: the relevance bar and quoting."""
        return self.decision_score == "answerability" or (self.decision_score == "evidence"
                                                          and self.answerability.enabled)
    raw_dot_low: float | None = Field(None, description="raw mode, dot distance: hybrid starts at this dot product.")
    raw_dot_high: float | None = Field(None, description="raw mode, dot distance: rag starts at this dot product.")
    raw_cosine_low: float | None = Field(None, description="raw mode, cosine distance: hybrid starts at this cosine similarity.")
    raw_cosine_high: float | None = Field(None, description="raw mode, cosine distance: rag starts at this cosine similarity.")
    short_query: ShortQuerySettings = ShortQuerySettings()
    hybrid: HybridGateSettings = HybridGateSettings()
    strategy: strategies.SearchStrategy = Field("dense", description="Default search strategy.")
    fusion: strategies.FusionSettings = strategies.FusionSettings()
    lexical: strategies.LexicalSettings = strategies.LexicalSettings()
    hyde: strategies.HyDESettings = strategies.HyDESettings()
    hierarchical: strategies.HierarchicalSettings = strategies.HierarchicalSettings()
    rerank: strategies.RerankSettings = strategies.RerankSettings()
    freshness: FreshnessSettings = FreshnessSettings()
    metadata_schema: dict[str, MetadataFieldSettings] = Field(
        default_factory=dict, description="Typed metadata fields: validated at ingest, checked in request filters."
    )
    presets: tuple[SearchPreset, ...] = Field((), description="Named searches listed at GET /search/presets.")

    @field_validator("metadata_schema")
    @classmethod
    def _field_names(cls, v: dict[str, MetadataFieldSettings]) -> dict[str, MetadataFieldSettings]:
        for name in v:
            validate_identifier(name, "metadata field")
            if name in CHUNK_COLUMNS:
                raise ValueError(f"{name!r} is a chunk column, not a metadata field; it is filterable without a declaration")
        return v

    @model_validator(mode="after")
    def _presets_and_freshness(self) -> "RetrievalSettings":
        names = [p.name for p in self.presets]
        if len(set(names)) != len(names):
            raise ValueError(f"presets: names must be unique, got {names}")
        for preset in self.presets:
            field = preset.filter_field
            if field is None:
                continue
            declared = self.metadata_schema.get(field)
            if declared is None and field not in BUILTIN_FILTER_FIELDS:
                known = sorted({*BUILTIN_FILTER_FIELDS, *self.metadata_schema})
                raise ValueError(f"presets.{preset.name}.filter_field {field!r} is neither in metadata_schema nor built in; "
                                 f"known fields: {', '.join(known)}{hint(field, known)}")
            if declared is not None and not declared.filterable:
                raise ValueError(f"presets.{preset.name}.filter_field {field!r} is declared filterable: false")
            if (declared.type if declared is not None else BUILTIN_FILTER_FIELDS[field]) == "date":
                raise ValueError(f"presets.{preset.name}.filter_field {field!r} is a date; presets filter by value (any)")
        fresh = self.metadata_schema.get(self.freshness.field)
        if fresh is not None and fresh.type != "date":
            raise ValueError(f"freshness.field {self.freshness.field!r} is declared as {fresh.type} in metadata_schema; it must be a date")
        return self

    @model_validator(mode="after")
    def _consistent(self) -> "RetrievalSettings":
        if self.decision_score in ("evidence", "answerability") and self.score_mode != "normalized":
            raise ValueError(f"decision_score {self.decision_score!r} compares a [0, 1] score with threshold_low/high; "
                             "it needs score_mode 'normalized'")
        if self.score_mode == "raw":
            if self.distance == "euclidean":
                raise ValueError("score_mode 'raw' is not supported with distance 'euclidean' (only dot and cosine have raw thresholds)")
            low, high = (self.raw_dot_low, self.raw_dot_high) if self.distance == "dot" else (self.raw_cosine_low, self.raw_cosine_high)
            if low is None or high is None:
                raise ValueError(f"score_mode 'raw' with distance '{self.distance}' needs raw_{self.distance}_low and raw_{self.distance}_high")
            if low > high:
                raise ValueError(f"raw_{self.distance}_low ({low}) must not exceed raw_{self.distance}_high ({high})")
        if self.threshold_low > self.threshold_high:
            raise ValueError(f"threshold_low ({self.threshold_low}) must not exceed threshold_high ({self.threshold_high})")
        if self.top_k > self.max_top_k:
            raise ValueError(f"top_k ({self.top_k}) must not exceed max_top_k ({self.max_top_k})")
        return self
