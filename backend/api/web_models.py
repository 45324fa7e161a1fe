"""Bodies of the chat page's endpoints: ``/chat/stream`` events, ``/feedback``,
``/conversations/<id>`` and ``/domains``. Like ``models.py`` they validate requests,
serialize responses and are the source of ``/openapi.json``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.api.models import Citation, DecisionExplain, Mode, ResponseModel, RetrievedChunkMeta

#: what a conversation id may look like in a URL path (the page makes UUIDs)
CONVERSATION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"


class SourceOut(ResponseModel):
    """A cited chunk as the page shows it when a citation marker is opened."""

    marker: str | None = Field(..., description="'[n]' as in the answer; null for figures.")
    chunk_id: str
    doc_id: str
    source: str = Field(..., description="Path relative to the manifest (or the repository), or the document "
                        "title; never a server path.")
    chunk_type: str
    section: str | None = Field(..., description="Heading path or heading the cited sentence stands under, when "
                                "known.")
    page: int | None = Field(..., description="Page number (PDF) of the cited sentence, when known.")
    text: str = Field(..., description="The chunk's full text (as stored: sanitized at ingest when configured).")
    image_url: str | None = Field(..., description="Figures: URL of the image (a signed, short-lived one when API keys "
                                  "are on, so an <img> needs no header).")


class StreamMeta(ResponseModel):
    """``event: meta``, sent first: how the question will be answered and from what."""

    interaction_id: str = Field(..., description="What POST /feedback names; the turn is stored when done is sent.")
    mode: Mode = Field(..., description="Planned mode; with a token-streaming LLM a blank answer or a "
                       "NOT_ANSWERABLE reply can still end as fallback (done carries the final mode).")
    decision_explain: DecisionExplain
    citations: list[Citation]
    retrieved_chunks_metadata: list[RetrievedChunkMeta]
    used_chunks: list[str]
    sources_used: Literal["all", "partial", "none"]
    sources: list[SourceOut]


class StreamDelta(ResponseModel):
    """``event: delta``: the next piece of the answer (a sentence, or an LLM's tokens)."""

    text: str


class Timings(ResponseModel):
    retrieval_ms: float = Field(..., description="Routing, condensing, search and the mode decision.")
    generation_ms: float = Field(..., description="Writing the answer.")
    total_ms: float


class StreamDone(ResponseModel):
    """``event: done``, last: the final answer as recorded."""

    interaction_id: str
    mode: Mode
    answer: str = Field(..., description="The whole answer: the deltas joined, its citation markers renumbered "
                        "[1]..[m] in the order the answer cites them (an LLM's streamed deltas carry its own "
                        "numbers, so the page shows this text once done arrives).")
    decision_explain: DecisionExplain
    citations: list[Citation] = Field(..., description="The final citations: only the passages the answer cites, "
                                      "in marker order (meta's, sent before an LLM wrote its answer, list every "
                                      "used passage).")
    sources: list[SourceOut] = Field(..., description="The cited sources as meta's, for the final citations.")
    timings: Timings


class FeedbackBody(BaseModel):
    """Body of ``POST /feedback``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    interaction_id: str = Field(..., min_length=1, max_length=64, pattern=r"^[0-9a-f]{32}$",
                                description="From the done (or meta) event of /chat/stream.")
    rating: Literal["up", "down"]
    comment: str | None = Field(None, max_length=2000, description="Why; stored sanitized like questions.")
    expected_answer: str | None = Field(None, max_length=4000,
                                        description="What the answer should have said; becomes must_contain hints.")

    @field_validator("comment", "expected_answer")
    @classmethod
    def _blank_is_none(cls, v: str | None) -> str | None:
        return v if v is None or v.strip() else None


class FeedbackResponse(ResponseModel):
    feedback_id: int
    interaction_id: str
    rating: Literal["up", "down"]
    mode: Mode
    version: str


class TurnOut(ResponseModel):
    interaction_id: str
    question: str = Field(..., description="As stored (sanitized when sanitize.sanitize_questions is on).")
    effective_query: str = Field(..., description="The standalone question retrieval used.")
    mode: Mode
    version: str
    domain: str | None
    created_at: str


class ConversationResponse(ResponseModel):
    conversation_id: str
    turns: list[TurnOut] = Field(..., description="Oldest first (the last 50).")


class ConversationDeleted(ResponseModel):
    conversation_id: str
    deleted_turns: int


class DomainOut(ResponseModel):
    key: str | None = Field(..., description="X-RAG-Domain value; null for the default alias (no header).")
    alias: str = Field(..., description="The alias view it reads (for operators; the page shows title).")
    title: str = Field(..., description="Name for people: the configured title (embeddings.alias.title, "
                       "embeddings.domains.<key>.title), else the key prettified.")
    example_questions: list[str] = Field(..., description="Questions the page offers on an empty conversation.")
    not_served: str | None = Field(None, description="Why it serves nothing yet (the gate refused its version, "
                                   "nothing ingested) and the command that serves it; null when it is served. "
                                   "`/chat` answers it 409 `not_served` with the same reason.")


class DomainsResponse(ResponseModel):
    domains: list[DomainOut] = Field(..., description="The default first, then the configured domains the caller "
                                     "may use.")
