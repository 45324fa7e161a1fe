"""Request and response bodies of ``/v1/chat/completions`` and ``/v1/models`` (docs/OPENAI_API.md).

The shapes are OpenAI's, so any OpenAI client, chat front end or evaluation harness talks to a
knowledge base as to a model. Unlike the rest of the API the request is lenient: OpenAI clients
send parameters this runtime does not use (``temperature``, ``max_tokens``, ``tools``...), and
refusing them would refuse the clients; they are accepted and ignored (the list is in the docs).
What the runtime adds is one documented extra field, ``rag``: the answer mode, the citations and a
short ``decision_explain``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.api.models import Mode

#: prefix of every model id: ``kb:handbook`` is the knowledge base (domain) ``handbook``
MODEL_PREFIX = "kb:"
#: the default knowledge base (no ``X-RAG-Domain``) as a model id
DEFAULT_MODEL = "kb:default"
#: request parameters OpenAI defines that are accepted and have no effect here (docs/OPENAI_API.md)
IGNORED_PARAMETERS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "presence_penalty",
                      "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "seed", "tools", "tool_choice",
                      "parallel_tool_calls", "response_format", "user", "metadata", "store", "service_tier",
                      "reasoning_effort", "modalities", "audio", "prediction")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class ContentPart(_Lenient):
    type: str = Field(..., description="Only 'text' parts are read; others are ignored.")
    text: str | None = None


class ChatMessage(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = Field(None, description="Text, or a list of parts of which the "
                                                    "'text' ones are read.")

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content or [] if p.type == "text" and p.text)


class StreamOptions(_Lenient):
    include_usage: bool = Field(False, description="Send one last chunk with usage (and no choices) before [DONE].")


class ChatCompletionRequest(_Lenient):
    """Body of ``POST /v1/chat/completions``. Honoured: model, messages, stream,
    stream_options.include_usage, n (1 only); every other OpenAI parameter is ignored."""

    model: str = Field(..., min_length=1, description="A knowledge base: 'kb:default' or 'kb:<domain key>' "
                       "(GET /v1/models lists those the caller may use).")
    messages: list[ChatMessage] = Field(..., min_length=1, description="The conversation; the last message is the "
                                        "question (role user), earlier user messages are the conversation its "
                                        "follow-ups are condensed against, as /chat does.")
    stream: bool | None = Field(False, description="Answer as server-sent chunks (chat.completion.chunk).")
    stream_options: StreamOptions | None = None
    n: int | None = Field(1, ge=1, le=1, description="Only 1 completion per request.")


class CompletionMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int
    message: CompletionMessage
    finish_reason: Literal["stop"]


class Usage(BaseModel):
    prompt_tokens: int = Field(..., description="Words (whitespace-separated) of the messages: no tokenizer here.")
    completion_tokens: int = Field(..., description="Words of the answer.")
    total_tokens: int


class CitationOut(BaseModel):
    marker: str | None = Field(..., description="'[n]' as in the answer text; null for a figure.")
    chunk_id: str
    doc_id: str
    source: str
    section: str | None
    page: str | None
    score: float
    chunk_type: str
    image_url: str | None = Field(None, description="A figure's image link (signed when keys are on).")


class RagExtra(BaseModel):
    """The documented extra field ``rag`` of a completion (and of the last streamed chunk)."""

    mode: Mode
    interaction_id: str
    citations: list[CitationOut]
    decision_explain: dict[str, Any] = Field(..., description="The short explanation: mode, reasons, "
                                             "max_similarity, effective_query, condensed_by, retrieval_target, "
                                             "version, domain, strategy, used_llm, answered_by.")


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    rag: RagExtra


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = Field(..., description="Always 'rag-runtime'.")
    title: str | None = Field(None, description="The knowledge base's title (extra field).")


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


class OpenAIErrorBody(BaseModel):
    message: str
    type: str = Field(..., description="invalid_request_error, authentication_error, permission_error, "
                      "not_found_error, rate_limit_error or server_error.")
    param: str | None
    code: str | None


class OpenAIError(BaseModel):
    error: OpenAIErrorBody


MODELS: list[tuple[type[BaseModel], Any]] = [
    (ChatCompletionRequest, "validation"), (ChatCompletion, "serialization"), (ModelList, "serialization"),
    (OpenAIError, "serialization"),
]
