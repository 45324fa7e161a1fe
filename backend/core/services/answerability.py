"""Does this sentence answer this question? A small interpretable model, not a similarity.

Similarity says a sentence is *about* the question's subject; it cannot tell "How many
sports does Yale compete in?" from the sentence about Harvard that answers the same
question for another college, nor "three particles" from "two". This module reads a
question against each context sentence for the signals that do tell:

==================  ==============================================================
``dense``           cosine of question and sentence (heading mixed in, see evidence)
``lexical``         share of the question's content words in the sentence (heading half)
``answer_type``     the sentence carries what the question asks for (a quantity for
                    "how many", a date for "when", a name for "who", ...)
``passage_cover``   share of the question's topic words found in the sentence's passage
``context_cover``   share of topic words found anywhere in the retrieved context
``missing_topic``   number of topic words found nowhere in the context (capped at 3)
``entity_cover``    share of the question's names and numbers ("Yale", "2008", "three")
                    found in the sentence's passage (1 when it names none)
``entity_missing``  1 when a name or number of the question is in no retrieved passage
``similarity``      the retrieval similarity of the sentence's chunk
==================  ==============================================================

The features are combined by a logistic model, ``P(answers) = sigmoid(intercept + w . f)``,
whose weights live in config (``retrieval.answerability``) and come from ``rag calibrate
--answerability`` (logistic regression on golden sets, folds by article or document). The
decision score of a question is the best sentence's probability; every contribution is
reported in ``decision_explain`` in the words of the table above.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from backend.common.config import FEATURES
from backend.core.services.evidence import (
    COVERAGE_POWER,
    SCORE_SCALE,
    ScoredSentence,
    Sentence,
    SentenceScorer,
    table_header,
)
from backend.core.sentence_words import content_words, question_type, topic_words
from backend.core.question_terms import NUMBER_WORDS as _NUMBER_WORDS
from backend.core.question_terms import TOKEN as _TOKEN
from backend.core.question_terms import compounds as _compounds
from backend.core.question_terms import folded_words as _words
from backend.core.question_terms import plain_tokens as _plain_tokens
from backend.core.question_terms import (  # noqa: F401 - compound_terms, conflicts: read here by tests
    compound_terms,
    conflicts,
    fold_accents,
    question_entities,
    question_names,
)
from backend.core.word_forms import FUNCTION_WORDS, function_word_typo, inflections, is_contraction, typo_in
from backend.core.types import Chunk

if TYPE_CHECKING:
    from backend.common.config import AnswerabilitySettings, RetrievalSettings
    from backend.core.ports import VectorStore
    from backend.core.answer_mode import Candidate
    from backend.core.types import Visibility


#: what each feature means, for ``decision_explain`` (a user reads these)
FEATURE_WORDS: Mapping[str, str] = {
    "dense": "meaning close to the question",
    "lexical": "question words in the sentence",
    "answer_type": "carries the kind of answer asked for",
    "passage_cover": "question topic words in its passage",
    "context_cover": "question topic words anywhere in the retrieved text",
    "missing_topic": "question topic words found nowhere",
    "entity_cover": "names and numbers of the question in its passage",
    "entity_missing": "a name or number of the question found nowhere",
    "similarity": "retrieval similarity of its passage",
    "name_cover": "multi-word names of the question found whole in its passage",
    "number_missing": "a number of the question missing from the sentence",
    "bigram_cover": "word pairs of the question found in the sentence",
    "novelty": "what the sentence says beyond the question's own words",
    "unknown_words": "question words the knowledge base never uses",
    "evidence": "sentence score times the squared topic-word coverage (decision_score evidence)",
    "conflict": "names a sibling of a term of the question instead of it (full-time for part-time, C200 for C800)",
    "reader": "the trained reader's log-odds that the sentence answers the question",
}

#: between a sentence's heading and the sentence in what the reader reads (``heading | sentence``)
HEADING_SEPARATOR = " | "


def reader_text(sentence: str, heading: str | None) -> str:
    """What the answer reader reads beside the question: the sentence after its heading."""
    return f"{heading}{HEADING_SEPARATOR}{sentence}" if heading else sentence

MISSING_CAP = 3.0
_ENTITY_MISSING, _UNKNOWN_WORDS = FEATURES.index("entity_missing"), FEATURES.index("unknown_words")
_CONFLICT = FEATURES.index("conflict")
def _bigrams(words: Sequence[str]) -> frozenset[tuple[str, str]]:
    return frozenset(zip(words, words[1:]))


@lru_cache(maxsize=20_000)
def _ordered_words(text: str) -> tuple[str, ...]:
    return tuple(content_words(fold_accents(text)))


@lru_cache(maxsize=20_000)
def _flat_lower(text: str) -> str:
    return " ".join(fold_accents(text).lower().split())


@dataclass(frozen=True)
class QuestionReading:
    """What the features need of the question, computed once per question."""

    content: frozenset[str]
    topic: tuple[str, ...]
    entities: tuple[str, ...]
    qtype: str | None
    names: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    bigrams: frozenset[tuple[str, str]] = frozenset()
    compounds: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str) -> "QuestionReading":
        folded = fold_accents(question)
        entities = question_entities(question)
        return cls(frozenset(content_words(folded)), tuple(topic_words(folded)), entities,
                   question_type(question), question_names(question),
                   tuple(e for e in entities if e[:1].isdigit()), _bigrams(_ordered_words(question)),
                   _compounds(question))


#: a sentence that frames a document instead of saying anything ("This policy explains ...")
FRAMING = re.compile(r"^(this|the following) (policy|document|section|guide|page|handbook|procedure|standard|chapter)\b"
                     r"[^.]{0,40}\b(explains?|describes?|sets? out|covers?|outlines?|applies|summari[sz]es?|shows|lists)\b|"
                     r"^(these|the) (rules|steps|measures) (keep|help|ensure|protect)\b", re.IGNORECASE)



@dataclass(frozen=True)
class SentenceJudgement:
    """One sentence's features and the model's probability that it answers the question."""

    scored: ScoredSentence
    features: tuple[float, ...]
    probability: float
    #: the probability is the trained reader's (no word of the question vetoes the sentence)
    read: bool = False

    @property
    def sentence(self) -> Sentence:
        return self.scored.sentence

    def shares_key_term(self, reading: QuestionReading) -> bool:
        """Whether the sentence (or its heading) holds at least one of the question's content words."""
        words = _words(self.sentence.text) | (_words(self.sentence.heading) if self.sentence.heading else frozenset())
        return bool(reading.content & words) or not reading.content

    @property
    def asks_beyond_context(self) -> bool:
        """The question names what no retrieved passage mentions ("the CEO", "the New York office")
        or uses a word the knowledge base never does ("which *brand* of safety shoes"): the context
        is about a neighbouring subject, and its closest sentence answers another question."""
        return self.features[_ENTITY_MISSING] > 0 or self.features[_UNKNOWN_WORDS] > 0

    @property
    def says_something(self) -> bool:
        """Neither a document's fact line, nor a framing sentence ("This policy explains ..."), nor
        a question (an FAQ entry restating the question answers nothing)."""
        text = self.sentence.text.rstrip()
        return self.sentence.kind != "meta" and not FRAMING.match(text) and not text.endswith("?")

    def quotable(self, reading: QuestionReading) -> bool:
        """May be quoted at all: it :attr:`says_something`; judged by the reader, nothing more
        (meaning is the reader's to judge, not shared words); judged by the features, it also
        shares a word with the question, the question asks nothing beyond the context
        (:attr:`asks_beyond_context`) and it names no sibling of the question's terms."""
        if not self.says_something:
            return False
        if self.read:
            return True
        return (self.shares_key_term(reading) and not self.asks_beyond_context
                and not self.features[_CONFLICT])


@dataclass(frozen=True)
class AnswerabilityModel:
    """Logistic weights per feature (see the module docstring)."""

    intercept: float
    weights: Mapping[str, float]

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown answerability features {sorted(unknown)}; known: {', '.join(FEATURES)}")

    @property
    def vector(self) -> np.ndarray:
        return np.array([self.weights.get(name, 0.0) for name in FEATURES], dtype=np.float64)

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        if features.size == 0:
            return np.zeros(0)
        z = self.intercept + features @ self.vector
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -40, 40))), dtype=np.float64)

    def contributions(self, features: Sequence[float]) -> list[dict[str, object]]:
        """Each feature's value and its share of the logit, largest effect first."""
        rows = [{"feature": name, "means": FEATURE_WORDS[name], "value": round(float(v), 4),
                 "weight": round(self.weights.get(name, 0.0), 4),
                 "contribution": round(float(v) * self.weights.get(name, 0.0), 4)}
                for name, v in zip(FEATURES, features)]
        return sorted(rows, key=lambda r: -abs(float(r["contribution"])))  # type: ignore[arg-type]


def missing_words(question: str, chunks: Sequence[Chunk]) -> list[str]:
    """The question's topic words (as typed, lower-cased) found in none of ``chunks``: the
    ones worth asking the whole knowledge base about (``unknown_words``). A contraction
    ("don't", "isnt"), a function word or a slip on one ("everyone", "teh", "wat") or a number
    word ("ten") is never one; an inflection (crude stems, irregular forms: "worn" for "wear") or a slip on a word
    of the passages ("reqeusts" beside "requests", :func:`word_forms.typo_in`) is found."""
    everywhere = frozenset().union(*(_words(c.text) for c in chunks)) if chunks else frozenset()
    out = []
    vocabulary: frozenset[str] | None = None
    for token in _TOKEN.findall(fold_accents(question).lower()):
        token = token.strip("'’-")
        if not token or is_contraction(token) or token in FUNCTION_WORDS or function_word_typo(token) \
                or token in _NUMBER_WORDS:  # "ten" is "10" to the text; numbers are entity features
            continue
        stems = content_words(token)
        if not stems or stems[0] in everywhere or stems[0] not in set(topic_words(token)):
            continue
        if vocabulary is None:  # only built for a question with a word the passages lack
            vocabulary = everywhere.union(*(_plain_tokens(c.text) for c in chunks))
        if not (typo_in(token, vocabulary) or typo_in(stems[0], everywhere)):
            out.append(token)
    return list(dict.fromkeys(out))


def passage_text(chunk: Chunk) -> str:
    """What a passage says: its text, and the column names of the table it starts inside
    (``table_header``, recorded at ingest), which its rows are read with."""
    header = table_header(chunk)
    return f"{header}\n\n{chunk.text}" if header else chunk.text


def feature_matrix(reading: QuestionReading, scored: Sequence[ScoredSentence], chunks: Sequence[Chunk],
                   similarities: Sequence[float], unknown_words: int = 0,
                   reader: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """One row of :data:`FEATURES` per scored sentence. ``chunks`` are the passages in
    context order (a sentence's ``passage`` is its 1-based position), ``similarities``
    their retrieval similarities and ``reader`` the reader's probabilities (the ``reader`` feature is
    their log-odds; 0 without a reader)."""
    texts = [passage_text(c) for c in chunks]
    passage_words = [_words(t) for t in texts]
    passage_tokens = [_plain_tokens(t) for t in texts]
    everywhere = frozenset().union(*passage_words) if passage_words else frozenset()
    all_tokens = frozenset().union(*passage_tokens) if passage_tokens else frozenset()
    topic = reading.topic
    context_cover = sum(w in everywhere for w in topic) / len(topic) if topic else 1.0
    missing = min(MISSING_CAP, float(sum(w not in everywhere for w in topic)))
    entity_missing = float(any(e not in all_tokens for e in reading.entities))
    rows = np.zeros((len(scored), len(FEATURES)), dtype=np.float64)
    # a list item answers as a whole, and a sentence with the next one of its paragraph: "Part-time
    # staff get leave pro rata. An employee working 4 days a week receives 20 days."
    typed_units = {s.sentence.unit for s in scored if s.answer_type and s.sentence.kind == "item"}
    typed_next = {i for i in range(len(scored) - 1)
                  if scored[i + 1].answer_type and scored[i + 1].sentence.unit == scored[i].sentence.unit}
    for i, s in enumerate(scored):
        p = s.sentence.passage - 1
        words = passage_words[p] if 0 <= p < len(chunks) else frozenset()
        tokens = passage_tokens[p] if 0 <= p < len(chunks) else frozenset()
        passage_cover = sum(w in words for w in topic) / len(topic) if topic else 1.0
        entity_cover = (sum(e in tokens for e in reading.entities) / len(reading.entities)) if reading.entities else 1.0
        sim = similarities[p] if 0 <= p < len(similarities) else 0.0
        flat = _flat_lower(texts[p]) if 0 <= p < len(chunks) else ""
        name_cover = sum(n in flat for n in reading.names) / len(reading.names) if reading.names else 1.0
        sentence_tokens = _plain_tokens(s.sentence.text)
        number_missing = float(any(n not in sentence_tokens for n in reading.numbers))
        ordered = _ordered_words(s.sentence.text)
        bigram_cover = (len(reading.bigrams & _bigrams(ordered)) / len(reading.bigrams)) if reading.bigrams else 0.0
        novelty = min(1.0, sum(w not in reading.content for w in ordered) / 8.0)
        answer_type = s.answer_type or i in typed_next or (s.sentence.kind == "item" and s.sentence.unit in typed_units)
        rows[i] = (s.dense, s.lexical, float(answer_type), passage_cover, context_cover, missing,
                   entity_cover, entity_missing, sim, name_cover, number_missing, bigram_cover, novelty,
                   min(float(unknown_words), MISSING_CAP), s.score / SCORE_SCALE * context_cover ** COVERAGE_POWER,
                   float(conflicts(reading.compounds, s.sentence.text)),
                   reader_logit(float(reader[i])) if reader is not None else 0.0)
    return rows


#: the reader's log-odds are clipped to this (a sentence the reader did not read has probability 0)
READER_LOGIT_CAP = 8.0


def reader_logit(p: float) -> float:
    """The ``reader`` feature: the reader's probability as log-odds, within +-``READER_LOGIT_CAP``."""
    p = min(1.0 - 1e-6, max(1e-6, p))
    return max(-READER_LOGIT_CAP, min(READER_LOGIT_CAP, math.log(p / (1.0 - p))))


class AnswerabilityJudge:
    """Scores every sentence of the context; shared by the mode decision and the extractive
    answerer so both read the same probabilities. With a reader on the scorer
    (``SentenceScorer.reader``) a sentence's probability is the reader's, and the features are
    computed beside it as its explanation; without one, the logistic model's."""

    def __init__(self, scorer: SentenceScorer, model: AnswerabilityModel) -> None:
        self.scorer = scorer
        self.model = model

    def judge(self, question: str, chunks: Sequence[Chunk], similarities: Sequence[float] | None = None,
              unknown_words: int = 0) -> list[SentenceJudgement]:
        """Judgements in the sentences' reading order (``sentence.position``); ``unknown_words``
        is how many question words the knowledge base never uses (see :func:`missing_words`)."""
        if not chunks:
            return []
        sentences = self.scorer.sentences(chunks)
        if not sentences:
            return []
        scored = self.scorer.score(question, sentences)
        sims = list(similarities) if similarities is not None else [0.0] * len(chunks)
        reader = self._read(question, scored) if self.scorer.reader is not None else None
        features = feature_matrix(QuestionReading.of(question), scored, chunks, sims, unknown_words, reader)
        # the reader's probability is the answer unless the model gives the reader a weight: then the logistic
        # model blends it with the other features (fitted by ``rag calibrate --answerability``)
        probs = reader if reader is not None and not self.model.weights.get("reader") \
            else self.model.probabilities(features)
        return [SentenceJudgement(s, tuple(float(x) for x in f), float(p), reader is not None)
                for s, f, p in zip(scored, features, probs)]

    def _read(self, question: str, scored: Sequence[ScoredSentence]) -> np.ndarray:
        """The reader's probability for the ``reader_sentences`` sentences the scorer ranks first (meaning
        and words, computed anyway); 0 for the rest, which no answer is drawn from."""
        limit = self.scorer.reader_sentences
        order = sorted(range(len(scored)), key=lambda i: -scored[i].score)[:limit]
        out = np.zeros(len(scored), dtype=np.float64)
        if order:
            texts = [reader_text(scored[i].sentence.text, scored[i].sentence.heading) for i in order]
            out[order] = self.scorer.read(question, texts)
        return out


def logit(p: float) -> float:
    p = min(1 - 1e-9, max(1e-9, p))
    return math.log(p / (1 - p))


def model_from(settings: "AnswerabilitySettings") -> AnswerabilityModel:
    return AnswerabilityModel(settings.intercept, dict(settings.weights))


def usable(candidates: Sequence["Candidate"], settings: "RetrievalSettings") -> list["Candidate"]:
    """The candidates that may become context: type not excluded, similarity at least
    ``min_similarity_for_hybrid`` (what sentence scores are computed for)."""
    gates = settings.hybrid
    return [c for c in candidates
            if c.chunk.chunk_type not in gates.exclude_chunk_types_from_llm and c.similarity >= gates.min_similarity_for_hybrid]


#: ``(question, retrieved context) -> the question's words the knowledge base never uses``
Probe = Callable[[str, Sequence[Chunk]], tuple[str, ...]]


@dataclass(frozen=True)
class Scored:
    """Candidates with what the decision compares, and the unknown words found on the way."""

    candidates: list["Candidate"]
    unknown_words: tuple[str, ...] = ()
    #: the quotable sentence judged most likely to answer, and who judged it (``reader``: the trained
    #: reader; ``features``: the logistic model)
    best_sentence: str | None = None
    judged_by: str | None = None


def attach_answerability(candidates: Sequence["Candidate"], question: str, scorer: SentenceScorer,
                         settings: "RetrievalSettings", probe: Probe | None = None) -> Scored:
    """Candidates with ``relevance`` set, on those that may become context, to the best
    probability among their sentences that share a content word with the question (0 when
    none does; the decision compares it with ``answerability.min_sentence_relevance``); the
    others keep None.
    With ``decision_score: answerability`` it is also their ``evidence`` (what the thresholds
    compare). ``probe`` finds the question's words the knowledge base never uses."""
    from dataclasses import replace

    context = usable(candidates, settings)
    if not context:
        return Scored(list(candidates))
    chunks = [c.chunk for c in context]
    # the reader judges meaning: a word the knowledge base never uses is no reason to refuse
    unknown = probe(question, chunks) if probe is not None and scorer.reader is None else ()
    judge = AnswerabilityJudge(scorer, model_from(settings.answerability))
    reading = QuestionReading.of(question)
    best: dict[str, float] = {c.chunk.chunk_id: 0.0 for c in context}
    top: SentenceJudgement | None = None
    for j in judge.judge(question, chunks, [c.similarity for c in context], len(unknown)):
        if j.quotable(reading):
            cid = j.sentence.chunk_id
            best[cid] = max(best[cid], round(j.probability, 6))
            if top is None or j.probability > top.probability:
                top = j
    decides = settings.decision_score == "answerability"
    return Scored([replace(c, relevance=best[c.chunk.chunk_id], evidence=best[c.chunk.chunk_id] if decides else c.evidence)
                   if c.chunk.chunk_id in best else c for c in candidates], unknown,
                  top.sentence.text if top else None, "reader" if scorer.reader is not None else "features")


def attach_scores(candidates: Sequence["Candidate"], question: str, scorer: SentenceScorer | None,
                  settings: "RetrievalSettings", probe: Probe | None = None) -> Scored:
    """What the decision compares: with ``decision_score`` ``evidence`` the sentence evidence and
    the answerability ``relevance`` (hybrid needs a relevant sentence); with ``answerability`` the
    probability, as both; with ``similarity`` nothing."""
    from backend.core.services.evidence import attach_evidence

    if scorer is None or settings.decision_score == "similarity":
        return Scored(list(candidates))
    if settings.decision_score == "evidence":
        candidates = attach_evidence(candidates, question, scorer, settings)
    if not settings.judges_sentences:
        return Scored(list(candidates))
    return attach_answerability(candidates, question, scorer, settings, probe)


#: at most this many question words are looked up in the knowledge base per question
MAX_PROBES = 4


def unknown_words(store: "VectorStore", target: str, question: str, context: Sequence[Chunk],
                  visibility: "Visibility | None" = None) -> tuple[str, ...]:
    """The question's words that neither ``context`` nor any chunk the asker may see behind
    ``target`` uses: one full-text probe per word missing from the context (the store's own
    tokenizer), at most ``MAX_PROBES``. The probe asks for the word in any of its
    :func:`word_forms.inflections` at once (OR-ed by both stores' full-text queries), so a
    knowledge base saying "worn" knows "wear" whether or not its index stems."""
    return tuple(w for w in missing_words(question, context)[:MAX_PROBES]
                 if not store.lexical_candidates(target, " ".join(inflections(w)), 1, visibility=visibility).hits)


def store_probe(store: "VectorStore", target: str, visibility: "Visibility | None" = None) -> Probe:
    """:func:`unknown_words` against ``target`` as the asker sees it."""
    return lambda question, context: unknown_words(store, target, question, context, visibility)
