"""``/openapi.json``: an OpenAPI 3.1 document generated from the pydantic models.

OpenAPI 3.1 schemas are JSON Schema 2020-12, which is what pydantic emits, so
the component schemas are the models' own. Limits that come from config
(``max_question_chars``, ``max_top_k``, the known domains, whether API keys are
required) are written into the document when the app is built, so it describes
this server as configured.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from backend.api.models import ChatRequestBody, ChatResponse, ErrorResponse, HealthResponse, ReadyResponse
from backend.common.config import Settings

bp = Blueprint("openapi", __name__)
EXTENSION = "rag_openapi"
_REF = "#/components/schemas/{model}"
_ERRORS = {
    "400": "Malformed JSON, bad request field, or unknown X-RAG-Domain (details.known_domains).",
    "401": "API keys are configured and X-API-Key is missing or wrong.",
    "413": "Body over server.max_body_bytes, or question over server.max_question_chars.",
    "409": "The alias serves a version of another embedding model or distance.",
    "415": "Content-Type is not application/json.",
    "422": "JSON of the wrong shape: missing or unknown field, wrong type, value out of range.",
    "500": "Unexpected server error (details only in the server log).",
    "502": "The answer provider failed.",
    "503": "Store, alias or provider unavailable.",
    "504": "The answer provider timed out.",
}


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=ref)}}}}


def _apply_limits(schemas: dict[str, Any], settings: Settings) -> None:
    props = schemas["ChatRequestBody"]["properties"]
    props["question"]["maxLength"] = settings.server.max_question_chars
    for branch in props["top_k"]["anyOf"]:
        if branch.get("type") == "integer":
            branch["maximum"] = settings.retrieval.max_top_k


def _chat_operation(settings: Settings) -> dict[str, Any]:
    domains = sorted(settings.embeddings.domains)
    responses: dict[str, Any] = {
        "200": {
            **_json("ChatResponse", "The answer, its mode and why it was chosen."),
            "headers": {
                "X-Answer-Mode": {"schema": {"type": "string", "enum": ["rag", "hybrid", "fallback"]}},
                "X-Retrieval-Target": {"schema": {"type": "string"}, "description": "Alias (or version) queried."},
            },
        }
    }
    responses.update({code: _json("ErrorResponse", text) for code, text in _ERRORS.items()})
    domain_schema: dict[str, Any] = {"type": "string", "enum": domains} if domains else {"type": "string"}
    return {
        "summary": "Answer a question from the knowledge base (mode rag, hybrid or fallback).",
        "operationId": "chat",
        "parameters": [{
            "name": "X-RAG-Domain", "in": "header", "required": False, "schema": domain_schema,
            "description": "Route retrieval to embeddings.domains.<key>.alias_name; omitted: embeddings.alias.name.",
        }],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model="ChatRequestBody")}}}},
        "responses": responses,
    }


def build_openapi(settings: Settings) -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Any]] = [
        (ChatRequestBody, "validation"), (ChatResponse, "serialization"), (ErrorResponse, "serialization"),
        (HealthResponse, "serialization"), (ReadyResponse, "serialization"),
    ]
    _, defs = models_json_schema(models, ref_template=_REF)
    schemas = defs["$defs"]
    _apply_limits(schemas, settings)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "RAG runtime chat API", "version": "1.0.0",
                 "description": "Answers with an explained mode: rag, hybrid or fallback. See docs/CHAT_API.md."},
        "paths": {
            "/chat": {"post": _chat_operation(settings)},
            "/healthz": {"get": {"summary": "Liveness", "operationId": "healthz", "security": [],
                                 "responses": {"200": _json("HealthResponse", "The process answers.")}}},
            "/readyz": {"get": {"summary": "Readiness: store, aliases, model", "operationId": "readyz", "security": [],
                                "responses": {"200": _json("ReadyResponse", "Ready."),
                                              "503": _json("ReadyResponse", "Not ready; failed checks say why.")}}},
            "/metrics": {"get": {"summary": "Prometheus metrics", "operationId": "metrics", "security": [],
                                 "responses": {"200": {"description": "Prometheus text format",
                                                       "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
        },
        "components": {"schemas": schemas},
    }
    if settings.server.api_keys:
        doc["components"]["securitySchemes"] = {"ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
        doc["security"] = [{"ApiKey": []}]
    return doc


@bp.get("/openapi.json")
def openapi_document() -> Response:
    return jsonify(current_app.extensions[EXTENSION])


def init_app(app: Flask, settings: Settings) -> None:
    app.extensions[EXTENSION] = build_openapi(settings)
    app.register_blueprint(bp)
