"""Two-turn conversations as a test: does a follow-up get the answer to *its* question?

A follow-up set is JSONL, one conversation a line::

    {"id": "f01", "domain": null, "first": "How many days of annual leave do full-time employees get?",
     "follow_up": "and for part-time staff?", "expected_mode": "rag",
     "expected_sources": {"annual-leave": 1}, "must_contain": ["pro rata"]}

:func:`run_followups` asks ``first``, then ``follow_up`` with ``first``'s standalone
question as the conversation so far (the chat service condenses it as ``/chat`` does for a
stored conversation), and checks the second answer's mode and ``must_contain``. Problems in
the file are reported all at once as ``file:line: what``.

A conversation whose follow-up the knowledge base does not answer ("and is there a pension
scheme?") expects ``fallback`` and has no ``must_contain``; the summary counts those apart
(``fallback_rate``), so ``must_contain_pass_rate`` is over the answerable ones only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.common.errors import EvaluationError
from backend.common.jsonl import parse_model_line
from backend.core import ranking_metrics as rm

if TYPE_CHECKING:
    from backend.core.services.chat_service import ChatService


class FollowUp(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(..., min_length=1, max_length=128)
    domain: str | None = Field(None, min_length=1)
    first: str = Field(..., min_length=1, max_length=4000)
    follow_up: str = Field(..., min_length=1, max_length=4000)
    expected_mode: Literal["rag", "hybrid", "fallback"] = "rag"
    expected_sources: dict[str, float] = Field(default_factory=dict)
    must_contain: tuple[str, ...] = Field(default=())

    @model_validator(mode="after")
    def _answerable_have_must_contain(self) -> "FollowUp":
        if self.expected_mode != "fallback" and not self.must_contain:
            raise ValueError("must_contain: expected at least one phrase (only a fallback follow-up has none)")
        if self.expected_mode == "fallback" and self.must_contain:
            raise ValueError("must_contain: a fallback follow-up has nothing to contain; leave it empty")
        return self


def load_followups(path: str | Path) -> list[FollowUp]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluationError(f"{path}: cannot read follow-up set: {exc}", path=str(path)) from exc
    rows, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            rows.append(parse_model_line(raw, FollowUp))
        except ValueError as exc:
            problems.append(f"{path}:{number}: {exc}")
    if problems:
        raise EvaluationError("follow-up set is invalid:\n" + "\n".join(problems), path=str(path), problems=problems)
    if not rows:
        raise EvaluationError(f"{path}: follow-up set holds no conversations", path=str(path))
    return rows


@dataclass(frozen=True)
class FollowUpResult:
    id: str
    follow_up: str
    effective_query: str
    condensed_rule: str | None
    mode: str
    expected_mode: str
    mode_correct: bool
    must_contain_passed: bool
    missing: tuple[str, ...]


def run_followups(chat: "ChatService", conversations: list[FollowUp], target: str | None = None
                  ) -> list[FollowUpResult]:
    """Both turns of each conversation through the chat path (its domain's alias, or ``target``:
    the version under evaluation), nothing recorded."""
    from backend.core.services.chat_service import ChatQuery

    out = []
    for c in conversations:
        first = chat.answer(ChatQuery(question=c.first, domain=c.domain, record=False, target=target))
        second = chat.answer(ChatQuery(question=c.follow_up, domain=c.domain, record=False, target=target,
                                       history=(str(first.decision_explain.effective_query),)))
        passed, missing = rm.contains_all(second.answer, c.must_contain)
        explain = second.decision_explain
        out.append(FollowUpResult(c.id, c.follow_up, str(explain.effective_query), explain.condensed_rule,
                                  second.mode, c.expected_mode, second.mode == c.expected_mode, passed, tuple(missing)))
    return out


def summary(results: list[FollowUpResult]) -> dict[str, Any]:
    """``must_contain_pass_rate`` over the answerable conversations, ``fallback_rate`` (None when
    there are none) over those whose follow-up the knowledge base does not answer."""
    answerable = [r for r in results if r.expected_mode != "fallback"]
    unanswerable = [r for r in results if r.expected_mode == "fallback"]
    return {"conversations": len(results), "answerable": len(answerable), "unanswerable": len(unanswerable),
            "must_contain_pass_rate": round(sum(r.must_contain_passed for r in answerable) / max(len(answerable), 1), 4),
            "fallback_rate": round(sum(r.mode == "fallback" for r in unanswerable) / len(unanswerable), 4)
            if unanswerable else None,
            "mode_accuracy": round(sum(r.mode_correct for r in results) / max(len(results), 1), 4)}


def render(results: list[FollowUpResult]) -> str:
    s = summary(results)
    lines = [f"follow-ups: {s['conversations']} two-turn conversations; second answer must_contain "
             f"{s['must_contain_pass_rate']:.4f} ({s['answerable']} answerable), mode accuracy {s['mode_accuracy']:.4f}"
             + (f"; {s['unanswerable']} off-topic follow-ups, fallback {s['fallback_rate']:.4f}"
                if s["unanswerable"] else "")]
    for r in results:
        if not (r.must_contain_passed and r.mode_correct):
            lines.append(f"  {r.id}: {r.follow_up!r} -> {r.effective_query!r} ({r.condensed_rule or 'as asked'}): "
                         f"{r.mode}" + (f", missing {list(r.missing)}" if r.missing else ""))
    return "\n".join(lines)
