"""With an LLM as primary, the LLM judges whether the passages suffice: its NOT_ANSWERABLE reply
makes the answer fallback on /chat and /chat/stream, as a blank answer does. The real httpx client
(OpenAI-compatible) and the real ``oci`` SDK talk to local HTTP endpoints on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from flask.testing import FlaskClient

from backend.core.prompt import ABSTAIN_TOKEN
from backend.core.services.chat_service import FALLBACK_MESSAGE
from tests.api.corpus import HYBRID_QUESTION, RAG_QUESTION, Corpus
from tests.api.test_chat_api import app_with, post
from tests.api.test_stream_api import ask, events
from tests.core.test_stream_providers import SseEndpoint, completion, openai_model, sse_tokens
from tests.providers.oci_fake_service import (  # noqa: F401 - fixtures
    FakeOciService,
    SseEvents,
    oci_config_file,
    oci_service,
)
from tests.providers.test_oci_chat import model_for

REASON = f"the answer model judged the passages insufficient to answer ({ABSTAIN_TOKEN}) in mode rag"
ANSWER = "Full-time employees get 25 days of paid annual leave [1]."


@pytest.fixture
def llm() -> Iterator[SseEndpoint]:
    with SseEndpoint().running() as endpoint:
        yield endpoint


def openai_client(corpus: Corpus, embedder: Any, endpoint: SseEndpoint, with_fallback: bool = False) -> FlaskClient:
    models = {"primary": openai_model(endpoint.url)}
    if with_fallback:
        models["fallback"] = openai_model(endpoint.url)
    return app_with(corpus, embedder, **models).test_client()


def assert_abstained(explain: dict[str, Any], decided: str = "rag") -> None:
    assert (explain["mode"], explain["decided_mode"]) == ("fallback", decided)
    assert (explain["llm_judged_unanswerable"], explain["blank_primary_answer"]) == (True, False)
    assert explain["used_llm"] == "fallback"
    assert explain["reasons"][-1] == REASON.replace("mode rag", f"mode {decided}")


def deltas(got: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [d["text"] for n, d in got if n == "delta"]


# --- OpenAI-compatible, /chat ----------------------------------------------------------------
@pytest.mark.parametrize("reply", ["NOT_ANSWERABLE", " not answerable.\n", '```json\n{"answerable": false}\n```'])
def test_openai_compat_abstention_makes_chat_fallback(corpus: Corpus, embedder: Any, llm: SseEndpoint,
                                                      reply: str) -> None:
    llm.replies.append(completion(reply))
    resp = post(openai_client(corpus, embedder, llm), RAG_QUESTION)
    body = resp.get_json()
    assert resp.status_code == 200 and resp.headers["X-Answer-Mode"] == "fallback"
    assert body["mode"] == "fallback" and body["answer"] == FALLBACK_MESSAGE
    assert body["citations"] == [] and body["used_chunks"] == [] and body["sources_used"] == "none"
    assert_abstained(body["decision_explain"])
    assert body["decision_explain"]["answered_by"] == "none"
    system = llm.received[0]["messages"][0]["content"]
    assert f"reply with exactly {ABSTAIN_TOKEN} and nothing else" in system and "Security rule: " in system


def test_openai_compat_abstention_in_hybrid_goes_to_the_fallback_llm(corpus: Corpus, embedder: Any,
                                                                     llm: SseEndpoint) -> None:
    llm.replies += [completion(ABSTAIN_TOKEN), completion("From general knowledge: usually 20 days.")]
    body = post(openai_client(corpus, embedder, llm, with_fallback=True), HYBRID_QUESTION).get_json()
    assert body["answer"] == "From general knowledge: usually 20 days."
    assert_abstained(body["decision_explain"], decided="hybrid")
    assert body["decision_explain"]["answered_by"] == "openai_compat"
    hybrid, fallback = llm.received
    assert ABSTAIN_TOKEN in hybrid["messages"][0]["content"]
    assert ABSTAIN_TOKEN not in fallback["messages"][0]["content"]  # the fallback prompt asks for an answer
    assert fallback["messages"][1]["content"] == f"Question: {HYBRID_QUESTION}"


@pytest.mark.parametrize("reply", [ANSWER, "It is not answerable from memory, but the handbook says 25 days [1]."])
def test_openai_compat_answer_keeps_the_mode(corpus: Corpus, embedder: Any, llm: SseEndpoint, reply: str) -> None:
    llm.replies.append(completion(reply))
    body = post(openai_client(corpus, embedder, llm), RAG_QUESTION).get_json()
    assert (body["mode"], body["answer"]) == ("rag", reply)
    explain = body["decision_explain"]
    assert (explain["llm_judged_unanswerable"], explain["blank_primary_answer"], explain["used_llm"]) == (
        False, False, "primary")


# --- OpenAI-compatible, /chat/stream ------------------------------------------------------------
@pytest.mark.parametrize("tokens", [["NOT", "_ANS", "WER", "ABLE"], ["  ", "`", "NOT_ANSWERABLE", "`", "."],
                                    ["{\"answerable\"", ": false}"]])
def test_streamed_abstention_never_reaches_the_user(corpus: Corpus, embedder: Any, llm: SseEndpoint,
                                                    tokens: list[str]) -> None:
    llm.replies.append(sse_tokens(tokens))
    got = events(ask(openai_client(corpus, embedder, llm), RAG_QUESTION))
    assert [n for n, _ in got] == ["meta", "delta", "done"]
    assert got[0][1]["mode"] == "rag"  # the planned mode
    assert deltas(got) == [FALLBACK_MESSAGE]
    assert not any("answerable" in d.lower() for d in deltas(got))
    done = got[-1][1]
    assert done["mode"] == "fallback" and done["answer"] == FALLBACK_MESSAGE
    assert_abstained(done["decision_explain"])
    assert llm.received[0]["stream"] is True


def test_streamed_abstention_with_a_fallback_llm_sends_its_answer(corpus: Corpus, embedder: Any,
                                                                  llm: SseEndpoint) -> None:
    llm.replies += [sse_tokens(["NOT_ANSWERABLE"]), completion("Usually 20 days, not from the knowledge base.")]
    got = events(ask(openai_client(corpus, embedder, llm, with_fallback=True), RAG_QUESTION))
    assert deltas(got) == ["Usually 20 days, not from the knowledge base."]
    assert_abstained(got[-1][1]["decision_explain"])
    assert got[-1][1]["decision_explain"]["answered_by"] == "openai_compat"


@pytest.mark.parametrize(("tokens", "expected"), [
    (["Full-time ", "employees get ", "25 days [1]."], ["Full-time ", "employees get ", "25 days [1]."]),
    (["N", "ot", " all", " staff: 25 days [1]."], ["Not all", " staff: 25 days [1]."]),  # held, then released
    (["No", "."], ["No."]),  # a short answer that looked like the token to the end
])
def test_streamed_answer_keeps_the_mode_and_every_character(corpus: Corpus, embedder: Any, llm: SseEndpoint,
                                                            tokens: list[str], expected: list[str]) -> None:
    llm.replies.append(sse_tokens(tokens))
    got = events(ask(openai_client(corpus, embedder, llm), RAG_QUESTION))
    assert deltas(got) == expected
    done = got[-1][1]
    assert done["mode"] == "rag" and done["answer"] == "".join(tokens)
    assert done["decision_explain"]["llm_judged_unanswerable"] is False


# --- OCI Generative AI (the real oci SDK) ---------------------------------------------------------
def oci_client(corpus: Corpus, embedder: Any, service: FakeOciService, config: Path, chat_format: str) -> FlaskClient:
    return app_with(corpus, embedder, primary=model_for(service, config, chat_format)).test_client()


def cohere_reply(text: str) -> tuple[int, Any]:
    return 200, {"modelId": "cohere.command-r-plus", "modelVersion": "1",
                 "chatResponse": {"apiFormat": "COHERE", "text": text, "finishReason": "COMPLETE"}}


def generic_reply(text: str) -> tuple[int, Any]:
    return 200, {"modelId": "meta.llama", "chatResponse": {
        "apiFormat": "GENERIC", "timeCreated": "2025-01-01T00:00:00Z",
        "choices": [{"index": 0, "finishReason": "stop",
                     "message": {"role": "ASSISTANT", "content": [{"type": "TEXT", "text": text}]}}]}}


@pytest.mark.parametrize(("chat_format", "reply"), [("cohere", cohere_reply), ("generic", generic_reply)])
def test_oci_abstention_makes_chat_fallback_and_an_answer_does_not(
        corpus: Corpus, embedder: Any, oci_service: FakeOciService, oci_config_file: Path,  # noqa: F811
        chat_format: str, reply: Any) -> None:
    client = oci_client(corpus, embedder, oci_service, oci_config_file, chat_format)
    oci_service.reset(lambda body, n: reply("NOT_ANSWERABLE."))
    body = post(client, RAG_QUESTION).get_json()
    assert body["mode"] == "fallback" and body["answer"] == FALLBACK_MESSAGE
    assert_abstained(body["decision_explain"])
    chat = oci_service.requests[0]["body"]["chatRequest"]
    system = chat["preambleOverride"] if chat_format == "cohere" else chat["messages"][0]["content"][0]["text"]
    assert f"reply with exactly {ABSTAIN_TOKEN} and nothing else" in system
    oci_service.reset(lambda body, n: reply(ANSWER))
    body = post(client, RAG_QUESTION).get_json()
    assert (body["mode"], body["answer"], body["decision_explain"]["llm_judged_unanswerable"]) == ("rag", ANSWER, False)


@pytest.mark.parametrize(("chat_format", "stream_events"), [
    ("cohere", [{"apiFormat": "COHERE", "text": "NOT_"}, {"apiFormat": "COHERE", "text": "ANSWERABLE"},
                {"apiFormat": "COHERE", "text": "NOT_ANSWERABLE", "finishReason": "COMPLETE"}]),
    ("generic", [{"index": 0, "message": {"role": "ASSISTANT", "content": [{"type": "TEXT", "text": "NOT_ANSWER"}]}},
                 {"index": 0, "message": {"role": "ASSISTANT", "content": [{"type": "TEXT", "text": "ABLE"}]}},
                 {"index": 0, "finishReason": "stop"}]),
])
def test_oci_streamed_abstention_never_reaches_the_user(
        corpus: Corpus, embedder: Any, oci_service: FakeOciService, oci_config_file: Path,  # noqa: F811
        chat_format: str, stream_events: list[Any]) -> None:
    client = oci_client(corpus, embedder, oci_service, oci_config_file, chat_format)
    oci_service.reset(lambda body, n: (200, SseEvents(stream_events)))
    got = events(ask(client, RAG_QUESTION))
    assert oci_service.requests[0]["body"]["chatRequest"]["isStream"] is True
    assert deltas(got) == [FALLBACK_MESSAGE]
    assert got[-1][1]["mode"] == "fallback"
    assert_abstained(got[-1][1]["decision_explain"])
