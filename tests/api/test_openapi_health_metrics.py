"""/openapi.json matches real responses; /healthz, /readyz and /metrics report truthfully."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from jsonschema.exceptions import ValidationError as SchemaError
from openapi_schema_validator import OAS31Validator
from pydantic import SecretStr

from backend.api.app import create_app
from backend.runtime import build_services
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.api.corpus import FALLBACK_QUESTION, HYBRID_QUESTION, RAG_QUESTION, Corpus


KEY = {"X-API-Key": "ops-key-1"}


def _keyed_client(services: Any) -> FlaskClient:
    """The same services behind API keys: /readyz names aliases and models only to a valid key."""
    settings = services.settings.model_copy(update={"server": services.settings.server.model_copy(
        update={"api_keys": (SecretStr(KEY["X-API-Key"]),)})})
    services.settings = settings
    return create_app(settings, services).test_client()


def validator(spec: dict[str, Any], path: str, method: str, status: str) -> OAS31Validator:
    """Validator for one documented response body; $refs resolve inside the document."""
    schema = spec["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]
    return OAS31Validator({**schema, "components": spec["components"]})


@pytest.fixture
def spec(client: FlaskClient) -> dict[str, Any]:
    doc = client.get("/openapi.json").get_json()
    for schema in doc["components"]["schemas"].values():
        OAS31Validator.check_schema(schema)
    return doc


def test_openapi_document_describes_configured_limits(spec: dict[str, Any]) -> None:
    assert spec["openapi"] == "3.1.0"
    request = spec["components"]["schemas"]["ChatRequestBody"]
    assert request["properties"]["question"]["maxLength"] == 4000
    assert {"type": "integer", "minimum": 1, "maximum": 50} in request["properties"]["top_k"]["anyOf"]
    header = spec["paths"]["/chat"]["post"]["parameters"][0]
    # domain names only for a caller with a valid key (test_http_hardening)
    assert (header["name"], header["schema"]) == ("X-RAG-Domain", {"type": "string"})
    assert set(spec["paths"]["/chat"]["post"]["responses"]) == {
        "200", "400", "401", "403", "409", "413", "415", "422", "429", "500", "502", "503", "504"}


@pytest.mark.parametrize(("question", "mode"), [(RAG_QUESTION, "rag"), (HYBRID_QUESTION, "hybrid"),
                                                (FALLBACK_QUESTION, "fallback")])
def test_real_chat_responses_validate_against_openapi(client: FlaskClient, spec: dict[str, Any], question: str,
                                                     mode: str) -> None:
    resp = client.post("/chat", json={"question": question})
    assert resp.get_json()["mode"] == mode
    validator(spec, "/chat", "post", "200").validate(resp.get_json())
    request_schema = {"$ref": "#/components/schemas/ChatRequestBody", "components": spec["components"]}
    OAS31Validator(request_schema).validate({"question": question, "top_k": 8, "filters": {"tags": ["a", "b"]}})


def test_schema_rejects_what_the_server_rejects(spec: dict[str, Any]) -> None:
    request_schema = OAS31Validator({"$ref": "#/components/schemas/ChatRequestBody", "components": spec["components"]})
    with pytest.raises(SchemaError, match="is not of type 'string'"):
        request_schema.validate({"question": 42})
    with pytest.raises(SchemaError, match="51 is not valid under any of the given schemas"):
        request_schema.validate({"question": "x", "top_k": 51})
    response_schema = validator(spec, "/chat", "post", "200")
    with pytest.raises(SchemaError, match="'maybe' is not one of"):
        response_schema.validate({"answer": "", "mode": "maybe"})


def test_error_responses_validate_against_openapi(client: FlaskClient, spec: dict[str, Any]) -> None:
    cases = [
        (client.post("/chat", data="{", content_type="application/json"), "400"),
        (client.post("/chat", json={"question": 1}), "422"),
        (client.post("/chat", data="x", content_type="text/plain"), "415"),
        (client.post("/chat", json={"question": "x"}, headers={"X-RAG-Domain": "nope"}), "400"),
    ]
    for resp, status in cases:
        assert str(resp.status_code) == status
        validator(spec, "/chat", "post", status).validate(resp.get_json())


def test_search_presets_and_assets_are_documented_and_match_real_responses(
    client: FlaskClient, spec: dict[str, Any]
) -> None:
    assert {"/chat", "/search", "/search/presets", "/assets/{image_ref}", "/healthz", "/readyz", "/metrics"} <= set(
        spec["paths"])
    params = {p["name"]: p for p in spec["paths"]["/search"]["get"]["parameters"]}
    assert set(params) == {"X-RAG-Domain", "q", "top_k", "strategy", "filters"}  # preset/value: only with presets
    assert params["top_k"]["schema"]["maximum"] == 50
    resp = client.get("/search", query_string={"q": RAG_QUESTION, "strategy": "fusion", "top_k": 3})
    assert resp.status_code == 200 and resp.get_json()["hits"]
    validator(spec, "/search", "get", "200").validate(resp.get_json())
    bad = client.get("/search", query_string={"q": "x", "strategy": "hybrid"})
    assert bad.status_code == 422
    validator(spec, "/search", "get", "422").validate(bad.get_json())
    presets = client.get("/search/presets")
    validator(spec, "/search/presets", "get", "200").validate(presets.get_json())
    for ref, status in (("..%2Fetc%2Fpasswd", "400"), ("nope/img_001.png", "404")):
        resp = client.get(f"/assets/{ref}")
        assert str(resp.status_code) == status, ref
        validator(spec, "/assets/{image_ref}", "get", status).validate(resp.get_json())


def test_healthz_and_readyz_when_ready(client: FlaskClient, spec: dict[str, Any]) -> None:
    health = client.get("/healthz")
    assert (health.status_code, health.get_json()) == (200, {"status": "ok"})
    ready = client.get("/readyz")
    body = ready.get_json()
    assert ready.status_code == 200 and body["status"] == "ready"
    assert body["checks"]["alias"]["detail"] == "every alias serves a version"  # names only with a key
    validator(spec, "/readyz", "get", "200").validate(body)
    keyed = _keyed_client(client.application.extensions["rag"])
    named = keyed.get("/readyz", headers=KEY).get_json()["checks"]
    assert named["alias"]["detail"] == "KB_ACTIVE -> KB_CHAT_V1, KB_HANDBOOK -> KB_CHAT_V1, KB_COFFEE -> KB_COFFEE_V1"
    assert named["model"]["detail"] == f"{keyed.application.extensions['rag'].embedder.model_id} (384 dims)"


def test_readyz_is_503_naming_missing_aliases(corpus: Corpus, embedder: Any, tmp_path: Any, extractive: Any) -> None:
    empty = SqliteVectorStore(tmp_path / "empty.sqlite")
    services = build_services(corpus.settings, store=empty, embedder=embedder, primary=extractive)
    client = _keyed_client(services)
    resp = client.get("/readyz", headers=KEY)
    assert resp.status_code == 503
    body = resp.get_json()
    assert body["status"] == "not_ready"
    assert body["checks"]["store"] == {"ok": True, "detail": "store answers"}
    assert body["checks"]["alias"] == {
        "ok": False, "detail": "alias(es) KB_ACTIVE, KB_HANDBOOK, KB_COFFEE do not exist; ingest and promote a version"}
    chat = client.post("/chat", json={"question": RAG_QUESTION}, headers=KEY)
    # an empty store serves nothing: not retryable, so 409 with the reason (issue 48), while /readyz stays 503
    assert chat.status_code == 409 and chat.get_json()["error"]["code"] == "not_served"
    assert chat.get_json()["error"]["message"].startswith(
        "the default knowledge base is not served yet: nothing has been ingested into it yet")
    empty.close()


def test_readyz_reports_unreachable_store(corpus: Corpus, embedder: Any, tmp_path: Any, extractive: Any) -> None:
    store = SqliteVectorStore(tmp_path / "gone.sqlite")
    services = build_services(corpus.settings, store=store, embedder=embedder, primary=extractive)
    client = _keyed_client(services)
    store.close()
    (tmp_path / "gone.sqlite").unlink()
    (tmp_path / "gone.sqlite").mkdir()  # a directory where the database file was: SQLite cannot open it
    body = client.get("/readyz", headers=KEY).get_json()
    assert body["status"] == "not_ready"
    assert body["checks"]["store"]["ok"] is False and "cannot open SQLite store" in body["checks"]["store"]["detail"]
    assert body["checks"]["alias"] == {"ok": False, "detail": "not checked: store unreachable"}


def test_metrics_count_chat_requests_by_mode_and_status(app: Flask) -> None:
    client = app.test_client()
    client.post("/chat", json={"question": RAG_QUESTION})
    client.post("/chat", json={"question": RAG_QUESTION})
    client.post("/chat", json={"question": FALLBACK_QUESTION})
    client.post("/chat", json={"question": 1})
    text = client.get("/metrics").get_data(as_text=True)
    assert 'rag_chat_requests_total{mode="rag",status="200"} 2.0' in text
    assert 'rag_chat_requests_total{mode="fallback",status="200"} 1.0' in text
    assert 'rag_chat_requests_total{mode="none",status="422"} 1.0' in text
    assert 'rag_http_request_duration_seconds_count{endpoint="/chat"} 4.0' in text
    assert 'rag_http_requests_total{endpoint="/chat",method="POST",status="200"} 3.0' in text


def test_each_app_has_its_own_metrics_registry(corpus: Corpus, embedder: Any, extractive: Any) -> None:
    apps: list[Flask] = []
    for _ in range(2):
        services = build_services(corpus.settings, store=corpus.store, embedder=embedder, primary=extractive)
        apps.append(create_app(corpus.settings, services))
    apps[0].test_client().post("/chat", json={"question": RAG_QUESTION})
    assert 'rag_chat_requests_total{mode="rag",status="200"} 1.0' in apps[0].test_client().get("/metrics").get_data(as_text=True)
    assert "rag_chat_requests_total{" not in apps[1].test_client().get("/metrics").get_data(as_text=True)
