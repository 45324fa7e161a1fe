"""/chat/stream, conversations, /feedback, /domains and signed figure URLs on the real corpus."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from backend.api import signed_assets
from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from backend.common.errors import ProviderUnavailable
from backend.core.golden import load_golden_set
from backend.core.types import ChatRequest
from tests.api.corpus import (
    COFFEE_QUESTION,
    FALLBACK_QUESTION,
    FIGURE_QUESTION,
    IMAGE_REF,
    MAIN_VERSION,
    RAG_QUESTION,
    Corpus,
    corpus_settings,
)


def events(resp: Any) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events of a response, parsed."""
    out = []
    for block in resp.get_data(as_text=True).split("\n\n"):
        if not block.strip():
            continue
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def ask(client: FlaskClient, question: str, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return client.post("/chat/stream", json={"question": question, **body}, headers=headers or {})


def test_stream_sends_meta_then_sentence_deltas_then_done(client: FlaskClient) -> None:
    resp = ask(client, RAG_QUESTION)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    assert resp.headers["X-Answer-Mode"] == "rag"
    got = events(resp)
    names = [n for n, _ in got]
    assert names[0] == "meta" and names[-1] == "done" and set(names[1:-1]) == {"delta"}
    meta, done = got[0][1], got[-1][1]
    assert meta["mode"] == "rag" and meta["citations"][0]["marker"] == "[1]"
    assert meta["sources"][0]["text"].startswith("Full-time employees receive 25 days")
    assert meta["sources"][0]["image_url"] is None
    deltas = [d["text"] for n, d in got if n == "delta"]
    assert "".join(deltas) == done["answer"] and "25 days" in done["answer"]
    assert len(deltas) == done["answer"].count("[")  # one delta per cited sentence
    assert done["interaction_id"] == meta["interaction_id"] and len(done["interaction_id"]) == 32
    assert set(done["timings"]) == {"retrieval_ms", "generation_ms", "total_ms"}
    assert done["timings"]["total_ms"] >= done["timings"]["retrieval_ms"] > 0


def test_stream_fallback_explains_why(client: FlaskClient) -> None:
    got = events(ask(client, FALLBACK_QUESTION))
    meta = got[0][1]
    assert meta["mode"] == "fallback" and meta["citations"] == [] and meta["sources"] == []
    assert any("below" in r or "threshold" in r for r in meta["decision_explain"]["reasons"])


def test_stream_request_errors_keep_their_status_and_body(client: FlaskClient) -> None:
    resp = ask(client, RAG_QUESTION, headers={"X-RAG-Domain": "nope"})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "unknown_domain"
    resp = client.post("/chat/stream", data="{}", headers={"Content-Type": "application/json"})
    assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "validation_error"


class BrokenStreamModel:
    name = "openai_compat"

    def generate(self, request: ChatRequest) -> str:
        raise ProviderUnavailable("chat endpoint http://127.0.0.1:9/v1 cannot be reached")

    def stream(self, request: ChatRequest) -> Any:
        yield "Part of an answer"
        raise ProviderUnavailable("chat endpoint http://127.0.0.1:9/v1 broke off the stream")


def test_a_provider_failure_mid_stream_is_an_error_event_shaped_like_chat(corpus: Corpus, embedder: Any) -> None:
    services = build_services(corpus.settings, store=corpus.store, embedder=embedder, primary=BrokenStreamModel())
    client = create_app(corpus.settings, services).test_client()
    got = events(ask(client, RAG_QUESTION))
    assert [n for n, _ in got] == ["meta", "delta", "error"]
    plain = client.post("/chat", json={"question": RAG_QUESTION})
    assert got[-1][1]["error"]["code"] == plain.get_json()["error"]["code"] == "provider_unavailable"
    assert set(got[-1][1]["error"]) == set(plain.get_json()["error"])


def test_follow_up_is_condensed_by_the_offline_rule_and_history_is_deletable(client: FlaskClient) -> None:
    cid = "conv-test-1"
    first = events(ask(client, "How many days of annual leave do employees get?", conversation_id=cid))
    follow = events(ask(client, "and for part-time staff?", conversation_id=cid))
    explain = follow[0][1]["decision_explain"]
    # a short connective constraint substitutes the phrase it replaces (employees -> part-time staff)
    assert explain["effective_query"] == "How many days of annual leave do part-time staff get?"
    assert (explain["condensed_by"], explain["condensed_rule"]) == ("rule", "substitution")
    assert "proportion to their contracted hours" in follow[-1][1]["answer"]
    assert first[0][1]["decision_explain"]["condensed_by"] == "none"
    history = client.get(f"/conversations/{cid}").get_json()
    assert [t["question"] for t in history["turns"]] == ["How many days of annual leave do employees get?",
                                                        "and for part-time staff?"]
    assert client.delete(f"/conversations/{cid}").get_json() == {"conversation_id": cid, "deleted_turns": 2}
    assert client.get(f"/conversations/{cid}").get_json()["turns"] == []
    assert client.get("/conversations/bad%20id").status_code == 400
    # after the delete the next question starts afresh: nothing to condense
    again = events(ask(client, "and for part-time staff?", conversation_id=cid))
    assert again[0][1]["decision_explain"]["condensed_by"] == "none"


def test_a_follow_up_is_condensed_only_from_turns_of_its_own_knowledge_base(client: FlaskClient) -> None:
    """Switching knowledge bases mid-conversation: the coffee domain never saw the leave question,
    so "and for part-time staff?" asked of it is not rewritten into a leave question."""
    cid = "conv-switch"
    events(ask(client, "How many days of annual leave do employees get?", conversation_id=cid))
    switched = events(ask(client, "and for part-time staff?", headers={"X-RAG-Domain": "coffee"}, conversation_id=cid))
    assert switched[0][1]["decision_explain"]["condensed_by"] == "none"
    back = events(ask(client, "and for part-time staff?", conversation_id=cid))  # the policies' own turn counts
    assert back[0][1]["decision_explain"]["effective_query"] == "How many days of annual leave do part-time staff get?"


def test_feedback_is_stored_counted_and_exported_as_golden_candidates(app: Flask, corpus: Corpus,
                                                                      tmp_path: Any, monkeypatch: Any) -> None:
    client = app.test_client()
    up = events(ask(client, RAG_QUESTION))[-1][1]["interaction_id"]
    down = events(ask(client, FALLBACK_QUESTION))[-1][1]["interaction_id"]
    resp = client.post("/feedback", json={"interaction_id": up, "rating": "up"})
    assert resp.status_code == 201
    assert resp.get_json()["mode"] == "rag" and resp.get_json()["version"] == MAIN_VERSION
    assert client.post("/feedback", json={"interaction_id": down, "rating": "down", "comment": "Should say Canberra",
                                          "expected_answer": "Canberra"}).status_code == 201
    assert client.post("/feedback", json={"interaction_id": "0" * 32, "rating": "up"}).status_code == 404
    bad = client.post("/feedback", json={"interaction_id": up, "rating": "meh"})
    assert bad.status_code == 422 and bad.get_json()["error"]["details"][0]["field"] == "rating"
    metrics = client.get("/metrics").get_data(as_text=True)
    assert f'rag_feedback_total{{mode="rag",rating="up",version="{MAIN_VERSION}"}} 1.0' in metrics
    assert f'rag_feedback_total{{mode="fallback",rating="down",version="{MAIN_VERSION}"}} 1.0' in metrics
    # a changed vote replaces the answer's verdict, it does not add a second one
    store = corpus.store
    assert client.post("/feedback", json={"interaction_id": down, "rating": "up"}).status_code == 201
    assert [f.rating for f in store.feedback() if f.interaction_id == down] == ["up"]
    assert client.post("/feedback", json={"interaction_id": down, "rating": "down", "comment": "Should say Canberra",
                                           "expected_answer": "Canberra"}).status_code == 201
    assert [(f.rating, f.comment) for f in store.feedback() if f.interaction_id == down] == [
        ("down", "Should say Canberra")]

    from backend.cli.main import cli

    monkeypatch.setenv("RAG_STORE__SQLITE__PATH", str(corpus.settings.store.sqlite.path))
    out = tmp_path / "candidates.jsonl"
    result = CliRunner().invoke(cli, ["feedback", "export", "--out", str(out)])
    assert result.exit_code == 0, result.output
    golden = load_golden_set(out)  # the candidates are a valid golden set
    mine = [q for q in golden.queries if q.query == RAG_QUESTION]
    assert mine and mine[-1].expected_mode == "rag" and set(mine[-1].expected_sources) == {"hr-handbook"}
    review = [json.loads(line) for line in (tmp_path / "candidates.review.jsonl").read_text().splitlines()]
    flagged = [r for r in review if r["query"] == FALLBACK_QUESTION]
    assert flagged[-1]["review"]["comment"] == "Should say Canberra"
    assert flagged[-1]["review"]["rating"] == "down" and flagged[-1]["expected_mode"] == "fallback"


def test_domains_lists_the_default_and_configured_domains(client: FlaskClient) -> None:
    body = client.get("/domains").get_json()
    default = body["domains"][0]
    assert (default["key"], default["alias"], default["title"]) == (None, "KB_ACTIVE", "Company policies")
    assert "Can I use my personal laptop to access company systems?" in default["example_questions"]  # config/rag.yaml
    # no title configured: the key prettified, never the alias name
    assert {"key": "coffee", "alias": "KB_COFFEE", "title": "Coffee", "example_questions": [], "not_served": None} \
        in body["domains"]
    got = events(ask(client, COFFEE_QUESTION, headers={"X-RAG-Domain": "coffee"}))
    assert got[0][1]["decision_explain"]["retrieval_target"] == "KB_COFFEE"


def keyed_app(corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Any) -> tuple[Flask, Settings]:
    base = corpus_settings(corpus.path, server={"api_keys": ["k-123"]})
    settings = base.model_copy(update={"docx": base.docx.model_copy(update={"assets_dir": str(tmp_path / "assets")})})
    png = tmp_path / "assets" / IMAGE_REF
    png.parent.mkdir(parents=True)
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(settings, services), settings


def test_with_api_keys_figure_links_are_signed_and_expire(corpus: Corpus, embedder: Any, extractive: Any,
                                                           tmp_path: Any) -> None:
    app, settings = keyed_app(corpus, embedder, extractive, tmp_path)
    client = app.test_client()
    assert client.get("/domains").status_code == 401
    assert client.get("/").status_code == 200  # the page is public: it asks for the key
    got = events(ask(client, FIGURE_QUESTION, headers={"X-API-Key": "k-123"}))
    figures = [s for s in got[0][1]["sources"] if s["chunk_type"] == "figure"]
    url = figures[0]["image_url"]
    assert url.startswith(f"/assets/{IMAGE_REF}?exp=")
    assert client.get(url).status_code == 200  # no header: the signature stands in for the key
    assert client.get(f"/assets/{IMAGE_REF}").status_code == 401
    query = parse_qs(urlparse(url).query)
    assert client.get(f"/assets/{IMAGE_REF}?exp={query['exp'][0]}&sig={'0' * 64}").status_code == 401
    assert client.get(f"/assets/hr-handbook/other.png?exp={query['exp'][0]}&sig={query['sig'][0]}").status_code == 401
    old = signed_assets.asset_url(settings, IMAGE_REF, now=time.time() - 3600)
    assert client.get(old).status_code == 401


def test_without_keys_figure_links_are_plain(client: FlaskClient) -> None:
    got = events(ask(client, FIGURE_QUESTION))
    figures = [s for s in got[0][1]["sources"] if s["chunk_type"] == "figure"]
    assert figures and figures[0]["image_url"] == f"/assets/{IMAGE_REF}"


def test_with_an_llm_the_follow_up_is_condensed_by_it_and_tokens_stream(corpus: Corpus, embedder: Any) -> None:
    from tests.core.test_stream_providers import SseEndpoint, completion, openai_model, sse_tokens

    with SseEndpoint().running() as endpoint:
        llm = openai_model(endpoint.url)
        client = create_app(corpus.settings, build_services(corpus.settings, store=corpus.store, embedder=embedder,
                                                            primary=llm)).test_client()
        endpoint.replies.append(sse_tokens(["Full-time staff ", "get 25 days [1]."]))
        first = events(ask(client, "How many days of annual leave do employees get?", conversation_id="llm-conv"))
        assert [d["text"] for n, d in first if n == "delta"] == ["Full-time staff ", "get 25 days [1]."]
        rewrite = "How much annual leave do part-time employees get?"
        endpoint.replies += [completion(rewrite + "\n"), sse_tokens(["In proportion ", "to their hours [1]."])]
        second = events(ask(client, "and for part-time staff?", conversation_id="llm-conv"))
        explain = second[-1][1]["decision_explain"]
        assert (explain["effective_query"], explain["condensed_by"]) == (rewrite, "llm")
        assert second[-1][1]["answer"] == "In proportion to their hours [1]."
        assert second[0][1]["interaction_id"] == second[-1][1]["interaction_id"]
        assert client.post("/feedback", json={"interaction_id": second[0][1]["interaction_id"],
                                              "rating": "up"}).status_code == 201
        condense = endpoint.received[1]
        assert condense["stream"] is False
        prompt = condense["messages"][1]["content"]
        assert "User: How many days of annual leave do employees get?" in prompt
        assert "Last question: and for part-time staff?" in prompt
        assert endpoint.received[2]["stream"] is True and rewrite in endpoint.received[2]["messages"][1]["content"]
