"""A follow-up whose new constraint the answer does not meet falls back (issue 42, point 4), on the
sample corpus with the shipped decision (config/rag.yaml: evidence, the answerability model)."""

from __future__ import annotations

from typing import Any

from backend.common.config import Settings
from backend.core.services.chat_service import ChatQuery
from backend.runtime import build_runtime

FULL_TIME = "How many days of annual leave do full-time employees get?"


def test_a_follow_up_whose_new_constraint_no_sentence_meets_falls_back(eval_settings: Settings, embedder: Any) -> None:
    """"and for interns?" is rewritten to ask about interns; the sentence the decision stands on is
    the full-time one, which does not meet "interns" (phrase cosine below the rewrite's own bar), so
    the answer falls back instead of answering the previous question. "and for part-time staff?",
    met by the part-time sentence, is answered."""
    runtime = build_runtime(eval_settings, embedder=embedder)
    try:
        chat = runtime.chat
        first = chat.answer(ChatQuery(FULL_TIME, target="KB_SAMPLE_V1", record=False))
        history = (str(first.decision_explain["effective_query"]),)
        interns = chat.answer(ChatQuery("and for interns?", target="KB_SAMPLE_V1", record=False, history=history))
        assert interns.mode == "fallback"
        assert any("new constraint 'interns' is not met" in r for r in interns.decision_explain["reasons"])
        part_time = chat.answer(ChatQuery("and for part-time staff?", target="KB_SAMPLE_V1", record=False,
                                          history=history))
        assert part_time.mode in ("rag", "hybrid") and "pro rata" in part_time.answer
        assert not any("new constraint" in r for r in part_time.decision_explain["reasons"])
    finally:
        runtime.stores.close()
