"""``POST /chat``: validate the body, ask the chat service, serialize, set headers."""

from __future__ import annotations

from typing import TypeVar

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel

from backend.api.runtime import current_runtime
from backend.api import access
from backend.api.models import ChatRequestBody, ChatResponse
from backend.common.errors import KnowledgeBaseNotServed, UnsupportedMediaType
from backend.core.metadata_schema import parse_filters
from backend.core.requests import RequestLimits
from backend.core.services.chat_service import ChatQuery
from backend.runtime import Runtime
from backend.core.services.version_status import not_served_reason
from backend.core.versions import VersionNaming

bp = Blueprint("chat", __name__)
BodyT = TypeVar("BodyT", bound=BaseModel)
DOMAIN_HEADER = "X-RAG-Domain"


def parse_body(model: type[BodyT], limits: RequestLimits | None = None) -> BodyT:
    """The JSON body as ``model``, checked once: 415 unless it is sent as JSON, 400/422 via the
    error handler, and the configured ``limits`` when the model checks them (``ChatRequestBody``)."""
    if request.mimetype != "application/json":
        raise UnsupportedMediaType(
            f"Content-Type must be application/json, got {request.mimetype or 'none'!r}", field="Content-Type"
        )
    context = {"limits": limits} if limits is not None else None
    return model.model_validate_json(request.get_data(cache=False) or b"null", context=context)


def chat_query(services: Runtime) -> ChatQuery:
    """The request's question as a ``ChatQuery`` (``/chat`` and ``/chat/stream`` alike): the body
    checked once against its model and the configured limits, domain and visibility resolved;
    the chat service trusts it."""
    body = parse_body(ChatRequestBody, RequestLimits.from_settings(services.settings))
    domain = (request.headers.get(DOMAIN_HEADER) or "").strip() or None
    visibility = access.visibility_for(domain)  # first: a caller who may not use it learns nothing of its state
    served_or_409(services, domain)
    return ChatQuery(
        question=body.question, domain=domain, top_k=body.top_k,
        filters=parse_filters(body.raw_filters(), services.settings.retrieval.metadata_schema),
        strategy=body.strategy, conversation_id=body.conversation_id, visibility=visibility,
    )


def served_or_409(services: Runtime, domain: str | None) -> None:
    """``KnowledgeBaseNotServed`` (409, the reason and the command that serves it) when the
    knowledge base's alias serves nothing: asking again will not help, so never a 503."""
    settings = services.settings
    reason = not_served_reason(services.stores.admin, settings.embeddings,
                               VersionNaming(settings.ingest.version_name_template), domain)
    if reason is not None:
        name = domain or "the default knowledge base"
        raise KnowledgeBaseNotServed(f"{name} is not served yet: {reason}", domain=domain, reason=reason)


@bp.post("/chat")
def chat() -> Response:
    services = current_runtime()
    answer = services.chat.answer(chat_query(services))
    payload = ChatResponse.model_validate(answer.to_dict()).model_dump(mode="json")
    response = jsonify(payload)
    response.headers["X-Answer-Mode"] = answer.mode
    response.headers["X-Retrieval-Target"] = answer.decision_explain["retrieval_target"]
    return response
