"""The chat page's endpoints in ``/openapi.json``: ``/chat/stream``, ``/feedback``,
``/conversations/{conversation_id}``, ``/domains`` and the page ``/`` itself.
``openapi.build_openapi`` adds these paths and models to its document."""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel

from backend.api.web_models import (
    CONVERSATION_ID_PATTERN,
    ConversationDeleted,
    ConversationResponse,
    DomainsResponse,
    FeedbackBody,
    FeedbackResponse,
    StreamDelta,
    StreamDone,
    StreamMeta,
)

_REF = "#/components/schemas/{model}"

#: (model, mode) pairs for ``models_json_schema``
MODELS: list[tuple[type[BaseModel], Any]] = [
    (StreamMeta, "serialization"), (StreamDelta, "serialization"), (StreamDone, "serialization"),
    (FeedbackBody, "validation"), (FeedbackResponse, "serialization"), (ConversationResponse, "serialization"),
    (ConversationDeleted, "serialization"), (DomainsResponse, "serialization"),
]


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=ref)}}}}


def _errors(errors: dict[str, str], *codes: str, **own: str) -> dict[str, Any]:
    out = {code: _json("ErrorResponse", errors[code]) for code in codes}
    out.update({code: _json("ErrorResponse", text) for code, text in own.items()})
    return out


def _conversation_parameter() -> dict[str, Any]:
    return {"name": "conversation_id", "in": "path", "required": True,
            "schema": {"type": "string", "pattern": CONVERSATION_ID_PATTERN},
            "description": "The conversation_id the client sent with its questions."}


def _sse_event_schema() -> dict[str, Any]:
    """One server-sent event (``event`` + JSON ``data``), as schemathesis and OpenAPI 3.2 read it."""
    kinds = {"meta": "StreamMeta", "delta": "StreamDelta", "done": "StreamDone", "error": "ErrorResponse"}
    return {"oneOf": [
        {"type": "object", "required": ["event", "data"], "properties": {
            "event": {"const": kind},
            "data": {"type": "string", "contentMediaType": "application/json",
                     "contentSchema": {"$ref": _REF.format(model=model)}}}}
        for kind, model in kinds.items()
    ]}


def web_paths(errors: dict[str, str], domain_parameter: Callable[[], dict[str, Any]],
              chat_body_ref: str = "ChatRequestBody") -> dict[str, Any]:
    """The paths object entries; ``errors`` are the shared status descriptions of ``openapi.py``."""
    stream_200 = {
        "description": "Server-sent events: one `meta` (StreamMeta), `delta` events (StreamDelta), then `done` "
                       "(StreamDone); a failure after the stream started arrives as `error` (ErrorResponse).",
        "content": {"text/event-stream": {"schema": _sse_event_schema()}},
        "headers": {"X-Answer-Mode": {"schema": {"type": "string", "enum": ["rag", "hybrid", "fallback"]}},
                    "X-Retrieval-Target": {"schema": {"type": "string"}}},
        "x-events": {"meta": {"$ref": _REF.format(model="StreamMeta")},
                     "delta": {"$ref": _REF.format(model="StreamDelta")},
                     "done": {"$ref": _REF.format(model="StreamDone")},
                     "error": {"$ref": _REF.format(model="ErrorResponse")}},
    }
    json_body = {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model=chat_body_ref)}}}}
    chat_errors = ("400", "401", "403", "409", "413", "415", "422", "500", "502", "503", "504")
    return {
        "/chat/stream": {"post": {
            "summary": "Answer a question as server-sent events (meta, delta..., done).",
            "operationId": "chat_stream", "parameters": [domain_parameter()], "requestBody": json_body,
            "responses": {"200": stream_200, **_errors(errors, *chat_errors)},
        }},
        "/feedback": {"post": {
            "summary": "Thumbs up or down on one answer, optionally with a comment and the expected answer.",
            "operationId": "feedback",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "$ref": _REF.format(model="FeedbackBody")}}}},
            "responses": {"201": _json("FeedbackResponse", "Stored."),
                          **_errors(errors, "400", "401", "413", "415", "422", "500", "503",
                                    **{"404": "No answer with that interaction_id (or, with access control, "
                                              "another principal's)."})},
        }},
        "/conversations/{conversation_id}": {
            "get": {"summary": "The stored turns of a conversation (the caller's own).", "operationId": "conversation",
                    "parameters": [_conversation_parameter()],
                    "responses": {"200": _json("ConversationResponse", "Turns, oldest first (none: an empty list)."),
                                  **_errors(errors, "401", "500", "503",
                                            **{"400": "conversation_id does not match its pattern."})}},
            "delete": {"summary": "Delete a conversation's history (the caller's own).",
                       "operationId": "delete_conversation", "parameters": [_conversation_parameter()],
                       "responses": {"200": _json("ConversationDeleted", "Deleted (0 turns: nothing was stored)."),
                                     **_errors(errors, "401", "500", "503",
                                               **{"400": "conversation_id does not match its pattern."})}},
        },
        "/domains": {"get": {
            "summary": "The domains the caller may ask (the chat page's picker).", "operationId": "domains",
            "responses": {"200": _json("DomainsResponse", "The default alias first, then the configured domains."),
                          **_errors(errors, "401")},
        }},
        "/": {"get": {
            "summary": "The chat page (HTML; it asks for an API key when the server needs one).",
            "operationId": "chat_page", "security": [],
            "responses": {"200": {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}}},
        }},
    }
