"""Feedback -> candidate golden queries, for a reviewer to add to the set that gates promotion.

Pure functions over stored ``Feedback`` (newest verdict per answer wins):

* thumbs **up** on a ``rag``/``hybrid`` answer -> a golden query: the standalone query,
  the cited documents as ``expected_sources`` (only the documents of the passages the
  answer cites, as its turn recorded them from ``ChatAnswer.citations``; not every passage
  that reached the prompt), the served mode as ``expected_mode``;
  thumbs up on a ``fallback`` answer -> ``expected_mode: fallback`` with no sources.
* thumbs **down** (or a thumbs up that cites nothing in rag/hybrid, which is no valid
  golden query) -> a review line: the same golden fields as a starting point plus a
  ``review`` object (rating, comment, expected answer, version, interaction id). The
  reviewer fixes the fields, drops ``review`` and moves the line into the golden set.

Every candidate line is validated as a ``GoldenQuery`` before it is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from backend.core.golden import GoldenQuery
from backend.core.types import Feedback


@dataclass(frozen=True)
class Export:
    candidates: list[dict[str, Any]]
    review: list[dict[str, Any]]


def _golden_fields(fb: Feedback) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": f"feedback-{fb.feedback_id}", "query": fb.query,
                              "expected_sources": list(fb.cited_doc_ids) if fb.mode != "fallback" else [],
                              "expected_mode": fb.mode}
    if fb.domain:
        fields["domain"] = fb.domain
    return fields


def latest_per_answer(feedback: Sequence[Feedback]) -> list[Feedback]:
    """One verdict per interaction: the newest (highest id), oldest first in the result."""
    newest: dict[str, Feedback] = {}
    for fb in sorted(feedback, key=lambda f: f.feedback_id or 0):
        newest[fb.interaction_id] = fb
    return sorted(newest.values(), key=lambda f: f.feedback_id or 0)


def export_feedback(feedback: Sequence[Feedback]) -> Export:
    candidates: list[dict[str, Any]] = []
    review: list[dict[str, Any]] = []
    for fb in latest_per_answer(feedback):
        fields = _golden_fields(fb)
        if fb.rating == "up" and (fb.cited_doc_ids or fb.mode == "fallback"):
            candidates.append(GoldenQuery.model_validate(fields).model_dump(mode="json", exclude_defaults=True))
            continue
        reason = "thumbs down" if fb.rating == "down" else "thumbs up but the answer cited no document"
        review.append({**fields, "review": {
            "reason": reason, "rating": fb.rating, "comment": fb.comment, "expected_answer": fb.expected_answer,
            "answered_mode": fb.mode, "version": fb.version, "interaction_id": fb.interaction_id,
            "created_at": fb.created_at,
        }})
    return Export(candidates, review)
