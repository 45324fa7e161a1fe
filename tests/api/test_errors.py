"""Bad requests get a 4xx JSON error and the server keeps serving."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import load_settings
from backend.common.errors import ConfigError
from tests.api.corpus import RAG_QUESTION, Corpus, corpus_settings
from tests.conftest import REPO


def _raw(client: FlaskClient, data: bytes | str, content_type: str = "application/json", **kw: Any) -> Any:
    return client.post("/chat", data=data, content_type=content_type, **kw)


@pytest.mark.parametrize(
    ("data", "content_type", "status", "code", "message"),
    [
        pytest.param('{"question": "leave?"', "application/json", 400, "invalid_json", "request body is not valid JSON",
                     id="truncated_json"),
        pytest.param("", "application/json", 422, "validation_error", "(body)", id="empty_body"),
        pytest.param('["a list"]', "application/json", 422, "validation_error", "(body)", id="json_array_body"),
        pytest.param('{"question": 42}', "application/json", 422, "validation_error", "question: Input should be a valid string",
                     id="question_wrong_type"),
        pytest.param('{"question": "x", "top_k": "5"}', "application/json", 422, "validation_error",
                     "top_k: Input should be a valid integer", id="top_k_string_is_not_coerced"),
        pytest.param('{"question": "x", "top_k": 0}', "application/json", 422, "validation_error",
                     "top_k: Input should be greater than or equal to 1", id="top_k_zero"),
        pytest.param('{"question": "x", "top_k": 51}', "application/json", 422, "validation_error",
                     "top_k must be between 1 and 50, got 51", id="top_k_over_max_top_k"),
        pytest.param('{"top_k": 3}', "application/json", 422, "validation_error", "question: Field required",
                     id="question_missing"),
        pytest.param('{"question": "   "}', "application/json", 422, "validation_error", "question must contain text",
                     id="question_blank"),
        pytest.param('{"question": "x", "colour": "red"}', "application/json", 422, "validation_error",
                     "colour: Extra inputs are not permitted", id="unknown_field"),
        pytest.param('{"question": "x", "strategy": "hybrid"}', "application/json", 422, "validation_error",
                     "strategy: Input should be 'dense', 'lexical', 'fusion', 'hyde', 'hyde_fusion', 'hierarchical' or 'enriched_fusion'", id="answer_mode_is_not_a_strategy"),
        pytest.param('{"question": "x", "filters": {"bad field": "v"}}', "application/json", 400, "bad_request",
                     "filters: 'bad field' is not a valid field name", id="filter_field_not_identifier"),
        pytest.param('{"question": "x", "filters": {"colour": "red"}}', "application/json", 400, "bad_request",
                     "filters: unknown field 'colour'; filterable fields: chunk_type, doc_id", id="filter_field_unknown"),
        pytest.param('{"question": "x", "filters": {"doc_id": {"near": "x"}}}', "application/json", 422,
                     "validation_error", "Extra inputs are not permitted", id="filter_operator_unknown"),
        pytest.param(json.dumps({"question": "x", "conversation_id": "c" * 129}), "application/json", 422,
                     "validation_error", "conversation_id: String should have at most 128 characters",
                     id="conversation_id_too_long"),
        pytest.param("question=x", "application/x-www-form-urlencoded", 415, "unsupported_media_type",
                     "Content-Type must be application/json, got 'application/x-www-form-urlencoded'", id="form_body"),
        pytest.param(json.dumps({"question": "q" * 5000}), "application/json", 413, "request_too_large",
                     "question has 5000 characters; server.max_question_chars is 4000", id="question_over_max_chars"),
        pytest.param(json.dumps({"question": "q" * 1_000_000}), "application/json", 413, "request_too_large",
                     "request body exceeds server.max_body_bytes (65536 bytes)", id="one_megabyte_question"),
    ],
)
def test_malformed_request_gets_json_error_and_server_keeps_serving(
    client: FlaskClient, data: str, content_type: str, status: int, code: str, message: str
) -> None:
    resp = _raw(client, data, content_type)
    assert resp.status_code == status
    error = resp.get_json()["error"]
    assert error["code"] == code
    assert message in error["message"]
    good = client.post("/chat", json={"question": RAG_QUESTION})
    assert good.status_code == 200 and good.headers["X-Answer-Mode"] == "rag"


def test_validation_error_lists_each_field(client: FlaskClient) -> None:
    resp = _raw(client, '{"question": 1, "top_k": "x"}')
    details = resp.get_json()["error"]["details"]
    assert [(d["field"], d["type"]) for d in details] == [("question", "string_type"), ("top_k", "int_type")]


def test_unknown_route_and_wrong_method_are_json(client: FlaskClient) -> None:
    missing = client.get("/nope")
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "not_found"
    wrong = client.get("/chat")
    assert wrong.status_code == 405 and wrong.get_json()["error"]["code"] == "method_not_allowed"


def test_unexpected_error_is_generic_500_without_details(corpus: Corpus, embedder: Any) -> None:
    class Broken:
        name = "broken"

        def generate(self, request: Any) -> str:
            raise ZeroDivisionError("secret internals")

    services = build_services(corpus.settings, store=corpus.store, embedder=embedder, primary=Broken())
    client = create_app(corpus.settings, services).test_client()
    resp = client.post("/chat", json={"question": RAG_QUESTION})
    assert resp.status_code == 500
    rid = resp.headers["X-Request-ID"]
    assert resp.get_json() == {"error": {"code": "internal_error", "request_id": rid, "message":
                                         f"internal server error; the details are in the server log under request id {rid}"}}
    assert "secret" not in resp.get_data(as_text=True)


def test_unreachable_answer_provider_is_503_json(corpus: Corpus, embedder: Any) -> None:
    from backend.common.config import ChatProviderSettings
    from backend.providers.openai_compat.chat import OpenAICompatChatModel

    down = OpenAICompatChatModel(ChatProviderSettings(provider="openai_compat", base_url="http://127.0.0.1:1/v1",
                                                      model="m", timeout_s=2))
    services = build_services(corpus.settings, store=corpus.store, embedder=embedder, primary=down)
    client = create_app(corpus.settings, services).test_client()
    before = corpus.store.count_interactions()
    resp = client.post("/chat", json={"question": RAG_QUESTION})
    assert resp.status_code == 503
    error = resp.get_json()["error"]
    assert error["code"] == "provider_unavailable"
    assert error["message"].startswith("a backend is unavailable; try again later; the details are in the server log")
    assert "127.0.0.1" not in error["message"]  # the endpoint is in the log only (test_http_hardening)
    assert corpus.store.count_interactions() == before


# --- API keys -----------------------------------------------------------------------------
@pytest.fixture
def keyed_app(corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Any) -> Flask:
    """API keys come from RAG_SERVER__API_KEYS, comma separated, as in production."""
    base = corpus_settings(corpus.path)
    settings = load_settings(
        REPO / "config" / "rag.yaml",
        overrides=base.model_dump(mode="json", exclude={"server"}) | {"server": {"max_body_bytes": 65536}},
        env={"RAG_SERVER__API_KEYS": "key-one, key-two", "RAG_SERVER__METRICS_TOKEN": "scrape-token-1"},
    )
    assert [k.get_secret_value() for k in settings.server.api_keys] == ["key-one", "key-two"]
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(settings, services)


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        ({}, 401, "X-API-Key header is missing; this server requires an API key"),
        ({"X-API-Key": "key-three"}, 401, "X-API-Key header is wrong; this server requires an API key"),
        ({"X-API-Key": "key-one"}, 200, None),
        ({"X-API-Key": "key-two"}, 200, None),
    ],
)
def test_api_key_is_required_when_configured(keyed_app: Flask, headers: dict[str, str], status: int,
                                             message: str | None) -> None:
    client = keyed_app.test_client()
    resp = client.post("/chat", json={"question": RAG_QUESTION}, headers=headers)
    assert resp.status_code == status
    if message:
        assert resp.get_json()["error"] == {"code": "unauthorized", "message": message,
                                            "details": {"field": "X-API-Key"}}
    assert client.post("/chat", json={"question": RAG_QUESTION}, headers={"X-API-Key": "key-one"}).status_code == 200


def test_probes_and_schema_stay_open_with_api_keys(keyed_app: Flask) -> None:
    client = keyed_app.test_client()
    assert [client.get(p).status_code for p in ("/healthz", "/readyz", "/openapi.json")] == [200, 200, 200]
    assert client.get("/openapi.json").get_json()["components"]["securitySchemes"]["ApiKey"]["name"] == "X-API-Key"


def test_metrics_need_a_credential_when_the_api_does(keyed_app: Flask) -> None:
    """/metrics names versions: with keys on, anonymous callers get 401, like the API (issue 34)."""
    client = keyed_app.test_client()
    anonymous = client.get("/metrics")
    assert anonymous.status_code == 401 and "rag_" not in anonymous.get_data(as_text=True)
    assert client.get("/metrics", headers={"X-API-Key": "key-two"}).status_code == 200
    scraped = client.get("/metrics", headers={"Authorization": "Bearer scrape-token-1"})
    assert scraped.status_code == 200 and "rag_chat_requests_total" in scraped.get_data(as_text=True)
    assert client.get("/metrics", headers={"Authorization": "Bearer scrape-token-2"}).status_code == 401
    # the scrape token opens /metrics only
    assert client.post("/chat", json={"question": RAG_QUESTION},
                       headers={"Authorization": "Bearer scrape-token-1"}).status_code == 401


def test_a_metrics_token_in_a_config_file_is_refused(tmp_path: Any) -> None:
    config = tmp_path / "rag.yaml"
    config.write_text("server:\n  metrics_token: in-the-repo\n")
    with pytest.raises(ConfigError, match="server.metrics_token: secrets come from the environment only"):
        load_settings(config, env={})
