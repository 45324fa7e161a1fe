"""The optional local generative answerer (``llm.primary.provider: local_llm``) with the real
Gemma 3 270M GGUF model run by llama-cpp-python (extra ``local-llm``, ``make local-llm``; skipped without it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.common.config import ChatProviderSettings, LocalLlmSettings
from backend.core.types import ChatRequest, Chunk
from backend.providers.local import llm_runtime
from backend.providers.local.llm_answerer import _answer_of
from tests.conftest import make_settings

LEAVE = Chunk("a#0", "a", "Entitlement. Every full-time employee receives 25 days of paid annual leave per calendar "
              "year, in addition to the company holidays. Part-time employees receive a pro-rata share.", "a.md", 0)


@pytest.mark.parametrize(("raw", "answer"), [
    ('{"answer": "25 days [1]"}', "25 days [1]"),
    ('{ "answer": "25 days of paid annual leave per calendar year, in addition', "25 days of paid annual leave per "
                                                                                "calendar year, in addition"),
    ('{"answer": "cut inside an escape \\u00', ""),
    ('{ "answer": "25 days of paid annual leave.\n\n[2] [INST]Passages:\n[1] [INST]Pass', "25 days of paid annual leave."),
    ('{"answer": "25 days,\nand company holidays"}', "25 days,\nand company holidays"),
    ("[1, 2]", ""),
    ("", ""),
])
def test_the_answer_field_and_a_reply_cut_off_by_max_tokens(raw: str, answer: str) -> None:
    assert _answer_of(raw) == answer


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("llama_cpp", reason=llm_runtime.SKIP_REASON)
    pytest.importorskip(llm_runtime.MODEL_PACKAGE, reason=llm_runtime.SKIP_REASON)
    from backend.providers.registry import build_chat_model

    settings = make_settings(tmp_path_factory.mktemp("llm"))
    provider = ChatProviderSettings(provider="local_llm", max_tokens=64, temperature=0.0,
                                    local=LocalLlmSettings(model_dir=str(Path(settings.resolve_path("data/llm-cache")))))
    return build_chat_model(provider, settings)


def test_the_prompt_numbers_passages_like_the_citations_and_keeps_to_its_budget(model: Any) -> None:
    other = Chunk("b#0", "b", "x" * 5000, "b.md", 0)
    messages = model.messages(ChatRequest("rag", "rag prompt", "How many days?", (LEAVE, other)))
    assert len(messages) == 1 and messages[0]["role"] == "user"
    text = messages[0]["content"]
    assert "[1] Entitlement. Every full-time employee" in text and "\n[2] xxx" in text
    assert text.count("x") <= model._max_chars and text.endswith("Question: How many days?")


def test_the_local_model_answers_from_the_passage(model: Any) -> None:
    answer = model.generate(ChatRequest("rag", "rag prompt", "How many days of annual leave do full-time employees "
                                        "get?", (LEAVE,)))
    assert model.name == "local_llm" and "25" in answer
