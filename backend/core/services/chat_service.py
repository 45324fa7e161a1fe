"""Question -> search through an alias -> mode decision -> answer -> interaction row.

The service owns no connection and reads no config file: it receives the search
services (one per embedding profile, since profiles differ in query prefixes),
the answer models, the store's admin and interaction-log ports, and the settings
slices it needs. The alias is resolved by the store on every request, so a
rotation is followed without a restart.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import structlog

from backend.common.config import EmbeddingSettings, PromptSettings, RetrievalSettings, SanitizeSettings
from backend.common.errors import ConfigError, RequestError, UnknownDomain, VersionConflict
from backend.core.ports import ChatModel, IndexAdmin, InteractionLog
from backend.core.services import context as ctx
from backend.core.services.evidence import SentenceScorer, attach_evidence
from backend.core.services.retrieval_service import (
    ModeDecision,
    count_tokens,
    decide_answer_mode,
    downgrade_on_blank_answer,
    is_short_query,
    sources_used,
    threshold_kind,
)
from backend.core.services.search_service import SearchOutcome, SearchRequest, SearchService
from backend.core.types import ChatRequest, FieldFilter, Interaction, Visibility

log = structlog.get_logger(__name__)

#: Said when the answer must be fallback and no fallback model is configured (provider ``none``).
FALLBACK_MESSAGE = (
    "The knowledge base has no passage that answers this question, and no fallback model is configured "
    "to answer from general knowledge."
)


@dataclass(frozen=True)
class ChatQuery:
    """One question. ``target`` names an alias or version explicitly (evaluation of a
    candidate version) and then wins over ``domain``; ``record=False`` keeps the
    question out of the interactions table (evaluation, ``rag ask``)."""

    question: str
    domain: str | None = None
    top_k: int | None = None
    filters: tuple[FieldFilter, ...] = ()
    strategy: str | None = None
    conversation_id: str | None = None
    target: str | None = None
    record: bool = True
    #: access control: what the asking principal may see (None only with access control off);
    #: the store applies it before top-k, so the mode is decided on visible chunks only
    visibility: Visibility | None = None


@dataclass(frozen=True)
class ChatAnswer:
    answer: str
    mode: str
    used_llm: str
    citations: tuple[ctx.Citation, ...]
    retrieved_chunks_metadata: tuple[ctx.RetrievedChunk, ...]
    used_chunks: tuple[str, ...]
    sources_used: str
    decision_explain: dict[str, Any]
    decision: ModeDecision
    latency_ms: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON body of ``POST /chat`` (the API validates it against its schema)."""
        return {
            "answer": self.answer,
            "mode": self.mode,
            "citations": [asdict(c) for c in self.citations],
            "retrieved_chunks_metadata": [asdict(r) for r in self.retrieved_chunks_metadata],
            "used_chunks": list(self.used_chunks),
            "sources_used": self.sources_used,
            "decision_explain": self.decision_explain,
        }


@dataclass(frozen=True)
class Route:
    target: str
    domain: str | None
    profile: str


class Routing:
    """``X-RAG-Domain`` key -> alias (and embedding profile); no key -> the default alias."""

    def __init__(self, default_alias: str, default_profile: str, domains: Mapping[str, tuple[str, str]]) -> None:
        self.default_alias = default_alias
        self.default_profile = default_profile
        self.domains = dict(domains)

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings) -> "Routing":
        domains = {k: (d.alias_name, d.profile or settings.default_profile) for k, d in settings.domains.items()}
        return cls(settings.alias.name, settings.default_profile, domains)

    @property
    def aliases(self) -> list[str]:
        return [self.default_alias, *(alias for alias, _ in self.domains.values())]

    def route(self, domain: str | None) -> Route:
        if domain is None:
            return Route(self.default_alias, None, self.default_profile)
        if domain not in self.domains:
            known = sorted(self.domains)
            raise UnknownDomain(
                f"X-RAG-Domain: unknown domain {domain!r}; known domains: {', '.join(known) or '(none configured)'}",
                field="X-RAG-Domain", known_domains=known,
            )
        alias, profile = self.domains[domain]
        return Route(alias, domain, profile)


class ChatService:
    """Answers questions and records each one; see the module docstring."""

    def __init__(
        self,
        searches: Mapping[str, SearchService],
        routing: Routing,
        settings: RetrievalSettings,
        prompts: PromptSettings,
        primary: ChatModel,
        fallback: ChatModel,
        admin: IndexAdmin,
        interactions: InteractionLog,
        sanitize: SanitizeSettings | None = None,
        evidence: SentenceScorer | None = None,
    ) -> None:
        threshold_kind(settings.distance, settings.score_mode)
        if evidence is None and isinstance(getattr(primary, "scorer", None), SentenceScorer):
            evidence = primary.scorer  # type: ignore[attr-defined]  # the extractive answerer's, one vector cache
        if settings.decision_score == "evidence" and evidence is None:
            raise ConfigError("retrieval.decision_score 'evidence' needs a sentence scorer (build_services makes one)",
                              field="retrieval.decision_score")
        self._evidence = evidence
        missing = {routing.default_profile, *(p for _, p in routing.domains.values())} - set(searches)
        if missing:
            raise ConfigError(f"embeddings.profiles: no search service for profile(s) {sorted(missing)}")
        self._searches = dict(searches)
        self.routing = routing
        self._settings = settings
        self._prompts = prompts
        self._primary = primary
        self._fallback = fallback
        self._admin = admin
        self._interactions = interactions
        self._sanitize = sanitize or SanitizeSettings()
        self.check_served_distances()

    @property
    def sanitize_settings(self) -> SanitizeSettings:
        """What questions are sanitized with (the evaluator redacts its reports with it too)."""
        return self._sanitize

    def check_served_distances(self) -> None:
        """Fail at startup if an existing alias serves a version of another distance than
        ``retrieval.distance``: its thresholds would compare the wrong scale."""
        for alias in self.routing.aliases:
            version = self._admin.resolve_alias(alias)
            if version is None:
                continue
            served = self._admin.get_version(version).distance
            if served != self._settings.distance:
                raise ConfigError(
                    f"alias {alias} serves version {version} with distance {served!r}, but retrieval.distance is "
                    f"{self._settings.distance!r}; thresholds are tuned for one distance",
                    field="retrieval.distance",
                )

    def answer(self, query: ChatQuery) -> ChatAnswer:
        started = time.perf_counter()
        route = self._route(query)
        effective_query = " ".join(query.question.split())
        short = is_short_query(effective_query, self._settings.short_query)
        outcome = self._search(route, query, effective_query)
        candidates = ctx.to_candidates(outcome.hits, self._settings.score_mode)
        if self._evidence is not None and self._settings.decision_score == "evidence":
            candidates = attach_evidence(candidates, effective_query, self._evidence, self._settings)
        decision = decide_answer_mode(candidates, self._settings, short)
        text, used_llm, decision, answered_by, answer_explain = self._generate(decision, effective_query)
        exclusions = self._settings.hybrid.exclude_chunk_types_from_llm
        explain = ctx.decision_explain(
            decision, effective_query=effective_query, query_tokens=count_tokens(effective_query),
            used_llm=used_llm, answered_by=answered_by, score_mode=self._settings.score_mode,
            distance=self._settings.distance, retrieval_target=route.target, domain=route.domain,
            version=outcome.version, strategy=outcome.strategy, score_source=outcome.score_source,
            top_k=self._top_k(query), candidates=len(candidates), answer_explain=answer_explain,
        )
        result = ChatAnswer(
            answer=text, mode=decision.mode, used_llm=used_llm,
            citations=tuple(ctx.citations(decision, candidates)),
            retrieved_chunks_metadata=tuple(ctx.retrieved_metadata(decision, candidates, exclusions)),
            used_chunks=tuple(c.chunk.chunk_id for c in decision.context.used) if decision.mode != "fallback" else (),
            sources_used=sources_used(decision, candidates, exclusions),
            decision_explain=explain, decision=decision,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        log.info("chat.answered", mode=result.mode, used_llm=used_llm, target=route.target, version=outcome.version,
                 max_similarity=explain["max_similarity"], short_query=short, latency_ms=result.latency_ms)
        if query.record:
            self._record(query, route, result)
        return result

    # --- steps -------------------------------------------------------------------
    def _route(self, query: ChatQuery) -> Route:
        if query.target is None:
            return self.routing.route(query.domain)
        profile = self._admin.get_version(query.target).profile if self._admin.resolve_alias(query.target) is None else None
        return Route(query.target, query.domain, profile if profile in self._searches else self.routing.default_profile)

    def _top_k(self, query: ChatQuery) -> int:
        top_k = query.top_k if query.top_k is not None else self._settings.top_k
        if not 1 <= top_k <= self._settings.max_top_k:
            raise RequestError(f"top_k must be between 1 and {self._settings.max_top_k}, got {top_k}",
                               field="top_k", limit=self._settings.max_top_k)
        return top_k

    def _search(self, route: Route, query: ChatQuery, effective_query: str) -> SearchOutcome:
        request = SearchRequest(effective_query, route.target, self._top_k(query), query.filters, query.strategy,
                                visibility=query.visibility)
        outcome = self._searches[route.profile].search(request)
        wrong = {h.distance for h in outcome.hits} - {self._settings.distance}
        if wrong:
            raise VersionConflict(
                f"{route.target} serves version {outcome.version} with distance {sorted(wrong)[0]!r}, but "
                f"retrieval.distance is {self._settings.distance!r}; thresholds are tuned for one distance",
                version=outcome.version,
            )
        return outcome

    def _generate(self, decision: ModeDecision, question: str
                  ) -> tuple[str, str, ModeDecision, str, dict[str, Any] | None]:
        """Primary model for rag/hybrid; fallback model (or the fixed message) otherwise,
        including when the primary answer is blank. The last item is the answerer's own
        explanation (which sentence won and why), when it gives one."""
        if decision.mode != "fallback":
            mode = decision.mode
            prompt = self._prompts.rag if mode == "rag" else self._prompts.hybrid
            passages = tuple(c.chunk for c in decision.context.used)
            text, why = _generate_explained(self._primary, ChatRequest(mode, prompt, question, passages))
            decision = downgrade_on_blank_answer(decision, text)
            if decision.mode != "fallback":
                return text.strip(), "primary", decision, self._primary.name, why
        text, why = _generate_explained(self._fallback, ChatRequest("fallback", self._prompts.fallback, question, ()))
        if text and text.strip():
            return text.strip(), "fallback", decision, self._fallback.name, why
        return FALLBACK_MESSAGE, "fallback", decision, "none", None

    def _record(self, query: ChatQuery, route: Route, result: ChatAnswer) -> None:
        question, conversation_id = query.question, query.conversation_id
        explain = result.decision_explain
        if self._sanitize.enabled and self._sanitize.sanitize_questions:
            from backend.common.sanitizer import sanitize_interaction  # lazily: Presidio is heavy

            question, conversation_id, explain = sanitize_interaction(question, conversation_id, explain,
                                                                      self._sanitize)
            explain = {**explain, "effective_query": " ".join(question.split())}
        self._interactions.record_interaction(Interaction(
            question=question, resp_mode=result.mode, used_llm=result.used_llm, domain=route.domain,
            retrieval_target=route.target, latency_ms=result.latency_ms, decision_explain=explain,
            conversation_id=conversation_id,
            principal=query.visibility.principal if query.visibility is not None else None,
        ))


def _generate_explained(model: ChatModel, request: ChatRequest) -> tuple[str, dict[str, Any] | None]:
    """``model.generate_explained`` when the model offers it (the extractive answerer), else
    ``generate`` with no explanation."""
    explained = getattr(model, "generate_explained", None)
    if callable(explained):
        text, why = explained(request)
        return text, why
    return model.generate(request), None
