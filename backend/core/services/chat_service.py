"""Question -> search through an alias -> mode decision -> answer -> interaction row.

The service owns no connection and reads no config file: it receives the search
services (one per embedding profile, since profiles differ in query prefixes),
the answer models, the store's admin and interaction-log ports, and the settings
slices it needs. The alias is resolved by the store on every request, so a
rotation is followed without a restart.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterator, Mapping

import structlog

from backend.common import telemetry
from backend.common.config import EmbeddingSettings, PromptSettings, RetrievalSettings, SanitizeSettings
from backend.common.errors import ConfigError, UnknownDomain, VersionConflict
from backend.common.suggest import did_you_mean
from backend.core.decision_explain import DecisionExplain
from backend.core.ports import (ChatModel, ConversationLog, ExplainingChatModel, IndexAdmin, InteractionLog,
                                StreamingChatModel)
from backend.core import answer_report as ctx
from backend.core.services.conversation import (
    SUBSTITUTE_MIN, Condensed, condense, constraint_met, conversation_key, stream_pieces,
)
from backend.core.services.answerability import attach_scores
from backend.core.services.evidence import SentenceScorer, quoting_scorer
from backend.core.answer_mode import (
    Candidate,
    ModeDecision,
    count_tokens,
    decide_answer_mode,
    downgrade_on_unmet_constraint,
    downgrade_on_unusable_answer,
    is_short_query,
    may_be_abstention,
    sources_used,
    threshold_kind,
)
from backend.core.services.search_service import SearchOutcome, SearchRequest, SearchService
from backend.core.types import ChatRequest, Chunk, ConversationTurn, FieldFilter, Interaction, Visibility

log = structlog.get_logger(__name__)

#: Said when the answer must be fallback and no fallback model is configured (provider ``none``).
FALLBACK_MESSAGE = (
    "The knowledge base has no passage that answers this question, and no fallback model is configured "
    "to answer from general knowledge."
)


@dataclass(frozen=True)
class ChatQuery:
    """One question, checked once where it entered (the HTTP body model or the CLI: question
    length, ``top_k`` within ``core.requests.RequestLimits``); the service does not check it
    again. ``target`` names an alias or version explicitly (evaluation of a candidate
    version) and then wins over ``domain``; ``record=False`` keeps the question out of the
    interactions table (evaluation, ``rag ask``)."""

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
    #: the conversation's previous standalone questions when the caller holds them (an
    #: evaluation of follow-ups); None: read from the conversation log by ``conversation_id``
    history: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ChatAnswer:
    answer: str
    mode: str
    used_llm: str
    citations: tuple[ctx.Citation, ...]
    retrieved_chunks_metadata: tuple[ctx.RetrievedChunk, ...]
    used_chunks: tuple[str, ...]
    sources_used: str
    decision_explain: DecisionExplain
    decision: ModeDecision
    latency_ms: float
    #: what ``POST /feedback`` names; the turn is stored under it when the query is recorded
    interaction_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: milliseconds spent in retrieval + decision, and in generating the answer
    timings: Mapping[str, float] = field(default_factory=dict)
    #: the chunks ``citations`` name, in citation order (a page shows their text)
    cited_chunks: tuple[Chunk, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON body of ``POST /chat`` (the API validates it against its schema)."""
        return {
            "answer": self.answer,
            "mode": self.mode,
            "citations": [asdict(c) for c in self.citations],
            "retrieved_chunks_metadata": [asdict(r) for r in self.retrieved_chunks_metadata],
            "used_chunks": list(self.used_chunks),
            "sources_used": self.sources_used,
            "decision_explain": self.decision_explain.to_dict(),
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
                f"X-RAG-Domain: unknown domain {domain!r}; known domains: {', '.join(known) or '(none configured)'}"
                f"{did_you_mean(domain, known)}",
                field="X-RAG-Domain", known_domains=known,
            )
        alias, profile = self.domains[domain]
        return Route(alias, domain, profile)


@dataclass(frozen=True)
class _Plan:
    """Everything decided before the answer is generated."""

    route: Route
    condensed: Condensed
    short: bool
    outcome: SearchOutcome
    candidates: list[Candidate]
    decision: ModeDecision
    started: float
    planned_ms: float
    top_k: int
    #: one id for every event of the answer (``meta`` and ``done`` alike) and its stored turn
    interaction_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def effective_query(self) -> str:
        return self.condensed.query


#: one event of ``ChatService.stream``: ("meta", ChatAnswer) first, then ("delta", str)..., then ("done", ChatAnswer)
StreamEvent = tuple[str, Any]


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
        conversations: ConversationLog | None = None,
        condense_llm: ChatModel | None = None,
    ) -> None:
        threshold_kind(settings.distance, settings.score_mode)
        if evidence is None:
            evidence = quoting_scorer(primary)  # the extractive answerer's, one vector cache
        if settings.decision_score != "similarity" and evidence is None:
            raise ConfigError(f"retrieval.decision_score {settings.decision_score!r} needs a sentence scorer (build_runtime makes one)",
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
        #: where turns are kept (None: no history, no condensing, no feedback)
        self.conversations = conversations
        #: the LLM that rewrites follow-ups; None: the offline rule (``conversation.condense_offline``)
        self._condense_llm = condense_llm
        #: interactions that could not be written (best effort; exported by /metrics)
        self.record_failures = 0
        self._failures_lock = threading.Lock()
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
        with telemetry.span("rag.chat", group=True):
            plan = self._plan(query)
            generated = self._generate(plan.decision, plan.effective_query)
            result = self._finish(query, plan, *generated)
            # the routed names (configured ones), never the raw header a client sent
            telemetry.annotate({"rag.mode": result.mode, "rag.used_llm": result.used_llm, "rag.k": plan.top_k,
                                "rag.version": plan.outcome.version, "rag.target": plan.route.target,
                                "rag.domain": plan.route.domain})
            return result

    def stream(self, query: ChatQuery) -> Iterator[StreamEvent]:
        """The answer as events: ``meta`` (mode, explanation, citations), ``delta`` pieces of
        text, ``done`` (the final answer, recorded). A model with ``stream`` (an LLM) sends
        its tokens as they come, so ``meta`` then carries the planned decision and ``done``
        the final one (a blank answer or an LLM's ``NOT_ANSWERABLE`` still falls back: the
        primary's first characters are held back while they may still be that token, so it is
        never sent as text); any other model answers first and its text is sent sentence by
        sentence."""
        plan = self._plan(query)
        model = self._primary if plan.decision.mode != "fallback" else self._fallback
        if not isinstance(model, StreamingChatModel):
            result = self._finish(query, plan, *self._generate(plan.decision, plan.effective_query))
            yield "meta", result
            for piece in stream_pieces(result.answer):
                yield "delta", piece
            yield "done", result
            return
        used_llm = "primary" if plan.decision.mode != "fallback" else "fallback"
        yield "meta", self._result(plan, "", used_llm, plan.decision, model.name, None, 0.0)
        pieces: list[str] = []
        held = used_llm == "primary"  # the start is held back while it may still be NOT_ANSWERABLE
        # not current: the span stays open across the yields of this generator
        with telemetry.span("rag.answer", lambda: {**telemetry.model_attributes("chat", model),
                                                   "rag.mode": plan.decision.mode, "rag.used_llm": used_llm},
                            current=False):
            for token in model.stream(self._request(plan.decision.mode, plan.effective_query, plan.decision)):
                pieces.append(token)
                if held and may_be_abstention("".join(pieces)):
                    continue
                yield "delta", ("".join(pieces) if held else token)
                held = False
        text, decision, answered_by = "".join(pieces), plan.decision, model.name
        if decision.mode != "fallback":
            decision = downgrade_on_unusable_answer(decision, text)  # blank, or the LLM's NOT_ANSWERABLE
        if decision.mode == "fallback" and (used_llm == "primary" or not text.strip()):
            text, _, _, answered_by, _ = self._generate_fallback(decision, plan.effective_query)
            used_llm = "fallback"
            yield "delta", text
        elif held:  # all of it was held back, and it is an answer after all
            yield "delta", text
        yield "done", self._finish(query, plan, text.strip(), used_llm, decision, answered_by, None)

    def history(self, conversation_id: str, principal: str | None) -> list[ConversationTurn]:
        """The stored turns of a conversation (oldest first); empty without a conversation log."""
        if self.conversations is None:
            return []
        return self.conversations.conversation_turns(conversation_key(conversation_id), principal)

    @property
    def scorer(self) -> SentenceScorer | None:
        """The sentence scorer the decision judges with (and its answer reader, if any)."""
        return self._evidence

    def delete_conversation(self, conversation_id: str, principal: str | None) -> int:
        if self.conversations is None:
            return 0
        return self.conversations.delete_conversation(conversation_key(conversation_id), principal)

    # --- steps -------------------------------------------------------------------
    def _plan(self, query: ChatQuery) -> _Plan:
        started = time.perf_counter()
        route = self._route(query)
        condensed = self._condense(query, route)
        short = is_short_query(condensed.query, self._settings.short_query)
        top_k = query.top_k if query.top_k is not None else self._settings.top_k
        outcome = self._search(route, query, condensed.query, top_k)
        with telemetry.span("rag.decide", {"rag.version": outcome.version, "rag.short_query": short}):
            candidates = ctx.to_candidates(outcome.hits, self._settings.score_mode)
            if outcome.tree:  # hierarchical: the context follows document -> page -> chunk
                candidates = ctx.tree_order(candidates, outcome.tree)
            scored = attach_scores(candidates, condensed.query, self._evidence, self._settings,
                                   self._searches[route.profile].probe(outcome.version, query.visibility))
            candidates = scored.candidates
            decision = replace(decide_answer_mode(candidates, self._settings, short),
                               unknown_words=scored.unknown_words, judged_sentence=scored.best_sentence,
                               judged_by=scored.judged_by)
            decision = self._check_constraint(condensed, decision)
            telemetry.annotate({"rag.mode": decision.mode, "rag.candidates": len(candidates),
                                "rag.context_chunks": len(decision.context.used),
                                "rag.top_score": round(decision.max_similarity, 6)
                                if decision.max_similarity is not None else None})
        planned_ms = round((time.perf_counter() - started) * 1000, 3)
        return _Plan(route, condensed, short, outcome, candidates, decision, started, planned_ms, top_k)

    def _check_constraint(self, condensed: Condensed, decision: ModeDecision) -> ModeDecision:
        """A connective follow-up's answer must meet its new constraint (``conversation.constraint_met``
        on the sentence judged to answer, with the rewrite's phrase cosines), or it falls back. A
        decision by similarity alone judges no sentence, and is left as it is."""
        if condensed.constraint is None or decision.mode == "fallback" or not decision.judged_sentence:
            return decision
        similarity = self._evidence.phrase_similarities if self._evidence is not None else None
        met = constraint_met(condensed.constraint, decision.judged_sentence, similarity)
        return downgrade_on_unmet_constraint(decision, condensed.constraint, met, SUBSTITUTE_MIN)

    def _condense(self, query: ChatQuery, route: Route) -> Condensed:
        """The standalone question: the question itself outside a conversation. Only the turns
        asked of the same knowledge base count: after switching from the policies to the handbook,
        "and for managers?" is not about the policies' last question."""
        if query.history is not None:
            previous = list(query.history)
        elif query.conversation_id is None or self.conversations is None:
            return Condensed(" ".join(query.question.split()), "none")
        else:
            principal = query.visibility.principal if query.visibility is not None else None
            previous = [t.effective_query for t in self.history(query.conversation_id, principal)
                        if t.domain == route.domain]
        similarity = self._evidence.phrase_similarities if self._evidence is not None else None
        return condense(query.question, previous, self._condense_llm, similarity)

    def _result(self, plan: _Plan, text: str, used_llm: str, decision: ModeDecision, answered_by: str,
                answer_explain: dict[str, Any] | None, generated_ms: float) -> ChatAnswer:
        exclusions = self._settings.hybrid.exclude_chunk_types_from_llm
        outcome, candidates, effective_query = plan.outcome, plan.candidates, plan.effective_query
        explain = ctx.decision_explain(
            decision, effective_query=effective_query, query_tokens=count_tokens(effective_query),
            used_llm=used_llm, answered_by=answered_by, score_mode=self._settings.score_mode,
            distance=self._settings.distance, retrieval_target=plan.route.target, domain=plan.route.domain,
            version=outcome.version, strategy=outcome.strategy, score_source=outcome.score_source,
            top_k=plan.top_k, candidates=len(candidates), answer_explain=answer_explain,
            condensed_by=plan.condensed.by, condensed_rule=plan.condensed.rule,
            # the thresholds compared dense similarity; with a reranker the order came from it
            rerank=outcome.details.get("rerank"),
            # which retrieval settings chose the chunks: the served version's stamp, or the live config
            retrieval_settings=outcome.details.get("retrieval_settings"),
            # exact scan or HNSW index for the dense side, and why (embedded store; None elsewhere)
            dense_index=outcome.details.get("dense_index"),
        )
        # only the passages the answer cites, renumbered [1]..[m] in the order the answer cites them
        # (an answer with no marker, e.g. the meta event before an LLM streams, lists every used one)
        text, citations = ctx.cited_answer(decision, candidates, text, answer_explain)
        cited = tuple(citations)
        by_id = {c.chunk.chunk_id: c.chunk for c in candidates}
        return ChatAnswer(
            answer=text, mode=decision.mode, used_llm=used_llm, citations=cited, interaction_id=plan.interaction_id,
            cited_chunks=tuple(by_id[c.chunk_id] for c in cited if c.chunk_id in by_id),
            retrieved_chunks_metadata=tuple(ctx.retrieved_metadata(decision, candidates, exclusions)),
            used_chunks=tuple(c.chunk.chunk_id for c in decision.context.used) if decision.mode != "fallback" else (),
            sources_used=sources_used(decision, candidates, exclusions),
            decision_explain=explain, decision=decision,
            latency_ms=round((time.perf_counter() - plan.started) * 1000, 3),
            timings={"retrieval_ms": plan.planned_ms, "generation_ms": generated_ms},
        )

    def _finish(self, query: ChatQuery, plan: _Plan, text: str, used_llm: str, decision: ModeDecision,
                answered_by: str, answer_explain: dict[str, Any] | None) -> ChatAnswer:
        generated_ms = round((time.perf_counter() - plan.started) * 1000 - plan.planned_ms, 3)
        result = self._result(plan, text, used_llm, decision, answered_by, answer_explain, generated_ms)
        log.info("chat.answered", mode=result.mode, used_llm=used_llm, target=plan.route.target,
                 version=plan.outcome.version, max_similarity=result.decision_explain.max_similarity,
                 short_query=plan.short, latency_ms=result.latency_ms)
        if query.record:
            self._record_best_effort(query, plan.route, result)
        return result

    def _route(self, query: ChatQuery) -> Route:
        if query.target is None:
            return self.routing.route(query.domain)
        profile = self._admin.get_version(query.target).profile if self._admin.resolve_alias(query.target) is None else None
        return Route(query.target, query.domain, profile if profile in self._searches else self.routing.default_profile)

    def _search(self, route: Route, query: ChatQuery, effective_query: str, top_k: int) -> SearchOutcome:
        request = SearchRequest(effective_query, route.target, top_k, query.filters, query.strategy,
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
        including when the primary answer is blank or the LLM replied ``NOT_ANSWERABLE``
        (it judged the passages insufficient). The last item is the answerer's own
        explanation (which sentence won and why), when it gives one."""
        if decision.mode != "fallback":
            text, why = _generate_explained(self._primary, self._request(decision.mode, question, decision))
            decision = downgrade_on_unusable_answer(decision, text)  # blank, or the LLM's NOT_ANSWERABLE
            if decision.mode != "fallback":
                return text.strip(), "primary", decision, self._primary.name, why
        return self._generate_fallback(decision, question)

    def _request(self, mode: str, question: str, decision: ModeDecision) -> ChatRequest:
        if mode == "fallback":
            return ChatRequest("fallback", self._prompts.fallback, question, ())
        prompt = self._prompts.rag if mode == "rag" else self._prompts.hybrid
        return ChatRequest("rag" if mode == "rag" else "hybrid", prompt, question,
                           tuple(c.chunk for c in decision.context.used),
                           tuple(c.similarity for c in decision.context.used), decision.unknown_words)

    def _generate_fallback(self, decision: ModeDecision, question: str
                           ) -> tuple[str, str, ModeDecision, str, dict[str, Any] | None]:
        text, why = _generate_explained(self._fallback, self._request("fallback", question, decision))
        if text and text.strip():
            return text.strip(), "fallback", decision, self._fallback.name, why
        return FALLBACK_MESSAGE, "fallback", decision, "none", None

    def _record_best_effort(self, query: ChatQuery, route: Route, result: ChatAnswer) -> None:
        """Usage logging must never cost the user an answer already made: a failed write
        (a locked or full store) is logged and counted in ``record_failures``."""
        try:
            self._record(query, route, result)
        except Exception as exc:  # noqa: BLE001 - any store failure, the answer stands
            with self._failures_lock:
                self.record_failures += 1
            log.warning("chat.interaction_not_recorded", error_type=type(exc).__name__,
                        error=getattr(exc, "user_message", str(exc)), interaction_id=result.interaction_id)

    def _record(self, query: ChatQuery, route: Route, result: ChatAnswer) -> None:
        question, conversation_id = query.question, query.conversation_id
        explain = result.decision_explain.to_dict()  # the stored form, sanitized below when configured
        condensed = result.decision_explain.condensed_by != "none"
        if self._sanitize.enabled and self._sanitize.sanitize_questions:
            from backend.common.sanitizer import sanitize_interaction  # lazily: Presidio is heavy

            question, conversation_id, explain = sanitize_interaction(question, conversation_id, explain,
                                                                      self._sanitize)
            if not condensed:  # a rewrite holds earlier (already sanitized) turns: keep its scrubbed form
                explain = {**explain, "effective_query": " ".join(question.split())}
        principal = query.visibility.principal if query.visibility is not None else None
        self._interactions.record_interaction(Interaction(
            question=question, resp_mode=result.mode, used_llm=result.used_llm, domain=route.domain,
            retrieval_target=route.target, latency_ms=result.latency_ms, decision_explain=explain,
            conversation_id=conversation_id, principal=principal,
        ))
        if self.conversations is not None:
            self.conversations.record_turn(ConversationTurn(
                interaction_id=result.interaction_id,
                conversation_id=conversation_key(query.conversation_id) if query.conversation_id else None,
                question=question, effective_query=str(explain["effective_query"]), mode=result.mode,
                version=str(explain["version"]), domain=route.domain, principal=principal,
                cited_doc_ids=tuple(dict.fromkeys(c.doc_id for c in result.citations)),
            ))


def _generate_explained(model: ChatModel, request: ChatRequest) -> tuple[str, dict[str, Any] | None]:
    """``model.generate_explained`` when the model offers it (the extractive answerer), else
    ``generate`` with no explanation."""
    with telemetry.span("rag.answer", lambda: {**telemetry.model_attributes("chat", model), "rag.mode": request.mode,
                                               "rag.context_chunks": len(request.context)}):
        if isinstance(model, ExplainingChatModel):
            return model.generate_explained(request)
        return model.generate(request), None
