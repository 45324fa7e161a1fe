"""Each request is checked once, where it enters, with one status per kind of error on every endpoint.

The real app over the real corpus (``conftest``): ``/chat``, ``/chat/stream`` and ``/search`` answer
the same kind of mistake with the same status, code and message; the core's checks
(``SearchRequest``, ``RequestLimits``) raise the same error classes; and no route module
defines request errors of its own.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

import pytest
from flask.testing import FlaskClient

import backend.api.app  # noqa: F401 - imports every route module, so their classes are visible below
from backend.common.errors import (
    ConfigError,
    FieldOutOfRange,
    GateFailed,
    KnowledgeBaseExists,
    ProviderError,
    RagError,
    RequestError,
    RequestTooLarge,
    SeriesLocked,
    StoreUnavailable,
)
from backend.core.requests import RequestLimits, check_strategy
from backend.core.services.search_service import SearchRequest
from tests.api.corpus import RAG_QUESTION
from tests.api.test_cli import config_file  # noqa: F401 - the CLI's YAML over the session corpus


def _chat(path: str) -> Callable[[FlaskClient, dict[str, Any]], Any]:
    def send(client: FlaskClient, fields: dict[str, Any]) -> Any:
        question = fields.pop("text", RAG_QUESTION)
        return client.post(path, json={"question": question, **fields})
    return send


def _search(client: FlaskClient, fields: dict[str, Any]) -> Any:
    params = {"q": fields.pop("text", "annual leave"), **fields}
    return client.get("/search", query_string=params)


ENDPOINTS = {"/chat": _chat("/chat"), "/chat/stream": _chat("/chat/stream"), "/search": _search}

#: kind of mistake -> (the fields that make it, status, code, the message every endpoint gives)
KINDS = {
    "top_k over retrieval.max_top_k": ({"top_k": 51}, 422, "validation_error", "top_k must be between 1 and 50, got 51"),
    "top_k below 1": ({"top_k": 0}, 422, "validation_error", "greater than or equal to 1"),
    "unknown strategy": ({"strategy": "lexicl"}, 422, "validation_error", "did you mean 'lexical'?"),
    "text over server.max_question_chars": ({"text": "q" * 4001}, 413, "request_too_large",
                                            "characters; server.max_question_chars is 4000"),
}


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_one_status_code_and_message_per_kind_of_error_on_every_endpoint(
        client: FlaskClient, kind: str, endpoint: str) -> None:
    fields, status, code, message = KINDS[kind]
    resp = ENDPOINTS[endpoint](client, dict(fields))
    assert resp.status_code == status, resp.get_data(as_text=True)
    error = resp.get_json()["error"]
    assert (error["code"], message in error["message"]) == (code, True), error


def test_the_core_raises_the_class_the_http_status_comes_from(corpus: Any) -> None:
    limits = RequestLimits.from_settings(corpus.settings)
    for make in (lambda: limits.top_k(51), lambda: SearchRequest("x", "KB", 0), lambda: check_strategy("lexicl"),
                 lambda: SearchRequest("x", "KB", 3, strategy="lexicl")):
        with pytest.raises(FieldOutOfRange) as info:
            make()
        assert info.value.http_status == 422 and info.value.code == "validation_error"
    with pytest.raises(RequestTooLarge) as too_long:
        limits.text("q" * 4001)
    assert too_long.value.http_status == 413
    assert limits.top_k(None) is None and limits.top_k(50) == 50


@pytest.mark.parametrize(("name", "meant"), [
    ("hybrid", "'fusion'"),  # an answer mode, not a strategy: the dense + lexical one is meant
    ("lexicl", "'lexical'"),
    ("hierarchy", "'hierarchical'"),
    ("bm25", "'lexical'"),
    ("Fusion", "'fusion' or 'hyde_fusion'"),
])
def test_an_unknown_strategy_names_the_one_meant(client: FlaskClient, name: str, meant: str) -> None:
    with pytest.raises(FieldOutOfRange, match=f"got '{name}'; did you mean {meant}\\?$"):
        SearchRequest("x", "KB", 3, strategy=name)
    resp = client.post("/chat", json={"question": RAG_QUESTION, "strategy": name})
    assert resp.status_code == 422
    error = resp.get_json()["error"]
    assert error["message"].endswith(f"did you mean {meant}?")
    assert error["details"] == [{"field": "strategy", "message": error["message"].split("strategy: ", 1)[1],
                                 "type": "literal_error"}]


def test_a_strategy_nothing_resembles_gets_the_list_only(client: FlaskClient) -> None:
    with pytest.raises(FieldOutOfRange) as info:
        check_strategy("zzz")
    assert info.value.user_message == ("strategy must be one of dense, lexical, fusion, hyde, hyde_fusion, "
                                       "hierarchical, enriched_fusion, got 'zzz'")
    resp = client.get("/search", query_string={"q": "leave", "strategy": "zzz"})
    assert resp.status_code == 422 and "did you mean" not in resp.get_json()["error"]["message"]


def test_feedback_and_conversations_keep_their_statuses(client: FlaskClient) -> None:
    form = client.post("/feedback", data="interaction_id=x", content_type="application/x-www-form-urlencoded")
    assert (form.status_code, form.get_json()["error"]["code"]) == (415, "unsupported_media_type")
    shape = client.post("/feedback", data=json.dumps({"interaction_id": "nope", "rating": "up"}),
                        content_type="application/json")
    assert (shape.status_code, shape.get_json()["error"]["code"]) == (422, "validation_error")
    unknown = client.post("/feedback", json={"interaction_id": "0" * 32, "rating": "up"})
    assert (unknown.status_code, unknown.get_json()["error"]["code"]) == (404, "interaction_not_found")
    path = client.get("/conversations/bad%20id")
    assert (path.status_code, path.get_json()["error"]["code"]) == (400, "invalid_conversation_id")


def _subclasses(cls: type) -> list[type]:
    return [sub for direct in cls.__subclasses__() for sub in (direct, *_subclasses(direct))]


def test_every_request_error_lives_in_common_errors() -> None:
    elsewhere = [f"{c.__module__}.{c.__qualname__}" for c in _subclasses(RequestError)
                 if c.__module__ != "backend.common.errors" and not c.__module__.startswith("tests.")]
    assert elsewhere == []
    assert all(inspect.getdoc(c) for c in (FieldOutOfRange, RequestTooLarge))


@pytest.mark.parametrize(("error", "exit_code"), [
    (ConfigError("x"), 2), (KnowledgeBaseExists("x"), 2), (GateFailed("x"), 3), (SeriesLocked("x"), 4),
    (RagError("x"), 1), (StoreUnavailable("x"), 1), (ProviderError("x"), 1), (FieldOutOfRange("x"), 1),
])
def test_each_error_carries_the_cli_exit_code(error: RagError, exit_code: int) -> None:
    assert error.exit_code == exit_code


def test_a_misspelt_domain_names_the_one_meant(client: FlaskClient) -> None:
    resp = client.post("/chat", json={"question": RAG_QUESTION}, headers={"X-RAG-Domain": "cofee"})
    assert resp.status_code == 400
    assert resp.get_json()["error"]["message"] == ("X-RAG-Domain: unknown domain 'cofee'; known domains: coffee, "
                                                   "handbook; did you mean 'coffee'?")
    search = client.get("/search", query_string={"q": "espresso"}, headers={"X-RAG-Domain": "Handbook"})
    assert search.status_code == 400 and search.get_json()["error"]["message"].endswith("did you mean 'handbook'?")


@pytest.mark.parametrize("command", ["ask", "search"])
def test_the_cli_checks_top_k_as_the_http_api_does(config_file: Any, command: str) -> None:
    from click.testing import CliRunner

    from backend.cli.main import cli

    result = CliRunner().invoke(cli, ["--config", str(config_file), command, RAG_QUESTION, "--top-k", "51"])
    assert result.exit_code == 1
    assert "error: top_k must be between 1 and 50, got 51" in result.stderr
