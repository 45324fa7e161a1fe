"""``POST /chat``: validate the body, ask the chat service, serialize, set headers."""

from __future__ import annotations

from typing import Any, TypeVar

from flask import Blueprint, Response, current_app, jsonify, request
from pydantic import BaseModel

from backend.api import access
from backend.api.models import ChatRequestBody, ChatResponse
from backend.common.errors import RequestError, RequestTooLarge
from backend.core.metadata_schema import parse_filters
from backend.core.services.chat_service import ChatQuery

bp = Blueprint("chat", __name__)
BodyT = TypeVar("BodyT", bound=BaseModel)
DOMAIN_HEADER = "X-RAG-Domain"


class FieldOutOfRange(RequestError):
    """A field is valid JSON of the right type but outside a configured limit."""

    code = "validation_error"
    http_status = 422


class UnsupportedMediaType(RequestError):
    """The body is not sent as application/json."""

    code = "unsupported_media_type"
    http_status = 415


def parse_body(model: type[BodyT]) -> BodyT:
    """The JSON body as ``model``; 415 unless it is sent as JSON, 400/422 via the error handler."""
    if request.mimetype != "application/json":
        raise UnsupportedMediaType(
            f"Content-Type must be application/json, got {request.mimetype or 'none'!r}", field="Content-Type"
        )
    return model.model_validate_json(request.get_data(cache=False) or b"null")


def chat_query(services: Any) -> ChatQuery:
    """The request's question as a ``ChatQuery`` (``/chat`` and ``/chat/stream`` alike): body
    checked against its model and the configured limits, domain and visibility resolved."""
    server = services.settings.server
    body = parse_body(ChatRequestBody)
    if len(body.question) > server.max_question_chars:
        raise RequestTooLarge(
            f"question has {len(body.question)} characters; server.max_question_chars is {server.max_question_chars}",
            field="question", limit=server.max_question_chars,
        )
    max_top_k = services.settings.retrieval.max_top_k
    if body.top_k is not None and body.top_k > max_top_k:
        raise FieldOutOfRange(f"top_k must be between 1 and {max_top_k}, got {body.top_k}", field="top_k", limit=max_top_k)
    domain = (request.headers.get(DOMAIN_HEADER) or "").strip() or None
    visibility = access.visibility_for(domain)
    return ChatQuery(
        question=body.question, domain=domain, top_k=body.top_k,
        filters=parse_filters(body.raw_filters(), services.settings.retrieval.metadata_schema),
        strategy=body.strategy, conversation_id=body.conversation_id, visibility=visibility,
    )


@bp.post("/chat")
def chat() -> Response:
    services = current_app.extensions["rag"]
    answer = services.chat.answer(chat_query(services))
    payload = ChatResponse.model_validate(answer.to_dict()).model_dump(mode="json")
    response = jsonify(payload)
    response.headers["X-Answer-Mode"] = answer.mode
    response.headers["X-Retrieval-Target"] = answer.decision_explain["retrieval_target"]
    return response
