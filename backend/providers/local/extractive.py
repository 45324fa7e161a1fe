"""An offline answerer that quotes the sentence of the context that answers the question.

It lets the default profile run with no LLM at all. Three steps:

1. **Segmentation** (:func:`segment`). A chunk is read line by line: a short line
   without closing punctuation that stands alone (a title or section heading) becomes
   the *heading* of what follows, never text; a list item (``-``, ``*``, ``1.``) is
   its own unit without its marker; a table row (``a | b | c``) is its own unit,
   rendered with the header row's column names (``Level: A2; Areas: Floor 4``);
   paragraph lines wrapped by a PDF are joined back. Units are then cut into
   sentences. So a sentence never swallows a heading, a list marker or a table cell.
2. **Scoring** (:func:`score_sentence`). Each sentence is scored for the question:
   ``dense`` (cosine with the local model, already loaded for retrieval) +
   ``LEXICAL_WEIGHT`` x the share of the question's content words it (or, at half
   weight, its heading) contains + ``ANSWER_TYPE_WEIGHT`` when it carries what the
   question asks for: "how long/often/quickly" a duration (a number with a time unit),
   "how many/much" a number (a code such as "SEC-310" is none), "when" a date or time,
   "who" a name or role, "where" a place, "which" an option (a name, code or number),
   "what are the .../which ... contain" a list (an item, a row, an enumeration). A
   document's fact line ("Owner: ... - Last reviewed: ...") matches no answer type.
3. **Output**. The best sentence leads; the sentence right after it follows when it
   continues it (starts with "They", "It", "This", ...); another follows only if it
   scores within ``SUPPORT_RATIO`` of the lead and adds content words the answer does
   not have, up to ``max_sentences``. A question that asks two things ("..., and what
   is the hotline number?") also gets the best sentence for its second part; a question
   that asks for a list ("What are the ...", "Which ... does the kit contain?") gets the
   items (or table rows) of the best-matching list; a chosen sentence of a short list
   item brings the rest of its item, and a "what should I do" question the rest of the
   lead's short paragraph (a procedure). A document's owner/date line never supports.
   Every sentence keeps the marker ``[n]`` of its passage.

Segmentation and scoring live in ``backend.core.services.evidence`` (the mode decision
uses the same scores when ``retrieval.decision_score`` is ``evidence``); the ranking adds
``PASSAGE_WEIGHT / n`` for passage ``[n]``, the retrieval rank as a prior.

``generate_explained`` also returns which sentence won and why (its scores, the
question's answer type and content words); the chat service puts that into
``decision_explain.answer_explain``. Sentence vectors are cached (LRU), so a chunk
seen before costs nothing to rank again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import structlog

from backend.common.config import AnswerabilitySettings
from backend.core.ports import AnswerReader, Embedder
from backend.core.services.answerability import AnswerabilityJudge, QuestionReading, model_from
from backend.core.services.evidence import (  # noqa: F401 - re-exported: the answerer's vocabulary
    ANAPHORA,
    ANSWER_TYPE_WEIGHT,
    LEXICAL_WEIGHT,
    PASSAGE_WEIGHT,
    SUPPORT_MIN_NEW_WORDS,
    SUPPORT_RATIO,
    ScoredSentence,
    Sentence,
    SentenceScorer,
)
from backend.core.sentence_words import content_words, question_type
from backend.core.injection import addressed_to_assistant
from backend.core.types import ChatRequest

log = structlog.get_logger(__name__)

NO_ANSWER = "The knowledge base has no passage that answers this question."
PARTIAL_NOTE = "The knowledge base only partly covers this question; what it says:"


class ExtractiveChatModel:
    """``ChatModel`` that answers with the context sentence that answers best, with citation markers."""

    name = "extractive"

    def __init__(self, embedder: Embedder | None = None, max_sentences: int = 4, cache_size: int = 20_000,
                 answerability: AnswerabilitySettings | None = None, max_answer_chars: int = 1200,
                 reader: AnswerReader | None = None, reader_sentences: int = 24) -> None:
        self._max_sentences = max_sentences
        self._max_chars = max_answer_chars
        #: the sentence scorer, shared with the chat service's evidence decision (one vector cache); with
        #: the trained ``reader`` its probabilities choose the sentences (``answerability.reader``)
        self.scorer = SentenceScorer(embedder, cache_size, reader, reader_sentences)
        #: with it, sentences are chosen by their probability of answering (``answerability``), and a
        #: sentence below ``min_sentence_relevance`` or sharing no word with the question is never quoted
        self._judge = AnswerabilityJudge(self.scorer, model_from(answerability)) if answerability else None
        self._bar = answerability.min_sentence_relevance if answerability else 0.0

    def generate(self, request: ChatRequest) -> str:
        return self.generate_explained(request)[0]

    def generate_explained(self, request: ChatRequest) -> tuple[str, dict[str, Any] | None]:
        """The answer and why: the question's answer type and content words, and each
        chosen sentence (``lead`` first, then ``support``) with its scores; the best
        sentence left out is reported as ``runner_up``."""
        if request.mode == "fallback" or not request.context:
            return NO_ANSWER, None
        request, excluded = _without_instructions(request)
        text, explain = self._generate(request)
        if excluded and explain is not None:
            explain["excluded_passages"] = excluded
        return text, explain

    def _generate(self, request: ChatRequest) -> tuple[str, dict[str, Any] | None]:
        if self._judge is not None:
            return self._generate_judged(request)
        sentences = self.scorer.sentences(request.context)
        if not sentences:
            return "", None
        scored = self.scorer.score(request.question, sentences)
        ranked = sorted(scored, key=lambda s: -_rank_score(s))
        chosen = self._choose(ranked, scored)
        for part in question_parts(request.question)[1:]:  # "..., and what is the hotline number?"
            best = max(self.scorer.score(part, sentences), key=_rank_score)
            if all(c.sentence.position != best.sentence.position for c in chosen):
                chosen.append(scored[best.sentence.position])
        if question_type(request.question) == "list":
            chosen = _whole_list(chosen, ranked, scored)
        chosen = _whole_items(chosen, scored, whole_paragraph=bool(_PROCEDURE.search(request.question)))
        body = " ".join(f"{s.sentence.text} [{s.sentence.passage}]" for s in chosen)
        text = f"{PARTIAL_NOTE} {body}" if request.mode == "hybrid" else body
        left = [s for s in ranked if s not in chosen]
        explain: dict[str, Any] = {
            "method": "extractive", "question_type": question_type(request.question),
            "content_words": content_words(request.question), "candidates": len(scored),
            "scoring": f"dense + {LEXICAL_WEIGHT} x lexical + {ANSWER_TYPE_WEIGHT} x answer_type_match; ranked with "
                       f"+ {PASSAGE_WEIGHT} / passage number",
            "sentences": [s.explain("lead" if i == 0 else "support") for i, s in enumerate(chosen)],
            "runner_up": left[0].explain("runner_up") if left else None,
        }
        return text, explain

    def _generate_judged(self, request: ChatRequest) -> tuple[str, dict[str, Any] | None]:
        """Quote only sentences that answer: the most probable one leads, then (in document
        order) what supports it, the rest of a list, the second part of a two-part question;
        framing sentences, document fact lines and sentences sharing no word with the question
        never. Nothing relevant -> a blank answer (the chat service falls back)."""
        judge = self._judge
        assert judge is not None
        judged = judge.judge(request.question, request.context, request.similarities or None,
                             len(request.unknown_words))
        reading = QuestionReading.of(request.question)
        prob = {j.sentence.position: j.probability for j in judged}
        in_order = [j.scored for j in judged]
        # hybrid quotes only sentences that clear the relevance bar; rag (the evidence reached the
        # high threshold) any that shares a word with the question
        bar = self._bar if request.mode == "hybrid" else 0.0
        quotable = {j.sentence.position for j in judged
                    if j.probability >= bar and j.quotable(reading)}
        explain: dict[str, Any] = {
            "method": "extractive", "question_type": reading.qtype, "content_words": sorted(reading.content),
            "candidates": len(judged), "quotable": len(quotable), "relevance_bar": bar,
            "scoring": "probability that the sentence answers (retrieval.answerability)",
        }
        if not quotable:
            return "", {**explain, "sentences": [], "runner_up": None}

        def key(s: ScoredSentence) -> float:
            return prob[s.sentence.position]

        # the reader's probability saturates near its top (0.95 and 0.947 say the same): among
        # sentences it finds about equally likely, the one closer to the question in meaning leads
        ranked = sorted((s for s in in_order if s.sentence.position in quotable),
                        key=lambda s: -(key(s) + LEAD_DENSE_WEIGHT * s.dense))
        chosen = self._choose(ranked, in_order, key, quotable)
        lead, nxt = chosen[0], chosen[0].sentence.position + 1
        if not lead.answer_type and nxt < len(in_order) and in_order[nxt].answer_type \
                and in_order[nxt].sentence.unit == lead.sentence.unit and in_order[nxt] not in chosen:
            chosen.insert(1, in_order[nxt])  # the lead's own paragraph gives the figure it leads to
        for part in question_parts(request.question)[1:]:
            part_judged = [j for j in judge.judge(part, request.context, request.similarities or None,
                                                  len(request.unknown_words))
                           if j.sentence.position in quotable]
            if part_judged:
                best = max(part_judged, key=lambda j: j.probability)
                if all(c.sentence.position != best.sentence.position for c in chosen):
                    chosen.append(in_order[best.sentence.position])
        if reading.qtype == "list":  # the items of the best-ranked quotable list, whatever their own scores
            best_item = next((s for s in ranked if s.sentence.kind in ("item", "row")), None)
            if best_item is not None:
                members = [s for s in in_order if s.sentence.kind == best_item.sentence.kind
                           and s.sentence.heading == best_item.sentence.heading][:LIST_MAX_ITEMS]
                chosen = [c for c in chosen[:1] if c not in members] + members
        chosen = _whole_items(chosen, in_order, whole_paragraph=bool(_PROCEDURE.search(request.question)))
        lead, rest = chosen[0], sorted(chosen[1:], key=lambda s: s.sentence.position)
        text = _render([lead, *rest], self._max_chars)
        if request.mode == "hybrid":
            text = f"{PARTIAL_NOTE} {text}"
        left = [s for s in ranked if s not in chosen]
        by_pos = {j.sentence.position: j for j in judged}
        explain["sentences"] = [{**s.explain("lead" if i == 0 else "support"), "answerability": round(key(s), 4),
                                 "contributions": judge.model.contributions(by_pos[s.sentence.position].features)[:4]}
                                for i, s in enumerate([lead, *rest])]
        explain["runner_up"] = {**left[0].explain("runner_up"), "answerability": round(key(left[0]), 4)} if left else None
        return text, explain

    def _choose(self, ranked: list[ScoredSentence], in_order: list[ScoredSentence], key: Any = None,
                allowed: set[int] | None = None) -> list[ScoredSentence]:
        """The lead, then: the sentence right after it when that one continues it ("They
        are shredded on site."), then the next best that score within ``SUPPORT_RATIO``
        of the lead and bring ``SUPPORT_MIN_NEW_WORDS`` content words it lacks."""
        key = key or _rank_score
        lead = ranked[0]
        chosen = [lead]
        nxt = lead.sentence.position + 1
        if nxt < len(in_order) and in_order[nxt].sentence.chunk_id == lead.sentence.chunk_id \
                and ANAPHORA.match(in_order[nxt].sentence.text) and self._max_sentences > 1 \
                and (allowed is None or nxt in allowed):
            chosen.append(in_order[nxt])
        covered = set().union(*(content_words(c.sentence.text) for c in chosen))
        limit = self._max_sentences
        for cand in ranked[1:]:
            if len(chosen) >= limit or key(cand) < SUPPORT_RATIO * key(lead):
                break
            new = set(content_words(cand.sentence.text)) - covered
            # a document's owner/date line may lead when nothing else answers, never support
            if cand not in chosen and cand.sentence.kind != "meta" and len(new) >= SUPPORT_MIN_NEW_WORDS:
                chosen.append(cand)
                covered |= new
        return chosen


#: how much a sentence's similarity to the question (0..1) adds to the reader's probability when the
#: lead is chosen: enough to order sentences the reader scores within a few hundredths, never enough
#: to lead with one it finds clearly less likely
LEAD_DENSE_WEIGHT = 0.1


def _without_instructions(request: ChatRequest) -> tuple[ChatRequest, list[int]]:
    """The request with every passage addressed to an AI assistant emptied (its number kept, so
    the others' ``[n]`` markers stay right), and those passages' numbers (issue 49 L5): such a
    passage is never quoted, whatever the question; all of them emptied -> a blank answer, which
    the chat service turns into its fallback."""
    excluded = [n for n, chunk in enumerate(request.context, 1) if addressed_to_assistant(chunk.text)]
    if not excluded:
        return request, []
    context = tuple(replace(c, text="") if n in excluded else c for n, c in enumerate(request.context, 1))
    log.info("answer.instructions_excluded", passages=excluded,
             chunk_ids=[request.context[n - 1].chunk_id for n in excluded])
    return replace(request, context=context), excluded


#: a list item of at most this many sentences is quoted whole when one of them is chosen
ITEM_MAX_SENTENCES = 3
_PART_SPLIT = re.compile(r",? and (?=(what|which|who|whom|when|where|how|is|are|do|does|can)\b)", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """A question that asks two things ("How long are backups kept and how often are
    restores tested?") split into its parts; one part otherwise."""
    parts = [p.strip(" ,?") for p in _PART_SPLIT.split(question)[::2] if p and p.strip(" ,?")]
    return parts if len(parts) > 1 and all(len(p.split()) >= 4 for p in parts) else [question]


#: a list question ("What are the first-aid arrangements?") is answered with up to this many items of one list
LIST_MAX_ITEMS = 6


def _whole_list(chosen: list[ScoredSentence], ranked: list[ScoredSentence],
                in_order: list[ScoredSentence], key: Any = None) -> list[ScoredSentence]:
    """For a question that asks for a list: the items (or table rows) under the heading of
    the best-ranked item that scores within ``SUPPORT_RATIO`` of the lead, in reading
    order, after the lead."""
    key = key or _rank_score
    lead = key(chosen[0])
    best = next((s for s in ranked if s.sentence.kind in ("item", "row")), None)
    if best is None or key(best) < SUPPORT_RATIO * lead:
        return chosen
    members = [s for s in in_order if s.sentence.kind == best.sentence.kind
               and s.sentence.heading == best.sentence.heading][:LIST_MAX_ITEMS]
    if best not in members:
        return chosen
    head = [c for c in chosen[:1] if c not in members]
    return head + members


#: a question that asks what to do: its answer is a procedure, the lead's whole (short) paragraph
_PROCEDURE = re.compile(r"^(what (should|must|do|can) (i|we|you) do|how (do|can|should|must) (i|we|you))\b",
                        re.IGNORECASE)


def _whole_items(chosen: list[ScoredSentence], in_order: list[ScoredSentence],
                 whole_paragraph: bool = False) -> list[ScoredSentence]:
    """A chosen sentence of a short list item brings the rest of its item, in reading order:
    "Online: the platform SpeakSafe ..." belongs to "You may report anonymously ...". With
    ``whole_paragraph`` (a "what should I do" question) the lead's short paragraph comes whole."""
    out: list[ScoredSentence] = []
    for i, c in enumerate(chosen):
        whole = c.sentence.kind == "item" or (whole_paragraph and i == 0 and c.sentence.kind == "para")
        item = [s for s in in_order if s.sentence.unit == c.sentence.unit] if whole else [c]
        if len(item) > ITEM_MAX_SENTENCES:
            item = [c]
        for s in item:  # the item in reading order, even where a member was chosen on its own
            if s not in out:
                out.append(s)
    return out


def _render(chosen: list[ScoredSentence], max_chars: int) -> str:
    """The lead first, then the rest in document order; consecutive list items (or table
    rows) as a list, one per line; sentences past ``max_chars`` dropped (never the lead)."""
    parts: list[str] = []
    used = 0
    for i, s in enumerate(chosen):
        piece = f"{s.sentence.text} [{s.sentence.passage}]"
        if i and used + len(piece) > max_chars:
            break
        used += len(piece) + 1
        is_item = s.sentence.kind in ("item", "row") and i > 0
        parts.append(("\n- " if is_item else (" " if i else "")) + piece)
    return "".join(parts).strip()


def _rank_score(s: ScoredSentence) -> float:
    """How the answerer ranks sentences: the evidence score plus the passage prior."""
    return s.score + PASSAGE_WEIGHT / s.sentence.passage


class DisabledChatModel:
    """``ChatModel`` for provider ``none``: always blank, so the chat service answers
    with its fixed honest message instead of an LLM."""

    name = "none"

    def generate(self, request: ChatRequest) -> str:
        return ""
