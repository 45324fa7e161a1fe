"""The MCP server: search, ask, list and fetch as tools; the knowledge bases as resources.

An assistant host (Claude Desktop, an IDE, an agent framework) reaches the knowledge bases through
the Model Context Protocol with no glue code. Every tool calls the service ``/chat`` and
``/search`` call (``ChatService.answer``, ``run_search``, the store's ``fetch_chunks``) as one
principal, so what a caller sees here is what it would see over HTTP:

* over Streamable HTTP each call authenticates with the credential it would send to ``/chat``
  (``X-API-Key``, or ``Authorization: Bearer <API key or JWT>``: ``core.access.principal_from_credentials``);
* over stdio the principal is named at start (``--as``) and nothing more is visible; with
  ``access.enabled`` the server does not start without one.

No tool writes, promotes or uploads. A refused call is an MCP tool error (``isError``) carrying the
message and code the HTTP API would answer; a server-side failure names only its kind. Each call is
appended to the audit trail (``backend.core.services.audit``: ``mcp.<tool>``, the principal, outcome and
request id; the question only with ``audit.include_questions``).
"""

from __future__ import annotations

import hmac
import json
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, TypeVar

import structlog
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations

from backend.common.config import DEFAULT_DOMAIN, Settings
from backend.common.errors import ConfigError, KnowledgeBaseNotFound, PassageNotFound, RagError, Unauthorized
from backend.core.access import Principal, configured_principal, principal_from_credentials
from backend.core.answer_summary import citation_row, short_explain
from backend.core.requests import RequestLimits
from backend.core.services.admin_console import knowledge_bases
from backend.core.services.chat_service import ChatQuery
from backend.core.services.quotas import QuotaSubject, subject_for
from backend.core.services.search_query import run_search
from backend.core.types import Visibility
from backend.runtime import ServingRuntime

log = structlog.get_logger(__name__)
T = TypeVar("T")

INSTRUCTIONS = (
    "Enterprise knowledge bases with access control. Call list_knowledge_bases first to learn which knowledge "
    "bases exist and what they hold; use ask for a cited answer to a question, search_knowledge_base for ranked "
    "passages to read or quote yourself, and fetch to read a whole document or one passage by the id a search or "
    "an answer returned. Cite passages by their source, section and page."
)


@dataclass(frozen=True)
class Caller:
    """Who a call runs as: the principal (None: access control off and no ``--as``: everything)."""

    principal: Principal | None
    #: who the quotas count (``quotas``): the principal, else the API key's digest; None: not counted
    quota: QuotaSubject | None = None

    @classmethod
    def of(cls, principal: Principal | None, api_key: str | None = None) -> "Caller":
        subject = subject_for(principal.name, principal.roles) if principal is not None else subject_for(None,
                                                                                                          api_key=api_key)
        return cls(principal, subject)

    @property
    def name(self) -> str | None:
        return self.principal.name if self.principal is not None else None

    @property
    def visibility(self) -> Visibility | None:
        return self.principal.visibility if self.principal is not None else None

    def check(self, domain: str | None) -> None:
        if self.principal is not None:
            self.principal.check_domain(domain)


def stdio_caller(settings: Settings, run_as: str | None) -> Caller:
    """The one principal of a stdio server: ``--as NAME`` (a configured principal); required when
    access control is on, so a stdio server never shows more than someone may see."""
    if run_as is not None:
        return Caller.of(configured_principal(settings.access, run_as))
    if settings.access.enabled:
        raise ConfigError("access.enabled is true: rag mcp serve over stdio needs --as PRINCIPAL, one of "
                          f"{sorted(settings.access.principals)}", field="--as")
    return Caller(None)


def http_caller(settings: Settings, headers: Mapping[str, str] | None) -> Caller:
    """The principal of one Streamable HTTP request, from the credential ``/chat`` would take;
    ``Unauthorized`` for a missing or wrong one (never echoed)."""
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    key, authorization = headers.get("x-api-key"), headers.get("authorization")
    if settings.access.enabled:
        return Caller.of(principal_from_credentials(settings.access, key, authorization, bearer_keys=True))
    keys = settings.server.api_keys
    if keys:
        scheme, _, token = (authorization or "").partition(" ")
        given = (key or (token.strip() if scheme.lower() == "bearer" else "")).encode()
        matched = False
        for configured in keys:
            matched |= hmac.compare_digest(given, configured.get_secret_value().encode())
        if not matched:
            raise Unauthorized("X-API-Key (or Authorization: Bearer) is missing or wrong; this server requires an "
                               "API key", field="X-API-Key")
        return Caller.of(None, given.decode())
    return Caller(None)


def tool_message(exc: RagError) -> str:
    """What the model reads of a refused call: the HTTP API's message and code; a server-side
    failure (5xx) only its kind, as the HTTP API answers it."""
    if exc.http_status >= 500:
        return f"{exc.code}: the server could not answer ({type(exc).__name__}); the server log has the details"
    return f"{exc.code} ({exc.http_status}): {exc.user_message}"


class KnowledgeTools:
    """The tools' bodies, as plain methods over the serving runtime (the MCP layer only adapts)."""

    def __init__(self, runtime: ServingRuntime) -> None:
        self.runtime = runtime

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    def domain(self, caller: Caller, knowledge_base: str) -> str | None:
        """The domain of a knowledge base the caller may use; the same 404 for one that does not
        exist and one it may not use, naming only those it may."""
        self.runtime.refresh()
        domain = None if knowledge_base in ("", DEFAULT_DOMAIN) else knowledge_base
        exists = domain is None or domain in self.runtime.chat.routing.domains
        if exists and (caller.principal is None or caller.principal.may_use(domain)):
            return domain
        known = [kb["name"] for kb in self.list_knowledge_bases(caller)]
        raise KnowledgeBaseNotFound(f"knowledge_base: no knowledge base {knowledge_base!r} you may use; known: "
                                    f"{', '.join(known) or '(none)'}", field="knowledge_base")

    def list_knowledge_bases(self, caller: Caller) -> list[dict[str, Any]]:
        self.runtime.refresh()
        out = []
        for kb in knowledge_bases(self.settings):
            if caller.principal is not None and not caller.principal.may_use(kb.domain):
                continue
            out.append({"name": kb.key, "title": kb.title, "alias": kb.alias,
                        "served_version": self.runtime.stores.admin.resolve_alias(kb.alias)})
        return out

    def search(self, caller: Caller, query: str, knowledge_base: str, strategy: str | None, top_k: int | None,
               filters: dict[str, Any] | None) -> dict[str, Any]:
        domain = self.domain(caller, knowledge_base)
        caller.check(domain)
        from backend.api.search import SearchParams  # the /search parameters, checked the same way

        params = SearchParams.checked({"q": query, "top_k": top_k, "strategy": strategy,
                                       "filters": json.dumps(filters) if filters else None},
                                      RequestLimits.from_settings(self.settings))
        body = run_search(self.runtime, params, domain, caller.visibility)
        return {"knowledge_base": knowledge_base, "version": body.version, "strategy": body.strategy,
                "passages": [{"id": h.chunk_id, "doc_id": h.doc_id, "source": h.source,
                              "section": _section(h.metadata), "page": h.page, "score": round(h.dense_similarity, 6),
                              "text": h.text} for h in body.hits]}

    def ask(self, caller: Caller, question: str, knowledge_base: str) -> dict[str, Any]:
        domain = self.domain(caller, knowledge_base)
        caller.check(domain)
        limits = RequestLimits.from_settings(self.settings)
        limits.text(question)
        if not question.strip():
            from backend.common.errors import FieldOutOfRange

            raise FieldOutOfRange("question must contain text", field="question")
        answer = self.runtime.chat.answer(ChatQuery(question=question, domain=domain, visibility=caller.visibility))
        body = answer.to_dict()
        from backend.api.signed_assets import asset_url  # the figure links /chat signs, for this principal

        citations = [citation_row(c, asset_url(self.settings, c["image_ref"], principal=caller.name)
                                  if c.get("image_ref") else None) for c in body["citations"]]
        return {"answer": answer.answer, "mode": answer.mode, "citations": citations,
                "decision_explain": short_explain(body["decision_explain"]), "interaction_id": answer.interaction_id}

    def fetch(self, caller: Caller, id: str, knowledge_base: str) -> dict[str, Any]:
        """A passage by chunk id, else a whole document by doc_id (its passages in order); the same
        404 for a missing id and a hidden one."""
        domain = self.domain(caller, knowledge_base)
        caller.check(domain)
        route = self.runtime.chat.routing.route(domain)
        version, _ = self.runtime.store.resolve_retrieval(route.target)
        found = self.runtime.store.fetch_chunks(version, [id], visibility=caller.visibility)
        if id in found:
            chunk = found[id]
            return {"kind": "passage", "id": chunk.chunk_id, "doc_id": chunk.doc_id, "source": chunk.source,
                    "section": _section(chunk.metadata), "page": chunk.metadata.get("page"), "version": version,
                    "text": chunk.text}
        from backend.api.search import SearchParams

        limits = RequestLimits.from_settings(self.settings)
        params = SearchParams.checked({"q": id[: limits.max_question_chars], "top_k": limits.max_top_k,
                                       "strategy": "dense", "filters": json.dumps({"doc_id": id})}, limits)
        hits = sorted(run_search(self.runtime, params, domain, caller.visibility).hits, key=lambda h: h.chunk_index)
        if not hits:
            raise PassageNotFound(f"id: no passage or document {id!r} in knowledge base {knowledge_base!r} "
                                        "that you may read", field="id")
        return {"kind": "document", "id": id, "source": hits[0].source, "version": version,
                "passages": [{"id": h.chunk_id, "section": _section(h.metadata), "page": h.page, "text": h.text}
                             for h in hits]}


def _version(result: Any) -> str | None:
    """The version a tool's result came from (search, fetch: ``version``; ask: its explanation's)."""
    if not isinstance(result, dict):
        return None
    found = result.get("version") or (result.get("decision_explain") or {}).get("version")
    return found if isinstance(found, str) else None


def _section(metadata: Mapping[str, Any]) -> str | None:
    return next((metadata[k] for k in ("section", "heading", "title") if isinstance(metadata.get(k), str)
                 and metadata[k]), None)


Transport = Literal["stdio", "http"]


def build_server(runtime: ServingRuntime, caller_for: Callable[[Mapping[str, str] | None], Caller],
                 surface: str, fixed: Caller | None = None) -> MCPServer:
    """The ``MCPServer`` with the four tools and the knowledge-base resources. ``caller_for`` turns a
    call's headers (None over stdio) into its caller; ``fixed``: the one caller of a stdio server.
    Each tool call is appended to the audit trail as ``mcp.<tool>`` from ``surface``. Resources:
    ``rag://knowledge-bases/{name}`` (one knowledge base and its
    served version), and over stdio ``rag://knowledge-bases`` (the list)."""
    tools = KnowledgeTools(runtime)
    server = MCPServer(name="rag-runtime", instructions=INSTRUCTIONS, version="1.0.0")
    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)

    def call(ctx: Context | None, tool: str, knowledge_base: str | None, arguments: Mapping[str, Any],
             run: Callable[[Caller], T]) -> T:
        caller: Caller | None = None
        request_id = uuid.uuid4().hex
        try:
            caller = caller_for(ctx.headers if ctx is not None else None)
            runtime.quotas.check(caller.quota)  # a tool call counts as an HTTP request does
            result = run(caller)
        except RagError as exc:
            runtime.audit.record(f"mcp.{tool}", "denied" if exc.http_status in (401, 403, 404, 429) else "refused"
                                 if exc.http_status < 500 else "error", principal=caller.name if caller else None,
                                 knowledge_base=knowledge_base, request_id=request_id, surface=surface,
                                 detail={**arguments, "code": exc.code, "status": exc.http_status})
            log.info("mcp.tool_refused", tool=tool, code=exc.code, status=exc.http_status, request_id=request_id)
            raise ToolError(tool_message(exc)) from exc
        runtime.audit.record(f"mcp.{tool}", "ok", principal=caller.name, knowledge_base=knowledge_base,
                             version=_version(result), request_id=request_id, surface=surface, detail=arguments)
        return result

    @server.tool(annotations=read_only, description=(
        "List the knowledge bases you may search: name (pass it as knowledge_base to the other tools), title, and the "
        "version served now. Call this first when you do not know which knowledge base holds the answer."))
    def list_knowledge_bases(ctx: Context) -> dict[str, Any]:
        return call(ctx, "list_knowledge_bases", None, {},
                    lambda c: {"knowledge_bases": tools.list_knowledge_bases(c)})

    @server.tool(annotations=read_only, description=(
        "Search one knowledge base and return ranked passages with their citation: id, doc_id, source (file), "
        "section, page and score (similarity 0..1), and the passage text. Use it to read evidence yourself; use ask "
        "for a finished answer. strategy: dense (meaning), lexical (exact words, codes, names), fusion (both; a good "
        "default for mixed queries); top_k: passages to return (default configured, at most retrieval.max_top_k); "
        'filters: metadata conditions ANDed, e.g. {"tags": "policy"} or {"updated_at": {"gte": "2025-01-01"}}.'))
    def search_knowledge_base(query: str, ctx: Context, knowledge_base: str = DEFAULT_DOMAIN,
                              strategy: str | None = None, top_k: int | None = None,
                              filters: dict[str, Any] | None = None) -> dict[str, Any]:
        return call(ctx, "search_knowledge_base", knowledge_base,
                    {"query": query, "strategy": strategy, "top_k": top_k, "filters": filters},
                    lambda c: tools.search(c, query, knowledge_base, strategy, top_k, filters))

    @server.tool(annotations=read_only, description=(
        "Ask one knowledge base a question and get its answer with numbered citations ([1], [2] ...: source, section, "
        "page, score), the answer mode and a short decision_explain. mode rag: answered from the passages; hybrid: "
        "partly supported, check the citations; fallback: the knowledge base does not hold the answer (say so rather "
        "than guess). Ask one standalone question per call."))
    def ask(question: str, ctx: Context, knowledge_base: str = DEFAULT_DOMAIN) -> dict[str, Any]:
        return call(ctx, "ask", knowledge_base, {"question": question},
                    lambda c: tools.ask(c, question, knowledge_base))

    @server.tool(annotations=read_only, description=(
        "Read a passage by its id (the id of a search passage or an answer citation's chunk_id) or a whole document by "
        "its doc_id (its passages in order). Use it to read the context around a cited passage."))
    def fetch(id: str, ctx: Context, knowledge_base: str = DEFAULT_DOMAIN) -> dict[str, Any]:
        return call(ctx, "fetch", knowledge_base, {"id": id}, lambda c: tools.fetch(c, id, knowledge_base))

    if fixed is not None:  # a static resource gets no context, so only a server of one caller lists them so
        @server.resource("rag://knowledge-bases", name="knowledge-bases", mime_type="application/json",
                         description="The knowledge bases you may use, with the version each serves now.")
        def knowledge_bases_resource() -> str:
            try:
                return json.dumps({"knowledge_bases": tools.list_knowledge_bases(fixed)})
            except RagError as exc:
                raise ResourceError(tool_message(exc)) from exc

    @server.resource("rag://knowledge-bases/{name}", name="knowledge-base", mime_type="application/json",
                     description="One knowledge base: title, alias and served version.")
    def knowledge_base_resource(name: str, ctx: Context) -> str:
        def one(c: Caller) -> dict[str, Any]:
            tools.domain(c, name)
            return next(kb for kb in tools.list_knowledge_bases(c) if kb["name"] == name)

        return json.dumps(_resource(ctx, name, one))

    def _resource(ctx: Context, what: str, run: Callable[[Caller], T]) -> T:
        try:
            return run(caller_for(ctx.headers))
        except RagError as exc:
            raise ResourceError(tool_message(exc)) from exc

    return server


def stdio_server(runtime: ServingRuntime, run_as: str | None) -> MCPServer:
    """The server for one local host process: every call runs as ``run_as`` (checked now)."""
    caller = stdio_caller(runtime.settings, run_as)
    return build_server(runtime, lambda _headers: caller, "mcp-stdio", fixed=caller)


def http_app(runtime: ServingRuntime, host: str = "127.0.0.1", path: str = "/mcp") -> Any:
    """The Streamable HTTP app (Starlette, stateless: each call carries its credential, so any
    worker answers it); every call authenticates as ``/chat`` would (``http_caller``)."""
    from backend.api.hardening import is_loopback

    settings = runtime.settings
    if not is_loopback(host) and not (settings.access.enabled or settings.server.api_keys
                                      or settings.server.allow_unauthenticated_exposure):
        raise ConfigError(f"refusing to serve MCP on {host} without API keys or access control (anyone on the network "
                          "could read every knowledge base); set server.api_keys or access.enabled, or "
                          "server.allow_unauthenticated_exposure", field="--host")
    server = build_server(runtime, lambda headers: http_caller(runtime.settings, headers), "mcp-http")
    return server.streamable_http_app(streamable_http_path=path, stateless_http=True, json_response=True, host=host)
