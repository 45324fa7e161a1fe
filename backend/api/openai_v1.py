"""``POST /v1/chat/completions`` and ``GET /v1/models``: a knowledge base as an OpenAI model.

Each knowledge base is a model id (``kb:default``, ``kb:<domain key>``); the route turns the
OpenAI body into the ``ChatQuery`` of ``/chat`` and calls the same chat service, with the same
principal, ACLs, limits and condensing: the last message is the question, the earlier user
messages are the conversation (``ChatQuery.history``), so a follow-up is condensed as ``/chat``
condenses it. The answer comes back in OpenAI's shape, with the mode in ``X-Answer-Mode`` and in
the extra field ``rag`` (mode, citations, short ``decision_explain``), the citations as numbered
markers in the text followed by a "Sources:" list. Streaming sends ``chat.completion.chunk``
events and ``data: [DONE]``. Clients authenticate with ``Authorization: Bearer <API key or JWT>``
(``access.BEARER_KEY_BLUEPRINTS``); every error under ``/v1`` has OpenAI's error shape.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator, Sequence, cast

from flask import Blueprint, Flask, Response, current_app, g, jsonify, stream_with_context
from flask.blueprints import BlueprintSetupState
from pydantic import ValidationError

from backend.api.runtime import current_runtime
from backend.api import access, errors, signed_assets
from backend.api.chat import parse_body
from backend.api.openai_models import (DEFAULT_MODEL, MODEL_PREFIX, ChatCompletion, ChatCompletionRequest,
                                       ChatMessage, ModelList, ModelOut, RagExtra)
from backend.common.errors import FieldOutOfRange, RagError, UnknownModel
from backend.core.answer_summary import citation_row, numbered_sources, short_explain, word_count
from backend.core.requests import RequestLimits
from backend.core.services.chat_service import ChatAnswer, ChatQuery
from backend.runtime import Runtime
from backend.common.config import Settings

bp = Blueprint("openai_v1", __name__, url_prefix="/v1")
OWNER = "rag-runtime"
#: OpenAI's error ``type`` for each status
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 409: "invalid_request_error", 413: "invalid_request_error",
               415: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error"}


def openai_error(response: Response, status: int, exc: Exception) -> Response:
    """The app's JSON error re-shaped as OpenAI's ``{"error": {message, type, param, code}}``."""
    body = (response.get_json(silent=True) or {}).get("error", {})
    param = None
    if isinstance(exc, RagError):
        param = exc.context.get("field")
    elif isinstance(exc, ValidationError) and isinstance(body.get("details"), list) and body["details"]:
        param = body["details"][0].get("field")
    shaped = jsonify({"error": {"message": body.get("message", "error"),
                                "type": ERROR_TYPES.get(status, "server_error" if status >= 500 else
                                                        "invalid_request_error"),
                                "param": param, "code": body.get("code")}})
    for name, value in response.headers.items():
        if name not in ("Content-Type", "Content-Length"):
            shaped.headers[name] = value
    return shaped


@bp.record_once
def _register_shaper(state: BlueprintSetupState) -> None:
    errors.add_shaper(cast(Flask, state.app), "/v1/", openai_error)


def model_id(domain: str | None) -> str:
    return DEFAULT_MODEL if domain is None else MODEL_PREFIX + domain


def available_models(services: Runtime) -> list[ModelOut]:
    """The knowledge bases the caller may use, as models (all of them without access control)."""
    principal = access.current_principal()
    embeddings = services.settings.embeddings
    out = []
    for domain in (None, *sorted(services.chat.routing.domains)):
        if principal is not None and not principal.may_use(domain):
            continue
        configured = embeddings.domains.get(domain) if domain is not None else embeddings.alias
        title = getattr(configured, "title", None) if configured is not None else None
        out.append(ModelOut(id=model_id(domain), created=0, owned_by=OWNER, title=title or None))
    return out


def domain_of(services: Runtime, model: str) -> str | None:
    """The domain a model id names; ``UnknownModel`` (404) naming the models the caller may use."""
    key = model[len(MODEL_PREFIX):] if model.startswith(MODEL_PREFIX) else None
    domain = None if key == "default" else key
    if key is not None and (domain is None or domain in services.chat.routing.domains):
        principal = access.current_principal()
        if principal is None or principal.may_use(domain):
            return domain
    known = [m.id for m in available_models(services)]
    raise UnknownModel(f"model {model[:100]!r} is not a knowledge base you may use; models: {', '.join(known) or '(none)'}"
                       " (GET /v1/models)", field="model", known_models=known)


def conversation(messages: Sequence[ChatMessage], limits: RequestLimits) -> tuple[str, tuple[str, ...]]:
    """The question (the last message, a user's) and the earlier user messages, oldest first."""
    last = messages[-1]
    question = last.text().strip()
    if last.role != "user" or not question:
        raise FieldOutOfRange(f"messages: the last message must be a user message with text, got role {last.role!r}"
                              + ("" if question else " without text"), field="messages")
    limits.text(question, field="messages")
    history = tuple(m.text().strip() for m in messages[:-1] if m.role == "user" and m.text().strip())
    return question, history


def _query(services: Runtime, body: ChatCompletionRequest) -> ChatQuery:
    question, history = conversation(body.messages, RequestLimits.from_settings(services.settings))
    domain = domain_of(services, body.model)
    g.rag_model_domain = domain  # the audit line names the knowledge base
    return ChatQuery(question=question, domain=domain, visibility=access.visibility_for(domain), history=history)


def _who() -> str | None:
    principal = access.current_principal()
    return principal.name if principal is not None else None


def rag_extra(answer: ChatAnswer, settings: Settings) -> RagExtra:
    who = _who()
    body = answer.to_dict()
    citations = [citation_row(c, signed_assets.asset_url(settings, c["image_ref"], principal=who)
                              if c.get("image_ref") else None) for c in body["citations"]]
    return RagExtra.model_validate({"mode": answer.mode, "interaction_id": answer.interaction_id,
                                    "citations": citations,
                                    "decision_explain": short_explain(body["decision_explain"])})


def _sources_suffix(extra: RagExtra) -> str:
    listed = numbered_sources([c.model_dump() for c in extra.citations])
    return f"\n\nSources:\n{listed}" if listed else ""


def _usage(body: ChatCompletionRequest, content: str) -> dict[str, int]:
    prompt = word_count(m.text() for m in body.messages)
    completion = word_count([content])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@bp.get("/models")
def models() -> Response:
    return jsonify(ModelList(data=available_models(current_runtime())).model_dump(mode="json"))


@bp.get("/models/<path:model>")
def model(model: str) -> Response:
    services = current_runtime()
    domain = domain_of(services, model)
    return jsonify(next(m for m in available_models(services) if m.id == model_id(domain)).model_dump(mode="json"))


@bp.post("/chat/completions")
def chat_completions() -> Response:
    services = current_runtime()
    body = parse_body(ChatCompletionRequest)
    query = _query(services, body)
    if body.stream:
        return _stream(services, body, query)
    answer = services.chat.answer(query)
    extra = rag_extra(answer, services.settings)
    content = answer.answer + _sources_suffix(extra)
    completion = ChatCompletion.model_validate({
        "id": f"chatcmpl-{answer.interaction_id}", "created": int(time.time()), "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": _usage(body, content), "rag": extra.model_dump(mode="json")})
    response = jsonify(completion.model_dump(mode="json"))
    response.headers["X-Answer-Mode"] = answer.mode
    response.headers["X-Retrieval-Target"] = answer.decision_explain["retrieval_target"]
    return response


def _chunk(cid: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None,
           **extra: Any) -> str:
    payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def _stream(services: Runtime, body: ChatCompletionRequest, query: ChatQuery) -> Response:
    """``chat.completion.chunk`` events: the role, the answer's pieces, the sources, then a chunk with
    ``finish_reason`` and ``rag``; with ``stream_options.include_usage`` a usage chunk; ``[DONE]``.
    Routing, search and the decision run before the response starts (their errors keep their status);
    a failure after that arrives as ``data: {"error": ...}``."""
    events = services.chat.stream(query)
    first_name, first = next(events)
    g.rag_answer_version = first.decision_explain["version"]  # the audit line names the version
    created, model = int(time.time()), body.model
    cid = f"chatcmpl-{first.interaction_id}"
    include_usage = body.stream_options is not None and body.stream_options.include_usage

    def chunks() -> Iterator[str]:
        name, payload = first_name, first
        pieces: list[str] = []
        yield _chunk(cid, created, model, {"role": "assistant", "content": ""})
        try:
            while True:
                if name == "delta":
                    pieces.append(payload)
                    yield _chunk(cid, created, model, {"content": payload})
                elif name == "done":
                    extra = rag_extra(payload, services.settings)
                    suffix = _sources_suffix(extra)
                    if suffix:
                        pieces.append(suffix)
                        yield _chunk(cid, created, model, {"content": suffix})
                    yield _chunk(cid, created, model, {}, "stop", rag=extra.model_dump(mode="json"))
                    if include_usage:
                        payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                                   "choices": [], "usage": _usage(body, "".join(pieces))}
                        yield f"data: {json.dumps(payload)}\n\n"
                name, payload = next(events)
        except StopIteration:
            yield "data: [DONE]\n\n"
        except Exception as exc:  # noqa: BLE001 - every failure mid-stream becomes an error event
            response = current_app.make_response(current_app.handle_user_exception(exc))
            yield f"data: {json.dumps(response.get_json(silent=True))}\n\n"

    response = Response(stream_with_context(chunks()), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    response.headers["X-Answer-Mode"] = first.mode
    response.headers["X-Retrieval-Target"] = first.decision_explain["retrieval_target"]
    return response


