"""A follow-up whose new constraint the answer does not meet falls back (issue 42, point 4), on the
sample corpus with the rule decision (config/evidence-rules.yaml: evidence, the answerability model).
With the shipped answer reader the same check runs on the sentence the reader judged, but there
"and for interns?" is judged met by "Employees may buy ..." (phrase cosine above the bar) and quoted
as a partial answer: a known gap (docs/CALIBRATION.md, follow-ups)."""

from __future__ import annotations

from typing import Any

from backend.common.config import DEFAULT_CONFIG, Settings, load_settings
from backend.core.services.chat_service import ChatQuery
from backend.runtime import build_runtime

FULL_TIME = "How many days of annual leave do full-time employees get?"


def test_a_follow_up_whose_new_constraint_no_sentence_meets_falls_back(eval_settings: Settings, embedder: Any) -> None:
    """"and for board members?" is rewritten to ask about board members; the sentence the decision stands
    on is the full-time one, which does not meet "board members" (phrase cosine 0.32, below the rewrite's
    own bar 0.45; "interns" scores 0.43 there, too close to the bar to test on), so
    the answer falls back instead of answering the previous question. "and for part-time staff?",
    met by the part-time sentence, is answered."""
    rules = load_settings(DEFAULT_CONFIG.with_name("evidence-rules.yaml"), env={}).retrieval
    runtime = build_runtime(eval_settings.model_copy(update={"retrieval": rules}), embedder=embedder)
    try:
        chat = runtime.chat
        first = chat.answer(ChatQuery(FULL_TIME, target="KB_SAMPLE_V1", record=False))
        history = (str(first.decision_explain["effective_query"]),)
        interns = chat.answer(ChatQuery("and for board members?", target="KB_SAMPLE_V1", record=False,
                                        history=history))
        assert interns.mode == "fallback", interns.decision_explain["reasons"]
        assert any("new constraint 'board members' is not met" in r for r in interns.decision_explain["reasons"])
        part_time = chat.answer(ChatQuery("and for part-time staff?", target="KB_SAMPLE_V1", record=False,
                                          history=history))
        assert part_time.mode in ("rag", "hybrid") and "pro rata" in part_time.answer
        assert not any("new constraint" in r for r in part_time.decision_explain["reasons"])
    finally:
        runtime.stores.close()
