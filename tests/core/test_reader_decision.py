"""The answer decision with the committed answer reader (issue 42), through the real chat path:
the real store, the real embedder and the reader's ONNX file in models/answer-reader/.

A question in the asker's own words is answered although its words are not the document's; a
question that swaps a name, a number or a group for another the documents never pair with the
answer is not answered ``rag``; no single unknown word vetoes an answer."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.config import REPO_ROOT
from backend.core.ports import Stores
from backend.core.services.chat_service import ChatQuery
from backend.runtime import build_runtime
from tests.api.corpus import Corpus, corpus_settings

#: the profile that decides with the committed answer reader: the shipped one
READER_PROFILE = REPO_ROOT / "config" / "rag.yaml"  # the shipped profile



@pytest.fixture(scope="module")
def chat(corpus: Corpus, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from backend.common.config import load_settings

    shipped = load_settings(READER_PROFILE, env={}).retrieval
    assert shipped.answerability.reader.enabled and shipped.decision_score == "answerability"
    settings = corpus_settings(corpus.path, retrieval=shipped.model_dump(mode="json"))
    return build_runtime(settings, stores=Stores.of(corpus.store), embedder=embedder).chat


def ask(chat: Any, question: str) -> Any:
    return chat.answer(ChatQuery(question=question, record=False))


@pytest.mark.parametrize("question, fact", [
    ("How many days off do full-time staff get each year?", "25 days"),  # no "annual leave", "employees", "receive"
    ("How far ahead must I ask for time off?", "two weeks"),  # no "annual leave", "request", "advance"
    ("How many days a week can I work from home?", "two days"),
])
def test_a_question_in_other_words_is_answered_with_the_fact(chat: Any, question: str, fact: str) -> None:
    reply = ask(chat, question)
    assert reply.mode == "rag", reply.decision_explain["reasons"]
    assert fact in reply.answer
    explain = reply.decision_explain["answerability"]
    assert explain["judged_by"] == "reader" and fact in explain["sentence"]
    assert explain["best_sentence"] >= reply.decision_explain["thresholds"]["high"]
    assert "answers the question" in explain["verdict"]


@pytest.mark.parametrize("question", [
    "How many days of paid annual leave do contractors receive per calendar year?",  # swapped group
    "How many days a week can managers work from the Lisbon office?",  # swapped place
    "Who approves leave requests for the board of directors?",  # a group the text never names
    "How many bars of pressure does a French press use?",  # off-topic for this knowledge base
])
def test_a_look_alike_is_not_answered_rag(chat: Any, question: str) -> None:
    reply = ask(chat, question)
    assert reply.mode != "rag", (reply.answer, reply.decision_explain["answerability"])


def test_an_unknown_word_vetoes_nothing(chat: Any) -> None:
    # "staff" and "off" are words this knowledge base never uses: no veto, no probe
    reply = ask(chat, "How many days off do full-time staff get each year?")
    assert reply.decision_explain["answerability"]["unknown_words"] == []
    assert reply.mode == "rag"


def test_with_an_llm_its_not_answerable_still_decides_and_the_reader_score_is_shown(
        corpus: Corpus, embedder: Any) -> None:
    from backend.common.config import load_settings
    from tests.core.test_stream_providers import SseEndpoint, completion, openai_model

    shipped = load_settings(READER_PROFILE, env={}).retrieval
    settings = corpus_settings(corpus.path, retrieval=shipped.model_dump(mode="json"))
    with SseEndpoint().running() as llm:
        chat = build_runtime(settings, stores=Stores.of(corpus.store), embedder=embedder,
                             primary=openai_model(llm.url)).chat
        llm.replies = [completion("NOT_ANSWERABLE"), completion("Full-timers get 25 days [1].")]
        refused = ask(chat, "How many days off do full-time staff get each year?")
        answered = ask(chat, "How many days off do full-time staff get each year?")
    explain = refused.decision_explain
    assert (refused.mode, explain["decided_mode"], explain["llm_judged_unanswerable"]) == ("fallback", "rag", True)
    assert explain["answerability"]["judged_by"] == "reader"
    assert explain["answerability"]["best_sentence"] >= explain["thresholds"]["high"]
    assert "language model replied" in explain["answerability"]["verdict"]
    assert (answered.mode, answered.answer) == ("rag", "Full-timers get 25 days [1].")
