"""The answer-mode decision (seed 004, "Retrieval Modes"), as pure functions.

Nothing here does I/O, reads a clock or logs: scores, thresholds and gates go
in, frozen dataclasses come out, so every boundary can be tested from a table.
The chat service calls these functions and logs what they decided.

Rules, in the order they apply:

1. A question of at most ``short_query.max_tokens`` word tokens (``\\w+`` runs,
   so "annual-leave days?" is 3 tokens) is *short*: the thresholds tighten.
2. Each hit's score becomes a *similarity* (:func:`normalize_similarity`).
3. Context is the ranked candidates whose type may reach the LLM and whose
   similarity reaches ``min_similarity_for_hybrid``, within the character budget
   (:func:`select_context`). Excluded types (figures) are skipped and scanning
   goes on, so text chunks further down still count.
4. ``rag`` if the best *LLM-eligible* similarity (or, with ``decision_score:
   evidence``, the best ``evidence`` of a usable chunk) reaches the high threshold and
   the context is not empty; ``hybrid`` if it lies in ``[low, high)`` and every
   hybrid gate holds; ``fallback`` otherwise. A figure alone can never make an
   answer ``rag``: the answerer would see nothing to ground it on.
5. A blank primary answer turns any mode into ``fallback``
   (:func:`downgrade_on_blank_answer`), and so does an LLM's reply that the
   passages do not answer the question, ``NOT_ANSWERABLE`` (:func:`is_abstention`,
   :func:`downgrade_on_unusable_answer`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import Literal, Sequence

from backend.common.config import RetrievalSettings, ShortQuerySettings
from backend.common.errors import ConfigError
from backend.core.prompt import ABSTAIN_TOKEN
from backend.core.types import Chunk

AnswerMode = Literal["rag", "hybrid", "fallback"]
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Candidate:
    """A retrieved chunk with the similarity the thresholds compare (see
    :func:`normalize_similarity`) and the store's raw score."""

    chunk: Chunk
    similarity: float
    raw_score: float
    rank: int
    #: sentence-level evidence in [0, 1] (``backend.core.services.evidence``); compared
    #: instead of ``similarity`` when ``retrieval.decision_score`` is ``evidence``
    evidence: float | None = None
    #: the best probability that one of its sentences answers the question, among those that
    #: clear the relevance bar and share a word with it (``answerability``); 0: none does
    relevance: float | None = None


@dataclass(frozen=True)
class Thresholds:
    """The thresholds one decision used. ``kind`` says which config keys they
    came from (``normalized``, ``raw_cosine``, ``raw_dot``); ``base_*`` are the
    configured values before short-query tightening."""

    low: float
    high: float
    base_low: float
    base_high: float
    kind: str
    short_query_active: bool


@dataclass(frozen=True)
class ContextSelection:
    """What may reach the prompt: ``used`` in rank order (the last one possibly
    truncated to the budget), and why the others did not."""

    used: tuple[Candidate, ...]
    excluded_by_type: tuple[str, ...]
    below_min_similarity: tuple[str, ...]
    over_budget: tuple[str, ...]

    @property
    def chars(self) -> int:
        return sum(len(c.chunk.text) for c in self.used)


@dataclass(frozen=True)
class ModeDecision:
    """The decided mode and every number it was decided on."""

    mode: AnswerMode
    reasons: tuple[str, ...]
    thresholds: Thresholds
    max_similarity: float | None
    max_eligible_similarity: float | None
    min_similarity_for_hybrid: float
    min_chunks_for_hybrid: int
    min_total_context_chars: int
    usable_chunks: int
    usable_context_chars: int
    context: ContextSelection
    #: ``hybrid.min_best_similarity`` (0: no such gate): the best chunk's similarity a partial answer needs
    min_best_similarity: float = 0.0
    decided_mode: AnswerMode = "fallback"
    blank_primary_answer: bool = False
    #: the primary LLM replied that the passages do not answer the question (``NOT_ANSWERABLE``)
    llm_judged_unanswerable: bool = False
    #: what the thresholds compared: ``similarity`` or ``evidence`` (then ``max_evidence`` is that value)
    decision_score: str = "similarity"
    max_evidence: float | None = None
    #: ``answerability``: the question's words the knowledge base never uses (a model feature)
    unknown_words: tuple[str, ...] = ()
    #: the best sentence's answerability among usable chunks, and the bar it was held to
    max_relevance: float | None = None
    relevance_bar: float | None = None
    #: the sentence judged most likely to answer, and who judged it (``reader`` or ``features``)
    judged_sentence: str | None = None
    judged_by: str | None = None

    @property
    def gates_passed(self) -> dict[str, bool]:
        return {
            "min_chunks_for_hybrid": self.usable_chunks >= self.min_chunks_for_hybrid,
            "min_total_context_chars": self.usable_context_chars >= self.min_total_context_chars,
            "min_similarity_for_hybrid": self.usable_chunks > 0,
            **({"min_best_similarity": (self.max_similarity or 0.0) >= self.min_best_similarity}
               if self.min_best_similarity > 0 else {}),
        }


# --- short queries -----------------------------------------------------------------
def count_tokens(question: str) -> int:
    """Word tokens (runs of ``\\w``): what "short" counts. Punctuation is not a token."""
    return len(_WORD.findall(question))


def is_short_query(question: str, settings: ShortQuerySettings) -> bool:
    return settings.enabled and count_tokens(question) <= settings.max_tokens


# --- scores ----------------------------------------------------------------------
def threshold_kind(distance: str, score_mode: str) -> str:
    """Which thresholds apply; raises ``ConfigError`` for a combination with none."""
    if score_mode == "normalized" and distance in ("cosine", "dot", "euclidean"):
        return "normalized"
    if score_mode == "raw" and distance in ("cosine", "dot"):
        return f"raw_{distance}"
    raise ConfigError(
        f"retrieval: score_mode {score_mode!r} is not supported with distance {distance!r}; "
        "use score_mode 'normalized' (any distance) or 'raw' with 'cosine' or 'dot'",
        field="retrieval.score_mode",
    )


def normalize_similarity(raw: float, distance: str, score_mode: str) -> float:
    """Turn a store score (higher is better) into the similarity thresholds compare.

    ``normalized`` maps into [0, 1]:
    - cosine: the cosine similarity clamped at 0. Sentence embeddings put unrelated
      text near 0, never far below, so ``(raw + 1) / 2`` would squeeze every real
      score into [0.5, 1] and leave the defaults (0.35 / 0.55) meaningless.
    - dot: ``(raw + 1) / 2`` clamped, as seed 004 prescribes (exact for unit vectors).
    - euclidean: the store returns ``-d``; for unit vectors ``cos = 1 - d^2 / 2``, so
      ``1 - d^2 / 2`` clamped gives the cosine scale and the same thresholds apply.
    ``raw`` returns the dot product or cosine similarity unchanged.
    """
    kind = threshold_kind(distance, score_mode)
    if kind != "normalized":
        return float(raw)
    if distance == "cosine":
        value = raw
    elif distance == "dot":
        value = (raw + 1.0) / 2.0
    else:
        d = -raw
        value = 1.0 - d * d / 2.0
    return min(1.0, max(0.0, float(value)))


def effective_thresholds(settings: RetrievalSettings, short_query_active: bool) -> Thresholds:
    """Configured thresholds for the score mode, tightened for short questions.

    Short questions use ``short_query.threshold_low/high`` when set (normalized mode
    only, since they are on the [0, 1] scale), else the base values plus ``boost``.
    Tightening never loosens: the result is at least the base threshold.
    """
    kind = threshold_kind(settings.distance, settings.score_mode)
    low: float | None
    high: float | None
    if kind == "normalized":
        low, high = settings.threshold_low, settings.threshold_high
    elif kind == "raw_dot":
        low, high = settings.raw_dot_low, settings.raw_dot_high
    else:
        low, high = settings.raw_cosine_low, settings.raw_cosine_high
    if low is None or high is None:
        raise ConfigError(f"retrieval: score_mode 'raw' needs {kind}_low and {kind}_high", field=f"retrieval.{kind}_low")
    base_low, base_high = float(low), float(high)
    if not short_query_active:
        return Thresholds(base_low, base_high, base_low, base_high, kind, False)
    sq = settings.short_query
    eff_low = sq.threshold_low if kind == "normalized" and sq.threshold_low is not None else base_low + sq.boost
    eff_high = sq.threshold_high if kind == "normalized" and sq.threshold_high is not None else base_high + sq.boost
    # rounded so that 0.55 + 0.05 is 0.6, not 0.6000000000000001 (a similarity of 0.6 must reach it)
    eff_low, eff_high = round(max(eff_low, base_low), 9), round(max(eff_high, base_high), 9)
    return Thresholds(eff_low, max(eff_high, eff_low), base_low, base_high, kind, True)


# --- context ---------------------------------------------------------------------
def select_context(
    candidates: Sequence[Candidate], exclusions: Sequence[str], budget: int, min_similarity: float
) -> ContextSelection:
    """Walk candidates in rank order; keep those the LLM may see, within ``budget`` chars.

    Excluded chunk types are skipped without ending the scan. The first chunk that
    does not fit is truncated to the remaining budget (so a long top chunk is never
    lost) and the scan stops; later chunks are reported as ``over_budget``.
    """
    used: list[Candidate] = []
    excluded: list[str] = []
    weak: list[str] = []
    over: list[str] = []
    remaining = budget
    for cand in sorted(candidates, key=lambda c: c.rank):
        chunk = cand.chunk
        if chunk.chunk_type in exclusions:
            excluded.append(chunk.chunk_id)
        elif cand.similarity < min_similarity:
            weak.append(chunk.chunk_id)
        elif remaining <= 0 or not chunk.text.strip():
            over.append(chunk.chunk_id)
        elif len(chunk.text) > remaining:
            used.append(replace(cand, chunk=replace(chunk, text=chunk.text[:remaining])))
            remaining = 0
        else:
            used.append(cand)
            remaining -= len(chunk.text)
    return ContextSelection(tuple(used), tuple(excluded), tuple(weak), tuple(over))


# --- the decision ----------------------------------------------------------------
def _max(values: Sequence[float]) -> float | None:
    finite = [v for v in values if not math.isnan(v)]
    return max(finite) if finite else None


def decide_answer_mode(
    candidates: Sequence[Candidate], settings: RetrievalSettings, short_query_active: bool
) -> ModeDecision:
    """Decide rag / hybrid / fallback from ranked candidates (similarities already
    normalized). See the module docstring for the rules."""
    th = effective_thresholds(settings, short_query_active)
    gates = settings.hybrid
    context = select_context(candidates, gates.exclude_chunk_types_from_llm, gates.max_context_chars,
                             gates.min_similarity_for_hybrid)
    top = _max([c.similarity for c in candidates])
    eligible = _max([c.similarity for c in candidates if c.chunk.chunk_type not in gates.exclude_chunk_types_from_llm])
    n_used, chars = len(context.used), context.chars
    reasons: list[str] = []
    if short_query_active:
        reasons.append(f"short query: thresholds tightened to low={th.low:.4g} high={th.high:.4g}")
    by_evidence = settings.decision_score in ("evidence", "answerability")
    best_evidence = _max([c.evidence for c in context.used if c.evidence is not None])
    label = {"evidence": "max evidence", "answerability": "best sentence's answerability"}.get(
        settings.decision_score, "max similarity")
    compared = best_evidence if by_evidence else eligible
    bar = settings.answerability.min_sentence_relevance if settings.judges_sentences else None
    relevant = _max([c.relevance for c in context.used if c.relevance is not None])
    mode: AnswerMode
    if eligible is None:
        reasons.append("no retrieved chunk may reach the LLM" if candidates else "no chunks retrieved")
        mode = "fallback"
    elif compared is None:  # evidence only: no usable chunk, or none was scored
        reasons.append(f"no usable chunk (similarity >= {gates.min_similarity_for_hybrid:.4g}) has evidence to compare")
        mode = "fallback"
    elif compared >= th.high and bar is not None and relevant is not None and relevant <= 0:
        reasons.append(f"{label} {compared:.4f} >= high threshold but no retrieved sentence may be quoted (none shares "
                       "a word with the question, or it names what the context or the knowledge base never mentions)")
        mode = "fallback"
    elif compared >= th.high:
        if n_used:
            reasons.append(f"{label} {compared:.4f} >= high threshold {th.high:.4g}")
            mode = "rag"
        else:
            reasons.append(f"{label} {compared:.4f} >= high threshold but no text context survived selection")
            mode = "fallback"
    elif compared >= th.low:
        reasons.append(f"{label} {compared:.4f} in [low {th.low:.4g}, high {th.high:.4g})")
        failed = _failed_gates(n_used, chars, settings, top)
        if bar is not None and (relevant is None or relevant < bar):
            failed.append("no retrieved sentence is relevant to the question: best sentence's answerability "
                          f"{relevant or 0.0:.4f} < relevance bar {bar:.4g} (answerability.min_sentence_relevance)")
        reasons.extend(failed)
        mode = "fallback" if failed else "hybrid"
        if not failed:
            reasons.append(f"hybrid gates hold: {n_used} usable chunks, {chars} context chars")
    else:
        reasons.append(f"{label} {compared:.4f} < low threshold {th.low:.4g}")
        mode = "fallback"
    return ModeDecision(
        mode=mode, reasons=tuple(reasons), thresholds=th, max_similarity=top, max_eligible_similarity=eligible,
        min_similarity_for_hybrid=gates.min_similarity_for_hybrid, min_chunks_for_hybrid=gates.min_chunks_for_hybrid,
        min_total_context_chars=gates.min_total_context_chars, usable_chunks=n_used, usable_context_chars=chars,
        context=context, decided_mode=mode, decision_score=settings.decision_score, max_evidence=best_evidence,
        max_relevance=relevant, relevance_bar=bar, min_best_similarity=gates.min_best_similarity,
    )


def _failed_gates(n_used: int, chars: int, settings: RetrievalSettings, best: float | None = None) -> list[str]:
    gates = settings.hybrid
    failed = []
    if gates.min_best_similarity > 0 and (best is None or best < gates.min_best_similarity):
        failed.append(f"hybrid gate failed: best chunk similarity {best or 0.0:.4f} < min_best_similarity "
                      f"{gates.min_best_similarity:.4g} (the knowledge base is only loosely about the question)")
    if n_used < gates.min_chunks_for_hybrid:
        failed.append(
            f"hybrid gate failed: {n_used} usable chunks (similarity >= {gates.min_similarity_for_hybrid:.4g}, "
            f"type not excluded) < min_chunks_for_hybrid {gates.min_chunks_for_hybrid}"
        )
    if chars < gates.min_total_context_chars:
        failed.append(f"hybrid gate failed: {chars} usable context chars < min_total_context_chars {gates.min_total_context_chars}")
    return failed


def downgrade_on_blank_answer(decision: ModeDecision, primary_answer: str | None) -> ModeDecision:
    """A blank primary answer means the model found nothing to say: fall back.
    Returns the decision unchanged when the answer has text or the mode already is fallback."""
    if decision.mode == "fallback" or (primary_answer is not None and primary_answer.strip()):
        return decision
    return replace(
        decision,
        mode="fallback",
        blank_primary_answer=True,
        reasons=decision.reasons + (f"primary model returned a blank answer in mode {decision.mode}",),
    )


#: Longest reply :func:`is_abstention` accepts, and so how much of a stream is held back at most.
ABSTAIN_MAX_CHARS = 256
#: ``NOT_ANSWERABLE`` in any case, with ``_``, ``-``, spaces or nothing between the words
_ABSTAIN_WORDS = re.compile(r"not[\s_-]*answerable", re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json|text)?\s*(.*?)\s*```$", re.IGNORECASE | re.DOTALL)
_WRAPPERS = "`\"'\u201c\u201d\u2018\u2019*"
#: what :func:`may_be_abstention` ignores: wrappers, whitespace, separators and end punctuation
_SQUEEZE = re.compile(r"[\s`\"'\u201c\u201d\u2018\u2019*_.!-]+")
_SQUEEZED_TOKEN = _SQUEEZE.sub("", ABSTAIN_TOKEN).lower()


def _unwrap(text: str) -> str:
    """``text`` without surrounding whitespace, a code fence (plain, ``json`` or ``text``),
    backticks, quotes, bold stars and a trailing period or exclamation mark."""
    previous: str | None = None
    while text != previous:
        previous = text
        text = text.strip()
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced.group(1)
        text = text.strip(_WRAPPERS).rstrip(".!")
    return text


def is_abstention(text: str | None) -> bool:
    """Whether an LLM's whole reply says the passages do not answer the question: the token
    ``NOT_ANSWERABLE`` (``backend.core.prompt.ABSTAIN_TOKEN``), leniently (surrounding
    whitespace, quotes, backticks or a code fence, a trailing period, any case, a space for
    the underscore), or a JSON object with ``"answerable": false``. A reply that merely
    mentions the words in a sentence is an answer, and so is anything longer than
    ``ABSTAIN_MAX_CHARS``."""
    if text is None or len(text) > ABSTAIN_MAX_CHARS:
        return False
    body = _unwrap(text)
    if _ABSTAIN_WORDS.fullmatch(body):
        return True
    if not body.startswith("{"):
        return False
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("answerable") is False


def may_be_abstention(prefix: str) -> bool:
    """Whether a streamed reply that starts with ``prefix`` can still turn out to be an
    abstention (:func:`is_abstention`); while it can, the stream holds its text back.
    Lenient on purpose: a wrong ``True`` only delays a few characters, a wrong ``False``
    would show the token. Every prefix of a reply ``is_abstention`` accepts gets ``True``."""
    if len(prefix) > ABSTAIN_MAX_CHARS:
        return False
    squeezed = _SQUEEZE.sub("", prefix).lower()
    for tag in ("", "json", "text"):  # a code fence's language tag, if any
        if tag.startswith(squeezed):
            return True
        rest = squeezed.removeprefix(tag) if squeezed.startswith(tag) else None
        if rest is not None and (_SQUEEZED_TOKEN.startswith(rest) or rest.startswith("{")):
            return True
    return False


def downgrade_on_unusable_answer(decision: ModeDecision, primary_answer: str | None) -> ModeDecision:
    """:func:`downgrade_on_blank_answer`, and also ``fallback`` when the primary model
    abstained (:func:`is_abstention`: it judged the passages insufficient). Returns the
    decision unchanged for an answer, or when the mode already is fallback."""
    decision = downgrade_on_blank_answer(decision, primary_answer)
    if decision.mode == "fallback" or not is_abstention(primary_answer):
        return decision
    return replace(
        decision,
        mode="fallback",
        llm_judged_unanswerable=True,
        reasons=decision.reasons + (
            f"the answer model judged the passages insufficient to answer ({ABSTAIN_TOKEN}) in mode {decision.mode}",),
    )


def downgrade_on_unmet_constraint(decision: ModeDecision, constraint: str | None, met: float | None,
                                  bar: float) -> ModeDecision:
    """``fallback`` when a follow-up's new ``constraint`` is not met by the sentence the decision
    stands on (``met`` below ``bar``): that sentence answers the previous question, not this one
    (issue 42). Unchanged when there is no constraint, it cannot be judged, or the mode is fallback."""
    if decision.mode == "fallback" or constraint is None or met is None or met >= bar:
        return decision
    return replace(decision, mode="fallback", reasons=decision.reasons + (
        f"the follow-up's new constraint {constraint!r} is not met by the sentence judged to answer "
        f"(match {met:.2f} < {bar}): it would answer the previous question",))


def sources_used(decision: ModeDecision, candidates: Sequence[Candidate], exclusions: Sequence[str]) -> str:
    """``all`` when every retrieved LLM-eligible chunk reached the prompt, ``partial``
    when some did, ``none`` when the answer used none (fallback, or nothing eligible)."""
    if decision.mode == "fallback" or not decision.context.used:
        return "none"
    eligible = [c for c in candidates if c.chunk.chunk_type not in exclusions]
    return "all" if len(decision.context.used) >= len(eligible) else "partial"
