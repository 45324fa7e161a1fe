"""Issue 16, HTTP: 5xx bodies leak nothing, request ids, limits, trusted hosts, headers.

Real parts throughout: the session corpus in a real SQLite store, the real local
model, and for the upstream LLM a real HTTP server on 127.0.0.1 that the real
OpenAI-compatible client calls.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
from typing import Any, Iterator, Mapping, MutableMapping
from urllib.parse import quote

import pytest
import structlog
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import ChatProviderSettings, Settings
from backend.providers.openai_compat.chat import OpenAICompatChatModel
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.api.corpus import RAG_QUESTION, Corpus
from tests.core.test_answer_providers import FakeEndpoint, endpoint  # noqa: F401 - the fixture

SECRET = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


def _server(settings: Settings, **changes: Any) -> Settings:
    return settings.model_copy(update={"server": settings.server.model_copy(update=changes)})


def _retrieval(settings: Settings, **changes: Any) -> Settings:
    return settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update=changes)})


def _client(corpus: Corpus, embedder: Any, settings: Settings | None = None, **services: Any) -> FlaskClient:
    settings = settings or corpus.settings
    services.setdefault("store", corpus.store)
    built = build_services(settings, embedder=embedder, **services)
    return create_app(settings, built).test_client()


def _assert_generic(resp: Any, status: int, *leaks: str) -> dict[str, Any]:
    assert resp.status_code == status
    error = resp.get_json()["error"]
    rid = resp.headers["X-Request-ID"]
    assert error["request_id"] == rid and rid in error["message"]
    assert "details are in the server log" in error["message"] and "details" not in error
    text = resp.get_data(as_text=True)
    for leak in leaks:
        assert leak not in text
    return error  # type: ignore[no-any-return]


# --- 5xx bodies -------------------------------------------------------------------------------
@pytest.mark.parametrize(("upstream", "status", "code"), [(500, 504, "provider_timeout"), (400, 502, "provider_error")])
def test_upstream_llm_error_body_stays_in_the_log(corpus: Corpus, embedder: Any, endpoint: FakeEndpoint,  # noqa: F811
                                                  upstream: int, status: int, code: str) -> None:
    body = {"error": {"message": f"invalid request; your key {SECRET} was logged at /srv/llm/keys.txt"}}
    endpoint.replies.extend([(upstream, body)] * 3)
    llm = OpenAICompatChatModel(ChatProviderSettings.model_validate({
        "provider": "openai_compat", "base_url": endpoint.url, "model": "m", "timeout_s": 5,
        "retry": {"max_attempts": 3, "initial_wait_s": 0, "max_wait_s": 0}}))
    client = _client(corpus, embedder, primary=llm)
    with structlog.testing.capture_logs() as logs:
        resp = client.post("/chat", json={"question": RAG_QUESTION}, headers={"X-Request-ID": "trace-0001-abc"})
    port = endpoint.url.split(":")[2].split("/")[0]
    error = _assert_generic(resp, status, SECRET, "/srv/llm", port, "chat/completions")
    assert error["code"] == code and error["request_id"] == "trace-0001-abc"
    logged = [e for e in logs if e["event"] == "api.rag_error"]
    assert logged and f"HTTP {upstream}" in logged[0]["error"] and endpoint.url in logged[0]["error"]


def test_store_fault_path_stays_in_the_log(corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Any) -> None:
    store = SqliteVectorStore(tmp_path / "gone.sqlite")
    client = _client(corpus, embedder, store=store, primary=extractive)
    store.close()
    (tmp_path / "gone.sqlite").unlink()
    (tmp_path / "gone.sqlite").mkdir()  # a directory where the database was: SQLite cannot open it
    resp = client.post("/chat", json={"question": RAG_QUESTION})
    error = _assert_generic(resp, 503, str(tmp_path), "gone.sqlite", "SQLite")
    assert error["code"] == "store_unavailable"
    assert re.fullmatch(r"[0-9a-f]{32}", error["request_id"])


def test_unexpected_exception_is_generic_with_request_id(corpus: Corpus, embedder: Any) -> None:
    class Broken:
        name = "broken"

        def generate(self, request: Any) -> str:
            raise ZeroDivisionError(f"token {SECRET}")

    resp = _client(corpus, embedder, primary=Broken()).post("/chat", json={"question": RAG_QUESTION})
    assert _assert_generic(resp, 500, SECRET, "ZeroDivision")["code"] == "internal_error"


# --- request ids and headers ------------------------------------------------------------------
@pytest.mark.parametrize(("given", "kept"), [
    ("abcdefgh", True), ("req.2026-11-23_0001", True), ("x" * 128, True),
    ("short", False), ("x" * 129, False), ("has space1", False), ("semi;colon1", False), ("", False),
])
def test_request_id_is_echoed_only_when_well_formed(client: FlaskClient, given: str, kept: bool) -> None:
    resp = client.get("/healthz", headers={"X-Request-ID": given})
    rid = resp.headers["X-Request-ID"]
    assert (rid == given) if kept else re.fullmatch(r"[0-9a-f]{32}", rid)


def test_request_id_is_in_every_log_event_of_the_request(client: FlaskClient) -> None:
    from structlog.contextvars import merge_contextvars

    seen: list[dict[str, Any]] = []

    def grab(logger: Any, name: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
        seen.append(dict(event))
        raise structlog.DropEvent

    old = structlog.get_config()["processors"]
    structlog.configure(processors=[merge_contextvars, grab])
    try:
        client.post("/chat", json={"question": RAG_QUESTION}, headers={"X-Request-ID": "trace-log-0001"})
    finally:
        structlog.configure(processors=old)
    answered = [e for e in seen if e["event"] == "chat.answered"]
    assert answered and answered[0]["request_id"] == "trace-log-0001"


def test_json_responses_are_nosniff_and_not_cached(client: FlaskClient) -> None:
    for resp in (client.get("/healthz"), client.get("/readyz"), client.get("/openapi.json"), client.get("/nope"),
                 client.post("/chat", json={"question": RAG_QUESTION}), client.post("/chat", data="{")):
        assert resp.mimetype == "application/json"
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.headers["Cache-Control"] == "no-store"
    assert client.get("/metrics").headers["X-Content-Type-Options"] == "nosniff"


def test_method_not_allowed_names_the_allowed_methods(client: FlaskClient) -> None:
    resp = client.get("/chat")
    assert resp.status_code == 405 and "POST" in resp.headers["Allow"].split(", ")
    assert client.delete("/search").headers["Allow"].split(", ") >= ["GET"]


# --- limits -------------------------------------------------------------------------------------
def test_deeply_nested_search_filters_are_400(client: FlaskClient) -> None:
    resp = client.get("/search?q=leave&filters=" + "[" * 3000)
    assert resp.status_code == 400
    assert resp.get_json()["error"] == {"code": "bad_request", "details": {"field": "filters"},
                                        "message": "filters: nested too deeply; expected an object of field -> "
                                                   "condition"}


def test_deeply_nested_chat_body_is_400(client: FlaskClient) -> None:
    resp = client.post("/chat", data='{"question": "x", "filters": ' + "[" * 3000 + "]" * 3000 + "}",
                       content_type="application/json")
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "invalid_json"


TAGS = [f"tag{i:04d}" for i in range(1100)]


@pytest.mark.parametrize("route", ["search", "chat"])
def test_filter_with_too_many_values_is_400_naming_the_limit(client: FlaskClient, route: str) -> None:
    filters = {"tags": {"any": TAGS}}
    if route == "search":
        resp = client.get(f"/search?q=leave&filters={quote(json.dumps(filters))}")
    else:
        resp = client.post("/chat", json={"question": RAG_QUESTION, "filters": filters})
    assert resp.status_code == 400
    assert resp.get_json()["error"] == {
        "code": "bad_request", "message": "filters.tags: 1100 values; retrieval.max_filter_values is 100",
        "details": {"field": "filters.tags", "limit": 100}}
    ok = client.get(f"/search?q=leave&filters={quote(json.dumps({'tags': {'any': TAGS[:100]}}))}")
    assert ok.status_code == 200


def test_filter_count_and_values_follow_config(corpus: Corpus, embedder: Any, extractive: Any) -> None:
    settings = _retrieval(corpus.settings, max_filters=2, max_filter_values=3)
    client = _client(corpus, embedder, settings, primary=extractive)
    three = {"doc_id": "hr-handbook", "chunk_type": "text", "tags": ["a"]}
    resp = client.post("/chat", json={"question": RAG_QUESTION, "filters": three})
    assert resp.status_code == 400 and resp.get_json()["error"]["message"] == (
        "filters: 3 fields; retrieval.max_filters is 2")
    four = client.post("/chat", json={"question": RAG_QUESTION, "filters": {"tags": ["a", "b", "c", "d"]}})
    assert four.get_json()["error"]["details"] == {"field": "filters.tags", "limit": 3}
    assert client.post("/chat", json={"question": RAG_QUESTION, "filters": {"doc_id": ["hr-handbook"]}}
                       ).status_code == 200


def test_chunked_body_over_the_limit_is_413(client: FlaskClient) -> None:
    body = json.dumps({"question": "q" * 200_000}).encode()
    resp = client.post("/chat", input_stream=io.BytesIO(body), content_type="application/json",
                       headers={"Transfer-Encoding": "chunked"}, environ_overrides={"wsgi.input_terminated": True})
    assert resp.status_code == 413
    assert resp.get_json()["error"]["code"] == "request_too_large"
    small = json.dumps({"question": RAG_QUESTION}).encode()
    ok = client.post("/chat", input_stream=io.BytesIO(small), content_type="application/json",
                     headers={"Transfer-Encoding": "chunked"}, environ_overrides={"wsgi.input_terminated": True})
    assert ok.status_code == 200 and ok.headers["X-Answer-Mode"] == "rag"


# --- best-effort interaction log -----------------------------------------------------------------
@pytest.fixture
def locked_log(corpus: Corpus) -> Iterator[SqliteVectorStore]:
    """The corpus database with a writer holding its lock: reads work (WAL), writes time out."""
    path = corpus.store.path
    store = SqliteVectorStore(path, busy_timeout_ms=100)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield store
    holder.execute("ROLLBACK")
    holder.close()
    store.close()


def test_failed_interaction_write_still_answers_and_is_counted(corpus: Corpus, embedder: Any, extractive: Any,
                                                               locked_log: SqliteVectorStore) -> None:
    client = _client(corpus, embedder, store=locked_log, primary=extractive)
    resp = client.post("/chat", json={"question": RAG_QUESTION})
    assert resp.status_code == 200 and resp.headers["X-Answer-Mode"] == "rag"
    assert "25 days" in resp.get_json()["answer"]
    metrics = client.get("/metrics").get_data(as_text=True)
    assert "rag_interaction_log_failures_total 1.0" in metrics


# --- trusted hosts ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("host", "status"), [
    ("localhost", 200), ("localhost:8080", 200), ("127.0.0.1:8080", 200), ("[::1]:8080", 200),
    ("attacker.example", 400), ("attacker.example:8080", 400), ("localhost.attacker.example", 400),
])
def test_loopback_server_accepts_only_loopback_host_names(client: FlaskClient, host: str, status: int) -> None:
    resp = client.get("/healthz", headers={"Host": host})
    assert resp.status_code == status
    if status == 400:
        assert resp.get_json()["error"]["code"] == "bad_request" and resp.headers["X-Request-ID"]


def test_trusted_hosts_are_configurable(corpus: Corpus, embedder: Any, extractive: Any) -> None:
    settings = _server(corpus.settings, host="0.0.0.0", trusted_hosts=("rag.example.com", ".corp.example"))
    client = _client(corpus, embedder, settings, primary=extractive)
    assert [client.get("/healthz", headers={"Host": h}).status_code
            for h in ("rag.example.com", "a.corp.example:443", "corp.example", "localhost", "evil.example",
                      "xcorp.example")] == [200, 200, 200, 400, 400, 400]
    anywhere = _client(corpus, embedder, _server(corpus.settings, host="0.0.0.0"), primary=extractive)
    assert anywhere.get("/healthz", headers={"Host": "any.example"}).status_code == 200


# --- rate limit ---------------------------------------------------------------------------------
def _keyed(corpus: Corpus, embedder: Any, extractive: Any, limit: str) -> FlaskClient:
    from backend.common.config import load_settings
    from tests.conftest import REPO

    base = corpus.settings.model_dump(mode="json", exclude={"server"})
    settings = load_settings(REPO / "config" / "rag.yaml", overrides=base | {"server": {"rate_limit": {"limit": limit}}},
                             env={"RAG_SERVER__API_KEYS": "key-one,key-two"})
    return _client(corpus, embedder, settings, primary=extractive)


def test_rate_limit_is_per_key_and_answers_429_with_retry_after(corpus: Corpus, embedder: Any,
                                                               extractive: Any) -> None:
    client = _keyed(corpus, embedder, extractive, "3/minute")
    one, two = {"X-API-Key": "key-one"}, {"X-API-Key": "key-two"}
    answered = client.get("/search/presets", headers=one)
    assert answered.status_code == 200 and "Retry-After" not in answered.headers  # only a 429 says when to retry
    statuses = [answered.status_code] + [client.get("/search/presets", headers=one).status_code for _ in range(2)]
    statuses.append(client.post("/chat", json={"question": RAG_QUESTION}, headers=one).status_code)
    assert statuses == [200, 200, 200, 429]
    limited = client.get("/search?q=leave", headers=one)
    assert limited.status_code == 429 and 0 < int(limited.headers["Retry-After"]) <= 60
    error = limited.get_json()["error"]
    assert error["code"] == "rate_limited" and "3 per 1 minute" in error["message"]
    assert client.get("/search/presets", headers=two).status_code == 200  # another key has its own budget
    assert all(client.get(p, headers=one).status_code == 200 for p in ("/healthz", "/readyz", "/metrics"))  # exempt


def test_rate_limit_without_keys_is_per_client_address(client: FlaskClient, corpus: Corpus, embedder: Any,
                                                      extractive: Any) -> None:
    settings = corpus.settings.model_copy(update={"server": corpus.settings.server.model_copy(update={
        "rate_limit": corpus.settings.server.rate_limit.model_copy(update={"limit": "2/minute"})})})
    limited = _client(corpus, embedder, settings, primary=extractive)
    here, there = {"REMOTE_ADDR": "10.0.0.1"}, {"REMOTE_ADDR": "10.0.0.2"}
    assert [limited.get("/search/presets", environ_base=here).status_code for _ in range(3)] == [200, 200, 429]
    assert limited.get("/search/presets", environ_base=there).status_code == 200


# --- what the public endpoints disclose ------------------------------------------------------------
NAMES = ("KB_ACTIVE", "KB_CHAT_V1", "KB_COFFEE", "KB_HANDBOOK", "all-MiniLM", "sentence-transformers", "coffee",
         "handbook")


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "key-three"}], ids=["no_key", "wrong_key"])
def test_readyz_and_schema_name_nothing_without_a_valid_key(corpus: Corpus, embedder: Any, extractive: Any,
                                                           headers: dict[str, str]) -> None:
    for client in (_client(corpus, embedder, primary=extractive), _keyed(corpus, embedder, extractive, "100/minute")):
        ready = client.get("/readyz", headers=headers)
        assert ready.status_code == 200 and ready.get_json() == {"status": "ready", "checks": {
            "store": {"ok": True, "detail": "store answers"},
            "alias": {"ok": True, "detail": "every alias serves a version"},
            "model": {"ok": True, "detail": "embedding model loaded"}}}
        schema = client.get("/openapi.json", headers=headers).get_data(as_text=True)
        assert not [n for n in NAMES if n in schema]


def test_a_valid_key_sees_the_names(corpus: Corpus, embedder: Any, extractive: Any) -> None:
    client = _keyed(corpus, embedder, extractive, "100/minute")
    checks = client.get("/readyz", headers={"X-API-Key": "key-two"}).get_json()["checks"]
    assert checks["alias"]["detail"].startswith("KB_ACTIVE -> KB_CHAT_V1")
    assert checks["model"]["detail"] == f"{embedder.model_id} (384 dims)"
    doc = client.get("/openapi.json", headers={"X-API-Key": "key-two"}).get_json()
    assert doc["paths"]["/chat"]["post"]["parameters"][0]["schema"]["enum"] == ["coffee", "handbook"]


def test_unready_store_names_no_path_without_a_key(corpus: Corpus, embedder: Any, extractive: Any,
                                                   tmp_path: Any) -> None:
    store = SqliteVectorStore(tmp_path / "gone.sqlite")
    client = _client(corpus, embedder, store=store, primary=extractive)
    store.close()
    (tmp_path / "gone.sqlite").unlink()
    (tmp_path / "gone.sqlite").mkdir()
    with structlog.testing.capture_logs() as logs:
        resp = client.get("/readyz")
    assert resp.status_code == 503 and str(tmp_path) not in resp.get_data(as_text=True)
    assert resp.get_json()["checks"]["store"] == {"ok": False,
                                                  "detail": "store unavailable; the details are in the server log"}
    assert any(e["event"] == "api.not_ready" and str(tmp_path) in e["store"] for e in logs)
