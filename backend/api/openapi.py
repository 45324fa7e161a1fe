"""``/openapi.json``: an OpenAPI 3.1 document generated from the pydantic models.

OpenAPI 3.1 schemas are JSON Schema 2020-12, which is what pydantic emits, so
the component schemas are the models' own. Limits that come from config
(``max_question_chars``, ``max_top_k``, the known domains, whether API keys are
required) are written into the document when the app is built, so it describes
this server as configured.
"""

from __future__ import annotations

import copy
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from backend.api import openai_models, openapi_admin, openapi_web
from backend.api.disclosure import caller_may_see_names, domains_of_caller
from backend.api.models import ChatRequestBody, ChatResponse, ErrorResponse, HealthResponse, ReadyResponse
from backend.api.request_schema import IMAGE_REF_PATTERN, NON_BLANK, filters_schema
from backend.api.search import SearchParams, SearchResponse
from backend.common.config import Settings
from backend.core.requests import RequestLimits

bp = Blueprint("openapi", __name__)
EXTENSION = "rag_openapi"
_REF = "#/components/schemas/{model}"
_ERRORS = {
    "400": "Malformed JSON, bad request field, or unknown X-RAG-Domain (details.known_domains).",
    "401": "API keys are configured and X-API-Key is missing or wrong; with access control, no principal "
           "(unknown key, bad or expired bearer token).",
    "403": "Access control: the principal may not use the requested X-RAG-Domain.",
    "413": "Body over server.max_body_bytes, or question over server.max_question_chars.",
    "409": "The alias serves a version of another embedding model or distance; or code `not_served`: the knowledge "
           "base serves no version yet (the message gives the reason and the command that serves it).",
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
    """The limits the request models check (``RequestLimits``), written into their schemas."""
    limits = RequestLimits.from_settings(settings)
    props = schemas["ChatRequestBody"]["properties"]
    props["question"]["maxLength"] = limits.max_question_chars
    props["question"]["pattern"] = NON_BLANK
    props["filters"] = {**filters_schema(settings), "default": {}}
    for branch in props["top_k"]["anyOf"]:
        if branch.get("type") == "integer":
            branch["maximum"] = limits.max_top_k


def _chat_operation(settings: Settings) -> dict[str, Any]:
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
    return {
        "summary": "Answer a question from the knowledge base (mode rag, hybrid or fallback).",
        "operationId": "chat",
        "parameters": [_domain_parameter(settings)],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model="ChatRequestBody")}}}},
        "responses": responses,
    }


def _domain_parameter(settings: Settings) -> dict[str, Any]:
    domains = sorted(settings.embeddings.domains)
    return {"name": "X-RAG-Domain", "in": "header", "required": False,
            "schema": {"type": "string", "enum": domains} if domains else {"type": "string"},
            "description": "Route retrieval to embeddings.domains.<key>.alias_name; omitted: embeddings.alias.name."}


def _search_operation(settings: Settings) -> dict[str, Any]:
    schema = SearchParams.model_json_schema()
    limits = RequestLimits.from_settings(settings)
    parameters = [_domain_parameter(settings)]
    for name, prop in schema["properties"].items():
        prop = dict(prop)
        description = prop.pop("description", "")
        prop.pop("title", None)
        presets = [p.name for p in settings.retrieval.presets]
        required = False
        if name in ("preset", "value") and not presets:
            continue  # nothing to name: the parameters exist only with configured presets
        if name == "top_k":
            prop = {"type": "integer", "minimum": 1, "maximum": limits.max_top_k}
        elif name == "q":
            prop = {"type": "string", "maxLength": limits.max_question_chars, "pattern": NON_BLANK}
            required = not presets  # with presets, q may be left to a preset's template
        elif name == "preset":
            prop = {"type": "string", "enum": presets}
        elif name == "filters":
            parameters.append({"name": name, "in": "query", "required": False, "description": description,
                               "content": {"application/json": {"schema": filters_schema(settings)}}})
            continue
        parameters.append({"name": name, "in": "query", "required": required, "schema": prop,
                           "description": description})
    codes = ("400", "401", "403", "413", "409", "422", "500", "503")
    return {
        "summary": "Retrieval only: ranked chunks with dense, lexical and fused scores, no answer.",
        "operationId": "search",
        "parameters": parameters,
        "responses": {"200": {**_json("SearchResponse", "The hits, best first."),
                              "headers": {"X-Retrieval-Target": {"schema": {"type": "string"}}}},
                      **{code: _json("ErrorResponse", _ERRORS[code]) for code in codes}},
    }


_PRESETS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["presets", "filterable_fields"],
    "properties": {
        "presets": {"type": "array", "items": {
            "type": "object", "required": ["name", "description", "filter_field", "query_template", "parameters"],
            "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                           "filter_field": {"type": ["string", "null"]}, "query_template": {"type": "string"},
                           "parameters": {"type": "object", "description": "Parameter name -> JSON-Schema-like spec."}},
        }},
        "filterable_fields": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"type": {"type": "string"},
                                             "values": {"type": "array", "items": {"type": "string"}}}}},
    },
}

_ASSET_OPERATION: dict[str, Any] = {
    "summary": "A figure image written by the DOCX loader, by the image_ref of its figure chunk.",
    "operationId": "asset",
    "parameters": [{"name": "image_ref", "in": "path", "required": True,
                    "schema": {"type": "string", "pattern": IMAGE_REF_PATTERN, "maxLength": 512},
                    "description": "Relative path under docx.assets_dir, e.g. '<doc>/img_001.png'."}],
    "responses": {
        "200": {"description": "The image, with its content type and a script-blocking Content-Security-Policy.",
                "content": {"image/*": {"schema": {"type": "string", "format": "binary"}}}},
        "400": _json("ErrorResponse", "image_ref is absolute, has '..', '.', empty segments, a backslash or NUL."),
        "401": _json("ErrorResponse", _ERRORS["401"]),
        "403": _json("ErrorResponse", _ERRORS["403"]),
        "404": _json("ErrorResponse", "No asset at that reference (or it resolves outside the assets dir), or, with "
                     "access control, a figure no chunk the principal may see cites."),
    },
}


def _openai_error(description: str) -> dict[str, Any]:
    return _json("OpenAIError", description)


def _v1_paths(settings: Settings) -> dict[str, Any]:
    """``/v1``: OpenAI's shapes (docs/OPENAI_API.md); every error is ``OpenAIError``."""
    errors = {code: _openai_error(_ERRORS[code]) for code in ("400", "401", "403", "413", "415", "422", "500", "503")}
    errors["404"] = _openai_error("The model names no knowledge base the caller may use (code model_not_found).")
    request_schema = {"$ref": _REF.format(model="ChatCompletionRequest")}
    return {
        "/v1/chat/completions": {"post": {
            "summary": "A knowledge base as an OpenAI chat model: the /chat answer in OpenAI's shape (or streamed as "
                       "chat.completion.chunk events), with the extra field rag.",
            "operationId": "openai_chat_completions",
            "requestBody": {"required": True, "content": {"application/json": {"schema": request_schema}}},
            "responses": {"200": {"description": "The completion; with stream: true, text/event-stream chunks ending "
                                                 "with data: [DONE].",
                                  "headers": {"X-Answer-Mode": {"schema": {"type": "string",
                                                                           "enum": ["rag", "hybrid", "fallback"]}}},
                                  "content": {"application/json": {"schema": {"$ref": _REF.format(
                                      model="ChatCompletion")}},
                                      "text/event-stream": {"schema": {"type": "string"}}}},
                          **errors}}},
        "/v1/models": {"get": {
            "summary": "The knowledge bases the caller may use, as model ids.", "operationId": "openai_models",
            "responses": {"200": _json("ModelList", "kb:default and kb:<domain> for each domain the caller may use "
                                                    "(the names are the caller's to learn, not the schema's)."),
                          "401": _openai_error(_ERRORS["401"])}}},
    }


#: operations the rate limit never applies to (probes, the scraper)
_UNLIMITED = frozenset({"healthz", "readyz", "metrics"})


def _add_rate_limit_responses(doc: dict[str, Any], settings: Settings) -> None:
    """Every limited operation may answer 429 (``server.rate_limit``, ``quotas``), whoever defined it;
    under ``/v1`` in OpenAI's error shape."""
    if not (settings.server.rate_limit.enabled or settings.quotas.enabled):
        return
    for path, operations in doc["paths"].items():
        for operation in operations.values():
            if operation.get("operationId") not in _UNLIMITED:
                operation["responses"].setdefault("429", {
                    **_json("OpenAIError" if path.startswith("/v1/") else "ErrorResponse",
                            "Over server.rate_limit.limit for this client, or over the principal's quota (quotas); "
                            "retry after Retry-After."),
                    "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}})


def build_openapi(settings: Settings) -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Any]] = [
        (ChatRequestBody, "validation"), (ChatResponse, "serialization"), (ErrorResponse, "serialization"),
        (HealthResponse, "serialization"), (ReadyResponse, "serialization"), (SearchResponse, "serialization"),
        *openapi_web.MODELS, *openapi_admin.MODELS, *openai_models.MODELS,
    ]
    _, defs = models_json_schema(models, ref_template=_REF)
    schemas = defs["$defs"]
    _apply_limits(schemas, settings)
    openapi_admin.apply_admin_limits(schemas, settings.knowledge_bases.max_files_per_upload)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "RAG runtime chat API", "version": "1.0.0",
                 "description": "Answers with an explained mode: rag, hybrid or fallback. See docs/CHAT_API.md."},
        "paths": {
            "/chat": {"post": _chat_operation(settings)},
            "/search": {"get": _search_operation(settings)},
            "/search/presets": {"get": {"summary": "Named search presets, callable as agent tools", "operationId":
                                        "search_presets", "responses": {"200": {
                                            "description": "Presets with their parameters, and the filterable fields.",
                                            "content": {"application/json": {"schema": _PRESETS_SCHEMA}}},
                                            "401": _json("ErrorResponse", _ERRORS["401"])}}},
            "/assets/{image_ref}": {"get": _ASSET_OPERATION},
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
    doc["paths"].update(openapi_web.web_paths(_ERRORS, lambda: _domain_parameter(settings)))
    doc["paths"].update(_v1_paths(settings))
    if settings.admin.enabled:
        doc["paths"].update(openapi_admin.admin_paths(_ERRORS))
    _add_rate_limit_responses(doc, settings)
    if settings.server.api_keys or settings.access.enabled:
        doc["components"]["securitySchemes"] = {"ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
        doc["security"] = [{"ApiKey": []}]
        if settings.access.enabled and settings.access.jwt.enabled:
            doc["components"]["securitySchemes"]["Bearer"] = {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
            doc["security"].append({"Bearer": []})
    return doc


#: parameters whose allowed values name the deployment (domains, presets): listed to known callers only
_NAMING_PARAMETERS = frozenset({"X-RAG-Domain", "preset"})


def public_document(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the domain and preset names (``disclosure``): those parameters become
    plain strings for a caller without a credential."""
    public = copy.deepcopy(doc)
    for operations in public["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("name") in _NAMING_PARAMETERS and "schema" in parameter:
                    parameter["schema"] = {"type": "string"}
    return public


def only_domains(doc: dict[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """``doc`` whose ``X-RAG-Domain`` lists only the domains in ``allowed`` (pure): a principal
    learns no domain it may not use (issue 49 L6)."""
    out = copy.deepcopy(doc)
    for operations in out["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                enum = parameter.get("schema", {}).get("enum")
                if parameter.get("name") == "X-RAG-Domain" and enum is not None:
                    kept = [d for d in enum if d in allowed]
                    parameter["schema"] = {"type": "string", "enum": kept} if kept else {"type": "string"}
    return out


@bp.get("/openapi.json")
def openapi_document() -> Response:
    full, public = current_app.extensions[EXTENSION]
    if not caller_may_see_names():
        return jsonify(public)
    allowed = domains_of_caller()
    return jsonify(full if allowed is None else only_domains(full, allowed))


def init_app(app: Flask, settings: Settings) -> None:
    doc = build_openapi(settings)
    app.extensions[EXTENSION] = (doc, public_document(doc))
    app.register_blueprint(bp)
