"""Spans for the stages of a question and of an ingest, cheap whether telemetry is on or off.

The code calls ``span``, ``traced`` and ``annotate`` everywhere; only
``telemetry_setup.configure`` (at app creation and CLI start, when ``telemetry.enabled``)
installs the OpenTelemetry SDK behind them. Off, nothing from OpenTelemetry is imported
and each call is one global read: ``span`` returns a shared null context.

Attributes are held to :data:`ATTRIBUTES`, a list of names whose values are ids, counts,
scores, settings and model names; a key outside it (or a string longer than
:data:`MAX_VALUE_CHARS`) is dropped, so no document text, question text or PII can reach
a span by accident. Exceptions are recorded by type only (``error.type``): a message may
quote user input.
"""

from __future__ import annotations

import contextvars
import functools
from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Mapping, ParamSpec, Protocol, TypeVar

import structlog

log = structlog.get_logger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

#: the longest string value an attribute may carry (model names, versions, routes); longer is dropped
MAX_VALUE_CHARS = 200

#: Every attribute a span (or the stage histogram) may carry, with what it holds. Values are
#: ids, counts, scores, settings and model names: never document text, question text or PII.
ATTRIBUTES: dict[str, str] = {
    # OpenTelemetry semantic conventions
    "http.request.method": "HTTP method of the request span",
    "http.route": "the matched route template (never the URL: a query string may hold a question)",
    "http.response.status_code": "HTTP status answered",
    "error.type": "exception class name when a stage failed (never its message)",
    "gen_ai.operation.name": "`embeddings` (query and ingest embedding) or `chat` (the answer)",
    "gen_ai.provider.name": "the provider family: local, openai_compat, oci, extractive, none",
    "gen_ai.system": "same as gen_ai.provider.name (the name older GenAI conventions use)",
    "gen_ai.request.model": "the model asked: the embedder's model stamp, the answerer's model",
    "gen_ai.response.model": "the model an OpenAI-compatible endpoint says answered",
    "gen_ai.usage.input_tokens": "prompt tokens, when the endpoint reports usage",
    "gen_ai.usage.output_tokens": "completion tokens, when the endpoint reports usage",
    # ours
    "rag.request_id": "X-Request-ID of the HTTP request (on every span of it)",
    "rag.stage": "histogram only: the span name the duration belongs to",
    "rag.target": "alias or version the question was asked against",
    "rag.domain": "the X-RAG-Domain key (a configured name), when given",
    "rag.profile": "embedding profile",
    "rag.version": "the index version searched, evaluated, written or promoted",
    "rag.strategy": "search strategy (dense, lexical, fusion, hyde, ...)",
    "rag.stamped": "whether the retrieval settings came from the version's stamp",
    "rag.k": "hits (or candidates) asked for",
    "rag.hits": "hits returned",
    "rag.candidates": "candidates a side found",
    "rag.side": "which dense side searched: chunks, questions (hyde), summaries",
    "rag.top_score": "best dense similarity of the returned hits",
    "rag.fusion.method": "rrf or score",
    "rag.lexical.terms": "number of query words sent to the full-text index (never the words)",
    "rag.lexical.feedback_terms": "number of pseudo-relevance feedback terms added (never the terms)",
    "rag.rerank.provider": "reranker provider",
    "rag.rerank.model": "reranker model name",
    "rag.rerank.top_n": "candidates reranked",
    "rag.rerank.moved": "hits whose rank the reranker changed",
    "rag.mode": "answer mode: rag, hybrid or fallback",
    "rag.short_query": "whether the short-query thresholds applied",
    "rag.context_chunks": "chunks that reached the answerer",
    "rag.used_llm": "primary or fallback answerer",
    "rag.texts": "texts embedded in one call",
    "rag.documents": "documents in a stage call",
    "rag.chunks": "chunks produced or written",
    "rag.document.type": "file suffix of a loaded document (.pdf, .docx, ...)",
    "rag.pii.findings": "PII findings of a sanitize call (counts only)",
    "rag.ingest.action": "what the version plan decided: create, new_version, in_place, up_to_date",
    "rag.documents.seen": "documents listed in the manifest",
    "rag.documents.written": "documents written by the run",
    "rag.documents.failed": "documents that failed to load, embed or enrich",
    "rag.chunks.written": "chunks written by the run",
    "rag.golden.queries": "golden queries evaluated",
    "rag.eval.hit_at_k": "hit@k of an evaluation",
    "rag.promoted": "whether the alias was rotated",
    "rag.gates.failed": "evaluation gates that failed",
    "rag.alias": "the alias a promotion rotates",
}


class _Active(Protocol):
    """What ``telemetry_setup`` installs while telemetry is on."""

    def span(self, name: str, attributes: Mapping[str, Any], *, server: bool = False,
             current: bool = True, group: bool = False) -> ContextManager[Any]: ...

    def annotate(self, attributes: Mapping[str, Any]) -> None: ...


_ACTIVE: _Active | None = None
_NULL: ContextManager[Any] = nullcontext()
_REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("rag_request_id", default=None)


def enabled() -> bool:
    return _ACTIVE is not None


def install(active: _Active | None) -> None:
    """Set (or, with None, clear) what the helpers record through; ``telemetry_setup`` only."""
    global _ACTIVE
    _ACTIVE = active


def clean(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """The attributes that may be recorded: known keys, None values left out, no long strings."""
    out: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        if value is None:
            continue
        if key not in ATTRIBUTES:
            log.warning("telemetry.attribute_dropped", key=key, reason="not in telemetry.ATTRIBUTES")
            continue
        if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
            log.warning("telemetry.attribute_dropped", key=key, reason=f"longer than {MAX_VALUE_CHARS} characters")
            continue
        out[key] = value
    return out


Attributes = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


def span(name: str, attributes: Attributes = None, *, current: bool = True, group: bool = False
         ) -> ContextManager[Any]:
    """A span around a stage (a null context while telemetry is off). ``attributes`` may be a
    function, called only while on. ``current=False``: the span is not made current (a stage
    spread over a generator's yields). ``group=True``: a span that only groups stages
    (``rag.chat``, ``rag.search``); directly under a request span (or another group) it is not
    made, its attributes go on that span, which saves spans where each costs the most."""
    active = _ACTIVE
    if active is None:
        return _NULL
    return active.span(name, clean(attributes() if callable(attributes) else attributes), current=current,
                       group=group)


def server_span(name: str, attributes: Mapping[str, Any] | None = None) -> ContextManager[Any]:
    """The span of one HTTP request (kind SERVER, not in the stage histogram)."""
    active = _ACTIVE
    if active is None:
        return _NULL
    return active.span(name, clean(attributes), server=True)


def annotate(attributes: Mapping[str, Any]) -> None:
    """Add attributes to the current span (known once the stage has run); nothing while off."""
    active = _ACTIVE
    if active is not None:
        active.annotate(clean(attributes))


def traced(name: str, *, attributes: Callable[..., Mapping[str, Any]] | None = None,
           result: Callable[[Any], Mapping[str, Any]] | None = None,
           group: bool = False) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a stage function: ``attributes(*args, **kwargs)`` at the start and ``result(value)``
    at the end give its span's attributes (``group``: see ``span``); while telemetry is off the
    function is called directly."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def inner(*args: P.args, **kwargs: P.kwargs) -> R:
            active = _ACTIVE
            if active is None:
                return fn(*args, **kwargs)
            with active.span(name, clean(attributes(*args, **kwargs) if attributes is not None else None),
                             group=group):
                value = fn(*args, **kwargs)
                if result is not None:
                    active.annotate(clean(result(value)))
                return value

        return inner

    return wrap


def bind_request_id(request_id: str) -> contextvars.Token[str | None]:
    """Every span started in this context carries ``rag.request_id`` (``unbind_request_id`` after)."""
    return _REQUEST_ID.set(request_id)


def unbind_request_id(token: contextvars.Token[str | None]) -> None:
    try:
        _REQUEST_ID.reset(token)
    except ValueError:  # reset from another context (a streamed response finishing elsewhere)
        _REQUEST_ID.set(None)


def request_id() -> str | None:
    return _REQUEST_ID.get()


def provider_name(component: object) -> str:
    """``gen_ai.provider.name`` of a model adapter: its ``name`` when it has one (answerers), else
    the provider package it comes from (``backend.providers.<name>``)."""
    name = getattr(component, "name", None)
    if isinstance(name, str) and name:
        return name
    module = type(component).__module__.split(".")
    return module[2] if len(module) > 2 and module[:2] == ["backend", "providers"] else type(component).__name__


def model_attributes(operation: str, component: object, model: str | None = None) -> dict[str, Any]:
    """The GenAI semantic-convention attributes of a call to ``component`` (an embedder or an answerer)."""
    provider = provider_name(component)
    asked = model or getattr(component, "model_id", None) or provider
    return {"gen_ai.operation.name": operation, "gen_ai.provider.name": provider, "gen_ai.system": provider,
            "gen_ai.request.model": str(asked)}
