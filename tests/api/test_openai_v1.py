"""``/v1/chat/completions`` and ``/v1/models`` with the real ``openai`` package against a running
server (docs/OPENAI_API.md): a completion, a streamed one, a follow-up turn, the model list, a bad
key and an unknown model in OpenAI's error shape, and the same answer as ``/chat``."""

from __future__ import annotations

import json
from typing import Any, Iterator

import openai
import pytest
from flask import Flask
from openai import OpenAI

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import load_settings
from tests.api.corpus import COFFEE_QUESTION, FALLBACK_QUESTION, RAG_QUESTION, Corpus, corpus_settings
from tests.api.live_server import serving
from tests.conftest import REPO


@pytest.fixture
def keyed_app(corpus: Corpus, embedder: Any, extractive: Any) -> Flask:
    base = corpus_settings(corpus.path)
    settings = load_settings(REPO / "config" / "rag.yaml", overrides=base.model_dump(mode="json", exclude={"server"}),
                             env={"RAG_SERVER__API_KEYS": "key-one, key-two"})
    return create_app(settings, build_services(settings, store=corpus.store, embedder=embedder, primary=extractive))


@pytest.fixture
def base_url(keyed_app: Flask) -> Iterator[str]:
    with serving(keyed_app) as url:
        yield url


def client(base_url: str, key: str = "key-one") -> OpenAI:
    return OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0, timeout=60)


def test_a_completion_answers_as_chat_does_with_mode_citations_and_usage(base_url: str, keyed_app: Flask) -> None:
    raw = client(base_url).chat.completions.with_raw_response.create(
        model="kb:default", messages=[{"role": "user", "content": RAG_QUESTION}], temperature=0.2, max_tokens=50)
    completion = raw.parse()
    assert raw.headers["X-Answer-Mode"] == "rag" and raw.headers["X-Retrieval-Target"] == "KB_ACTIVE"
    content = completion.choices[0].message.content or ""
    assert completion.model == "kb:default" and completion.choices[0].finish_reason == "stop"
    assert "25 days" in content and "[1]" in content
    assert content.endswith("\n\nSources:\n[1] data/hr/handbook.docx")
    rag = completion.model_extra["rag"]
    assert rag["mode"] == "rag" and rag["decision_explain"]["version"] == "KB_CHAT_V1"
    assert rag["citations"][0]["marker"] == "[1]" and rag["citations"][0]["doc_id"] == "hr-handbook"
    assert completion.id == f"chatcmpl-{rag['interaction_id']}"
    words = len(RAG_QUESTION.split())
    assert completion.usage.prompt_tokens == words and completion.usage.completion_tokens == len(content.split())
    assert completion.usage.total_tokens == words + len(content.split())
    # the answer is the one /chat gives
    chat = keyed_app.test_client().post("/chat", json={"question": RAG_QUESTION}, headers={"X-API-Key": "key-two"})
    assert content.startswith(chat.get_json()["answer"])


def test_a_streamed_completion_sends_chunks_then_the_rag_field_usage_and_done(base_url: str) -> None:
    stream = client(base_url).chat.completions.create(
        model="kb:coffee", messages=[{"role": "user", "content": COFFEE_QUESTION}], stream=True,
        stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "18 grams" in text and text.endswith("Sources:\n[1] data/coffee/espresso.md\n[2] data/coffee/espresso.md")
    finish = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finish) == 1 and finish[0].model_extra["rag"]["mode"] == "rag"
    assert finish[0].model_extra["rag"]["citations"][0]["doc_id"] == "espresso"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == len(text.split())
    assert len({c.id for c in chunks}) == 1


def test_a_follow_up_turn_is_condensed_from_the_earlier_user_messages(base_url: str) -> None:
    completion = client(base_url).chat.completions.create(model="kb:default", messages=[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "How many days of annual leave do employees get?"},
        {"role": "assistant", "content": "Full-time employees receive 25 days [1]."},
        {"role": "user", "content": "and for part-time staff?"}])
    explain = completion.model_extra["rag"]["decision_explain"]
    assert explain["effective_query"] == "How many days of annual leave do part-time staff get?"
    assert explain["condensed_by"] == "rule"
    assert "proportion to their contracted hours" in (completion.choices[0].message.content or "")


def test_the_model_list_names_every_knowledge_base(base_url: str) -> None:
    models = client(base_url).models.list()
    assert [m.id for m in models.data] == ["kb:default", "kb:coffee", "kb:handbook"]
    assert {m.owned_by for m in models.data} == {"rag-runtime"}
    assert client(base_url).models.retrieve("kb:coffee").id == "kb:coffee"


def test_a_bad_key_is_401_in_the_openai_error_shape(base_url: str) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        client(base_url, key="key-three").chat.completions.create(
            model="kb:default", messages=[{"role": "user", "content": RAG_QUESTION}])
    assert caught.value.status_code == 401
    assert caught.value.body == {"message": "Authorization: Bearer key is wrong; this server requires an API key",
                                 "type": "authentication_error", "param": "Authorization", "code": "unauthorized"}


def test_an_unknown_model_and_a_bad_body_are_openai_errors(base_url: str) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client(base_url).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body == {
        "message": "model 'gpt-4o' is not a knowledge base you may use; models: kb:default, kb:coffee, kb:handbook "
                   "(GET /v1/models)", "type": "not_found_error", "param": "model", "code": "model_not_found"}
    with pytest.raises(openai.UnprocessableEntityError) as caught:
        client(base_url).chat.completions.create(model="kb:default", messages=[
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    assert caught.value.body["param"] == "messages" and caught.value.body["type"] == "invalid_request_error"
    assert caught.value.body["message"] == ("messages: the last message must be a user message with text, got role "
                                            "'assistant'")
    with pytest.raises(openai.UnprocessableEntityError) as caught:
        client(base_url).chat.completions.create(model="kb:default", messages=[])
    assert caught.value.body["code"] == "validation_error" and caught.value.body["param"] == "messages"


def test_a_question_outside_the_knowledge_base_is_a_fallback_completion(base_url: str) -> None:
    raw = client(base_url).chat.completions.with_raw_response.create(
        model="kb:default", messages=[{"role": "user", "content": FALLBACK_QUESTION}])
    completion = raw.parse()
    assert raw.headers["X-Answer-Mode"] == "fallback"
    assert completion.model_extra["rag"]["mode"] == "fallback" and completion.model_extra["rag"]["citations"] == []
    assert "Sources:" not in (completion.choices[0].message.content or "")


def test_past_its_quota_a_key_gets_429_with_retry_after_in_the_openai_shape(corpus: Corpus, embedder: Any,
                                                                           extractive: Any) -> None:
    base = corpus_settings(corpus.path)
    settings = load_settings(REPO / "config" / "rag.yaml", overrides=base.model_dump(mode="json", exclude={"server"})
                             | {"quotas": {"enabled": True, "default": {"per_day": 2}}},  # a day: no window turns mid-test
                             env={"RAG_SERVER__API_KEYS": "key-one, key-two"})
    app = create_app(settings, build_services(settings, store=corpus.store, embedder=embedder, primary=extractive))
    ask = [{"role": "user", "content": COFFEE_QUESTION}]
    with serving(app) as url:
        assert [m.id for m in client(url).models.list().data][0] == "kb:default"  # 1 of key-one's 2
        client(url).chat.completions.create(model="kb:coffee", messages=ask)  # 2 of 2
        with pytest.raises(openai.RateLimitError) as caught:
            client(url).chat.completions.create(model="kb:coffee", messages=ask)
        assert client(url, key="key-two").chat.completions.create(model="kb:coffee", messages=ask).choices  # own budget
    assert caught.value.status_code == 429
    assert 1 <= int(caught.value.response.headers["Retry-After"]) <= 86_400
    body = caught.value.body
    assert (body["type"], body["code"], body["param"]) == ("rate_limit_error", "quota_exceeded", "quota")
    assert body["message"].startswith("quota exceeded: API key sha256:") and "key-one" not in body["message"]
    assert "made 3 requests this day; its budget is 2 per day (quotas.default.per_day)" in body["message"]
    denied = [e for e in corpus.store.audit_events(50) if e.detail.get("code") == "quota_exceeded"]
    assert denied and denied[0].outcome == "denied" and denied[0].detail["path"] == "/v1/chat/completions"


def test_v1_is_in_openapi_and_real_answers_validate_against_it(keyed_app: Flask) -> None:
    from openapi_schema_validator import OAS31Validator

    http = keyed_app.test_client()
    key = {"Authorization": "Bearer key-one"}
    spec = http.get("/openapi.json", headers=key).get_json()
    assert {"/v1/chat/completions", "/v1/models"} <= set(spec["paths"])

    def check(path: str, method: str, status: str, body: Any) -> None:
        schema = spec["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]
        OAS31Validator({**schema, "components": spec["components"]}).validate(body)

    answer = http.post("/v1/chat/completions", headers=key,
                       json={"model": "kb:default", "messages": [{"role": "user", "content": RAG_QUESTION}]})
    check("/v1/chat/completions", "post", "200", answer.get_json())
    check("/v1/models", "get", "200", http.get("/v1/models", headers=key).get_json())
    missing = http.post("/v1/chat/completions", headers=key, json={"model": "kb:nope", "messages": [
        {"role": "user", "content": "hi"}]})
    assert missing.status_code == 404
    check("/v1/chat/completions", "post", "404", missing.get_json())
    assert spec["paths"]["/v1/chat/completions"]["post"]["responses"]["429"]["content"]["application/json"][
        "schema"] == {"$ref": "#/components/schemas/OpenAIError"}


def test_a_principal_s_bearer_jwt_and_api_key_both_work_and_a_wrong_bearer_key_is_401(tmp_path: Any, embedder: Any,
                                                                                    corpus: Corpus,
                                                                                    extractive: Any) -> None:
    """With access control: ``Authorization: Bearer`` carries a principal's API key or an SSO token."""
    import jwt

    secret = "v1-jwt-secret-" + "0123456789abcdef" * 4
    base = corpus_settings(corpus.path)
    settings = load_settings(REPO / "config" / "rag.yaml", overrides=base.model_dump(mode="json") | {"access": {
        "enabled": True, "principals": {"ann": {"domains": ["coffee"]}, "sam": {"sso": True, "domains": ["*"]}},
        "jwt": {"enabled": True, "algorithm": "HS256", "audience": "rag-api"}}},
        env={"RAG_ACCESS__PRINCIPALS__ANN__API_KEY": "key-ann-1", "RAG_ACCESS__JWT__SECRET": secret})
    app = create_app(settings, build_services(settings, store=corpus.store, embedder=embedder, primary=extractive))
    token = jwt.encode({"sub": "sam", "aud": "rag-api", "exp": 4102444800}, secret, algorithm="HS256")
    before = max((e.id or 0 for e in corpus.store.audit_events(1)), default=0)
    with serving(app) as url:
        client(url, key=token).chat.completions.create(model="kb:coffee", stream=True, messages=[
            {"role": "user", "content": COFFEE_QUESTION}]).close()
        assert [m.id for m in client(url, key="key-ann-1").models.list().data] == ["kb:coffee"]
        assert [m.id for m in client(url, key=token).models.list().data] == ["kb:default", "kb:coffee", "kb:handbook"]
        with pytest.raises(openai.NotFoundError):  # ann may not use the default knowledge base: it does not exist for her
            client(url, key="key-ann-1").chat.completions.create(model="kb:default", messages=[
                {"role": "user", "content": RAG_QUESTION}])
        with pytest.raises(openai.AuthenticationError) as caught:
            client(url, key="key-nobody").models.list()
    assert caught.value.body == {"message": "bearer token rejected: DecodeError", "type": "authentication_error",
                                 "param": "Authorization", "code": "unauthorized"}
    # each call in the audit trail, as its principal (the token's subject, never the token), oldest first
    trail = [(e.action, e.outcome, e.principal, e.knowledge_base, e.version, e.detail["status"])
             for e in corpus.store.audit_events(50) if (e.id or 0) > before][::-1]
    assert trail == [("v1.chat_completions", "ok", "sam", "coffee", "KB_COFFEE_V1", 200),
                     ("v1.models", "ok", "ann", None, None, 200), ("v1.models", "ok", "sam", None, None, 200),
                     ("v1.chat_completions", "refused", "ann", None, None, 404),
                     ("v1.models", "denied", None, None, None, 401)]
    assert token not in json.dumps([e.detail for e in corpus.store.audit_events(50)])
