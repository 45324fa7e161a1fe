"""End to end on /chat with the rule decision of issue 29 (``config/evidence-rules.yaml``: evidence,
answerability as the relevance bar): an off-topic look-alike falls back while its answerable twin is
answered. The shipped answer reader quotes the first look-alike as a partial answer (never ``rag``)
and still answers the second (docs/CALIBRATION.md, "What limits it"); tests/core/test_reader_decision.py
holds its own cases."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import DEFAULT_CONFIG, load_settings
from tests.api.corpus import Corpus
from tests.api.test_chat_api import post


@pytest.fixture(scope="module")
def shipped(corpus: Corpus, embedder: Any) -> FlaskClient:
    """The chat corpus decided with the rules' retrieval block (config/evidence-rules.yaml)."""
    rules = load_settings(DEFAULT_CONFIG.with_name("evidence-rules.yaml"), env={})
    settings = corpus.settings.model_copy(update={"retrieval": rules.retrieval})
    return create_app(settings, build_services(settings, store=corpus.store, embedder=embedder)).test_client()


@pytest.mark.parametrize(("twin", "look_alike"), [
    # a name of the question no retrieved passage mentions
    ("How many days of paid annual leave do full-time employees get?",
     "How many days of paid annual leave do Microsoft employees get?"),
    # a word the knowledge base never uses
    ("How many weeks of paid parental leave do parents get?",
     "How many weeks of paid parental leave do grandparents get?"),
])
def test_an_off_topic_look_alike_falls_back_while_its_twin_is_answered(shipped: FlaskClient, twin: str,
                                                                        look_alike: str) -> None:
    answered = post(shipped, twin).get_json()
    assert answered["mode"] in ("rag", "hybrid"), answered["decision_explain"]["reasons"]
    off = post(shipped, look_alike).get_json()
    assert off["mode"] == "fallback", off["decision_explain"]["reasons"]
