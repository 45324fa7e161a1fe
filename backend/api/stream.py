"""``POST /chat/stream`` (server-sent events), ``GET|DELETE /conversations/<id>`` and ``GET /domains``.

``/chat/stream`` takes the body of ``/chat`` and answers ``text/event-stream``:

* ``event: meta``: mode, ``decision_explain``, citations, retrieved chunks and the cited
  sources with their text (figures with an image URL, signed when keys are on);
* ``event: delta`` (any number): ``{"text": ...}``, the answer piece by piece;
* ``event: done``: interaction id, the final answer (markers renumbered in answer order),
  mode, explanation, citations and sources (only the passages the answer cites), timings.

The request is checked and the question routed, condensed, searched and decided before
the response starts, so a bad request, an unknown domain or an unreachable store still
answer with their HTTP status and the JSON error body of ``/chat``. A failure after that
(the answer provider) arrives as ``event: error`` with that same JSON body.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from flask import Blueprint, Response, current_app, jsonify, stream_with_context

from backend.api.runtime import current_runtime
from backend.api import access, signed_assets
from backend.api.chat import chat_query
from backend.api.web_models import (
    CONVERSATION_ID_PATTERN,
    ConversationDeleted,
    ConversationResponse,
    DomainOut,
    DomainsResponse,
    SourceOut,
    StreamDelta,
    StreamDone,
    StreamMeta,
    TurnOut,
)
from backend.common.errors import InvalidConversationId
from backend.core.services.chat_service import ChatAnswer
from backend.core.sentence_segments import segment
from backend.common.config import Settings
from backend.core.services.starter_golden import read_rows, starter_path
from backend.core.services.version_status import not_served_reason
from backend.core.versions import VersionNaming

bp = Blueprint("stream", __name__)
_CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event; JSON has no raw newlines, so one ``data:`` line suffices."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _page(citation: Any) -> int | None:
    value = citation.page
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _first_heading(text: str) -> str | None:
    """The first heading the chunk's text stands under (loaders keep headings as lines)."""
    return next((heading for heading, _ in segment(text) if heading), None)


def sources(answer: ChatAnswer, settings: Settings, principal: str | None = None) -> list[dict[str, Any]]:
    """The cited chunks as the page shows them: the citation's source, section and page (those
    of the cited sentence, ``context.cited_answer``), with the chunk's text."""
    by_id = {c.chunk_id: c for c in answer.cited_chunks}
    out = []
    for citation in answer.citations:
        chunk = by_id.get(citation.chunk_id)
        if chunk is None:
            continue
        meta = chunk.metadata
        section = citation.section or next(
            (meta[k] for k in ("section", "heading", "title") if isinstance(meta.get(k), str) and meta[k]),
            None) or _first_heading(chunk.text)
        image_url = (signed_assets.asset_url(settings, citation.image_ref, principal=principal)
                     if citation.image_ref else None)
        out.append(SourceOut(marker=citation.marker, chunk_id=chunk.chunk_id, doc_id=chunk.doc_id,
                             source=citation.source, chunk_type=chunk.chunk_type, section=section,
                             page=_page(citation), text=chunk.text, image_url=image_url).model_dump(mode="json"))
    return out


def meta_event(answer: ChatAnswer, settings: Settings, principal: str | None = None) -> dict[str, Any]:
    body = answer.to_dict()
    return StreamMeta.model_validate({
        "interaction_id": answer.interaction_id, "mode": body["mode"], "decision_explain": body["decision_explain"],
        "citations": body["citations"], "retrieved_chunks_metadata": body["retrieved_chunks_metadata"],
        "used_chunks": body["used_chunks"], "sources_used": body["sources_used"],
        "sources": sources(answer, settings, principal),
    }).model_dump(mode="json")


def done_event(answer: ChatAnswer, settings: Settings, principal: str | None = None) -> dict[str, Any]:
    """The final answer with its final citations: with a token-streaming LLM, ``meta`` went out
    before the text existed, so only ``done`` knows which passages the answer cites."""
    timings = {**answer.timings, "total_ms": answer.latency_ms}
    body = answer.to_dict()
    return StreamDone.model_validate({
        "interaction_id": answer.interaction_id, "mode": answer.mode, "answer": answer.answer,
        "decision_explain": body["decision_explain"], "citations": body["citations"],
        "sources": sources(answer, settings, principal), "timings": timings,
    }).model_dump(mode="json")


def _error_body(exc: Exception) -> dict[str, Any]:
    """The JSON error body ``/chat`` would have answered for ``exc`` (the app's own handlers)."""
    response = current_app.make_response(current_app.handle_user_exception(exc))
    body = response.get_json(silent=True)
    return body if isinstance(body, dict) else {"error": {"code": "internal_error", "message": "internal server error"}}


@bp.post("/chat/stream")
def chat_stream() -> Response:
    services = current_runtime()
    settings = services.settings
    events = services.chat.stream(chat_query(services))
    asker = access.current_principal()
    who = asker.name if asker is not None else None  # signed figure links name it (issue 49 L4)
    first_name, first = next(events)  # routing, search and decision happen here: their errors keep their status

    def body() -> Iterator[str]:
        name, payload = first_name, first
        try:
            while True:
                if name == "meta":
                    yield sse("meta", meta_event(payload, settings, who))
                elif name == "delta":
                    yield sse("delta", StreamDelta(text=payload).model_dump())
                elif name == "done":
                    yield sse("done", done_event(payload, settings, who))
                name, payload = next(events)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - every failure mid-stream becomes an error event
            yield sse("error", _error_body(exc))

    response = Response(stream_with_context(body()), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"  # a proxy must not hold the events back
    response.headers["X-Answer-Mode"] = first.mode
    response.headers["X-Retrieval-Target"] = first.decision_explain["retrieval_target"]
    return response


def _conversation_id(value: str) -> str:
    if not _CONVERSATION_ID.fullmatch(value):
        raise InvalidConversationId(f"conversation id must match {CONVERSATION_ID_PATTERN}", field="conversation_id")
    return value


def _owner() -> str | None:
    principal = access.current_principal()
    return principal.name if principal is not None else None


@bp.get("/conversations/<conversation_id>")
def get_conversation(conversation_id: str) -> Response:
    chat = current_runtime().chat
    cid = _conversation_id(conversation_id)
    turns = [TurnOut(interaction_id=t.interaction_id, question=t.question, effective_query=t.effective_query,
                     mode=t.mode, version=t.version, domain=t.domain, created_at=t.created_at)
             for t in chat.history(cid, _owner())]
    return jsonify(ConversationResponse(conversation_id=cid, turns=turns).model_dump(mode="json"))


@bp.delete("/conversations/<conversation_id>")
def delete_conversation(conversation_id: str) -> Response:
    chat = current_runtime().chat
    cid = _conversation_id(conversation_id)
    deleted = chat.delete_conversation(cid, _owner())
    return jsonify(ConversationDeleted(conversation_id=cid, deleted_turns=deleted).model_dump(mode="json"))


def _pretty(key: str) -> str:
    """A domain key as a person reads it: ``field-engineering`` -> ``Field engineering``."""
    words = key.replace("_", " ").replace("-", " ").replace(".", " ").split()
    text = " ".join(words) or key
    return text[:1].upper() + text[1:]


#: example questions a knowledge base without configured ones offers: one per document, from its starter set
STARTER_EXAMPLES = 3


def starter_examples(path: Path) -> list[str]:
    """The first questions of a generated starter set, each about another document (none when
    there is no set): a new knowledge base offers questions its documents answer. The set holds
    no value the sanitizer flagged (``starter_golden.pii_free``)."""
    if not path.exists():
        return []
    out: list[str] = []
    documents: set[str] = set()
    for row in read_rows(path):
        sources = tuple(row.get("expected_sources") or ())
        if row.get("expected_mode") != "rag" or not sources or sources[0] in documents:
            continue
        documents.add(sources[0])
        out.append(str(row["query"]))
        if len(out) == STARTER_EXAMPLES:
            break
    return out


@bp.get("/domains")
def domains() -> Response:
    """The domains the page offers: the default alias, then every configured domain the
    caller may use (all of them without access control)."""
    services = current_runtime()
    routing = services.chat.routing
    embeddings = services.settings.embeddings
    principal = access.current_principal()
    default = embeddings.alias
    naming = VersionNaming(services.settings.ingest.version_name_template)
    admin = services.stores.admin
    listed = ([DomainOut(key=None, alias=routing.default_alias, title=default.title,
                         example_questions=list(default.example_questions),
                         not_served=not_served_reason(admin, embeddings, naming, None))]
              if principal is None or principal.may_use(None) else [])
    for key, (alias, _) in sorted(routing.domains.items()):
        if principal is not None and not principal.may_use(key):
            continue
        configured = embeddings.domains.get(key)
        title = configured.title if configured is not None and configured.title else _pretty(key)
        examples = list(configured.example_questions) if configured is not None else []
        if not examples:
            examples = starter_examples(starter_path(services.settings, key))
        listed.append(DomainOut(key=key, alias=alias, title=title, example_questions=examples,
                                not_served=not_served_reason(admin, embeddings, naming, key)))
    return jsonify(DomainsResponse(domains=listed).model_dump(mode="json"))

