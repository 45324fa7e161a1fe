"""``POST /feedback``: a reader's thumbs up or down on one answer, kept for evaluation.

The verdict names the answer by the ``interaction_id`` of its ``/chat/stream`` events and
is stored with what the turn recorded (standalone query, mode, version, domain, cited
documents, principal), so ``rag feedback export`` can turn it into a candidate golden
query. With access control only the principal who asked may rate the answer; another
principal's interaction answers 404 like an unknown one. Comment and expected answer
are sanitized like questions. ``rag_feedback_total{rating,mode,version}`` counts them.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from backend.api.runtime import current_runtime
from backend.api import access, metrics
from backend.api.chat import parse_body
from backend.api.web_models import FeedbackBody, FeedbackResponse
from backend.common.config import SanitizeSettings
from backend.common.errors import FeedbackUnavailable, InteractionNotFound
from backend.core.types import Feedback

bp = Blueprint("feedback", __name__)


def sanitized(text: str | None, settings: SanitizeSettings) -> str | None:
    """``text`` as it may be stored: sanitized like interaction questions when that is on."""
    if text is None or not (settings.enabled and settings.sanitize_questions):
        return text
    from backend.common.sanitizer import sanitize_interaction  # lazily: Presidio is heavy

    return sanitize_interaction(text, None, {}, settings)[0]


@bp.post("/feedback")
def post_feedback() -> tuple[Response, int]:
    services = current_runtime()
    body = parse_body(FeedbackBody)
    log = services.chat.conversations
    if log is None:
        raise FeedbackUnavailable("this store keeps no conversation turns, so answers cannot be rated")
    turn = log.get_turn(body.interaction_id)
    principal = access.current_principal()
    if turn is None or (principal is not None and turn.principal != principal.name):
        raise InteractionNotFound(f"no answer with interaction_id {body.interaction_id!r}", field="interaction_id")
    sanitize = services.settings.sanitize
    feedback_id = log.record_feedback(Feedback(
        interaction_id=turn.interaction_id, rating=body.rating, comment=sanitized(body.comment, sanitize),
        expected_answer=sanitized(body.expected_answer, sanitize), query=turn.effective_query, mode=turn.mode,
        version=turn.version, domain=turn.domain, principal=turn.principal, cited_doc_ids=turn.cited_doc_ids,
    ))
    metrics.count_feedback(body.rating, turn.mode, turn.version)
    out = FeedbackResponse(feedback_id=feedback_id, interaction_id=turn.interaction_id, rating=body.rating,
                           mode=turn.mode, version=turn.version)  # type: ignore[arg-type]
    return jsonify(out.model_dump(mode="json")), 201
