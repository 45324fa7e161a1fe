"""Sentence-level evidence: how well the context answers a question, sentence by sentence.

Shared by the extractive answerer (which quotes the best sentences) and by the mode
decision when ``retrieval.decision_score`` is ``evidence`` (which compares the best
sentence's score instead of the chunk similarity). Everything but the embedding is
pure text processing:

* :func:`segment` cuts a chunk into sentences; a short line without closing
  punctuation standing alone is a *heading* (context, never text), list markers are
  dropped, a table row is one unit rendered with its column names;
* :meth:`SentenceScorer.score` scores each sentence for the question:
  ``dense + LEXICAL_WEIGHT x lexical + ANSWER_TYPE_WEIGHT x answer_type_match``;
* :meth:`SentenceScorer.chunk_evidence` gives each chunk the normalized score of its
  best sentence (divided by ``1 + LEXICAL_WEIGHT + ANSWER_TYPE_WEIGHT``, so it lies in
  [0, 1]) times the *coverage* squared: the share of the question's topic words (content
  words without frame words such as "minimum" or "length", see ``FRAME_WORDS``) found
  anywhere in the chunks scored together. A look-alike question ("How many weeks of
  leave does a grandparent get?") finds a fluent sentence but not its key word.

The dense term moves a sentence's vector towards its heading's when the heading shares
a word with the question (``HEADING_MIX``): under "Pool cars" the sentence "Return the
car with at least 40% battery" scores as the answer to a pool-car question it is.

Segmentation is ``backend.core.sentence_segments`` and the word features
``backend.core.sentence_words`` (both pure; import them from there); this module holds the
scorer (the embedder and the process-wide sentence vector cache).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

import numpy as np

from backend.core.ports import AnswerReader, ChatModel, Embedder
from backend.core.question_parts import question_parts
from backend.core.sentence_segments import ReadingState, segment_chunk, table_cells
from backend.core.sentence_words import (cached_content_words, carries_answer_type, content_words, question_type,
                                         topic_words)
from backend.core.types import Chunk

if TYPE_CHECKING:
    from backend.common.config import RetrievalSettings
    from backend.core.answer_mode import Candidate


#: score = dense + LEXICAL_WEIGHT * lexical + ANSWER_TYPE_WEIGHT * answer_type (see the module docstring)
LEXICAL_WEIGHT = 0.3
ANSWER_TYPE_WEIGHT = 0.1
HEADING_WEIGHT = 0.5
#: evidence multiplies by coverage to this power: one topic word of five missing costs 36%, not 20%
COVERAGE_POWER = 2
#: scores are divided by this to lie in [0, 1]
SCORE_SCALE = 1.0 + LEXICAL_WEIGHT + ANSWER_TYPE_WEIGHT
#: the answerer adds PASSAGE_WEIGHT / n for a sentence of passage [n] (retrieval rank as a prior)
PASSAGE_WEIGHT = 0.1
#: a sentence that continues the one before it: it opens with a pronoun ("They are shredded on
#: site.") or, as an instruction, has one for its object ("Test it at the start of each week.")
ANAPHORA = re.compile(r"^(They|It|This|These|That|Those|Such|Its|Their|There|He|She)\b|^[A-Z][a-z]+ (it|them)\b")
#: a supporting sentence must score at least this share of the lead's score
SUPPORT_RATIO = 0.7
#: ... and bring at least this many content words the lead lacks
SUPPORT_MIN_NEW_WORDS = 2


@dataclass(frozen=True)
class Sentence:
    """One answer candidate: its text, the heading it stands under (context, never
    quoted) and its passage number (``[n]``)."""

    text: str
    heading: str | None
    passage: int
    chunk_id: str = ""
    #: position in the passages' reading order (what follows what)
    position: int = 0
    #: ``para``, ``item`` (of a list), ``row`` (of a table) or ``meta`` (a document's owner/date line)
    kind: str = "para"
    #: the block (paragraph, list item, table row) it came from: sentences of one item belong together
    unit: int = -1


class _VectorCache:
    """Bounded LRU of text -> unit vector, shared by request threads."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            found = {t: self._items[t] for t in texts if t in self._items}
            for t in found:
                self._items.move_to_end(t)
            return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._items.update(items)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)


_CACHES: dict[tuple[str, int], _VectorCache] = {}
_CACHES_LOCK = threading.Lock()


def _shared_cache(embedder: Embedder | None, capacity: int) -> _VectorCache:
    """One cache per model in the process: the chat service, the answerer and every
    evaluation (a promotion evaluates candidate and baseline on the same passages)
    reuse each other's sentence vectors instead of embedding them again."""
    key = ((embedder.model_id if embedder is not None else "") or f"anonymous-{id(embedder)}", capacity)
    with _CACHES_LOCK:
        return _CACHES.setdefault(key, _VectorCache(capacity))


@dataclass(frozen=True)
class ScoredSentence:
    sentence: Sentence
    dense: float
    lexical: float
    answer_type: bool

    @property
    def score(self) -> float:
        return self.dense + LEXICAL_WEIGHT * self.lexical + (ANSWER_TYPE_WEIGHT if self.answer_type else 0.0)

    def explain(self, role: str) -> dict[str, Any]:
        return {"role": role, "marker": f"[{self.sentence.passage}]", "chunk_id": self.sentence.chunk_id,
                "sentence": self.sentence.text[:200], "heading": self.sentence.heading,
                "score": round(self.score, 4), "dense": round(self.dense, 4), "lexical": round(self.lexical, 4),
                "answer_type_match": self.answer_type}


def lexical_overlap(question_words: Sequence[str], sentence: str, heading: str | None) -> float:
    """Share of the question's content words found in the sentence (heading words count half)."""
    if not question_words:
        return 0.0
    in_sentence = set(cached_content_words(sentence))
    in_heading = set(cached_content_words(heading)) if heading else set()
    found = sum(1.0 if w in in_sentence else HEADING_WEIGHT if w in in_heading else 0.0 for w in question_words)
    return found / len(question_words)


#: weight of the heading's vector added to a sentence's before the cosine (see ``_dense_in_context``)
HEADING_MIX = 0.7


def table_header(chunk: Chunk) -> str | None:
    """The header row of the table the chunk starts inside, as ingest recorded it (``table_header``)."""
    header = chunk.metadata.get("table_header") if chunk.metadata else None
    return header if isinstance(header, str) and header.strip() else None


def opened_table(chunk: Chunk) -> ReadingState:
    """Where a chunk starts reading when the one before it is not in context: inside the table
    whose header row ingest recorded, so its rows keep their column names."""
    header = table_header(chunk)
    return (None, table_cells(header)) if header else (None, None)


class SentenceScorer:
    """Scores context sentences for a question with the embedder (cosine; sentence
    vectors cached in an LRU) or, without one, by words and answer type alone."""

    def __init__(self, embedder: Embedder | None = None, cache_size: int = 20_000,
                 reader: AnswerReader | None = None, reader_sentences: int = 24) -> None:
        self._embedder = embedder
        self._cache = _shared_cache(embedder, cache_size)
        #: the trained answer reader (``retrieval.answerability.reader``): with it, a sentence's
        #: answerability is the reader's probability (``answerability.AnswerabilityJudge``)
        self.reader = reader
        #: the reader reads at most this many sentences per question, the scorer's best first
        self.reader_sentences = reader_sentences
        self._read: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._read_capacity = cache_size
        self._read_lock = threading.Lock()

    def use_reader(self, reader: AnswerReader, max_sentences: int) -> None:
        """Read with ``reader`` from now on (the composition root hands the configured reader to an
        answerer's scorer that was built without one)."""
        with self._read_lock:
            self.reader, self.reader_sentences = reader, max_sentences
            self._read.clear()

    def forget_reads(self) -> None:
        """Drop the cached reader probabilities (a benchmark times questions as if never asked)."""
        with self._read_lock:
            self._read.clear()

    def read(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """The reader's probability per text (``heading | sentence``), cached per (question, text): the
        decision and the answerer read the same pairs once. A question that asks two questions
        (``question_parts``) is read whole and part by part, and a text scores its best: the sentence
        that answers one half is not judged against the other."""
        if self.reader is None:
            raise ValueError("SentenceScorer.read needs a reader")
        parts = question_parts(question)
        if len(parts) > 1:
            read = [self._read_one(q, texts) for q in (question, *parts)]
            return np.asarray(np.vstack(read).max(axis=0), dtype=np.float64)
        return self._read_one(question, texts)

    def _read_one(self, question: str, texts: Sequence[str]) -> np.ndarray:
        assert self.reader is not None
        with self._read_lock:
            known = {t: self._read[(question, t)] for t in texts if (question, t) in self._read}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            fresh = np.asarray(self.reader.score(question, todo), dtype=np.float64).reshape(-1)
            with self._read_lock:
                for t, p in zip(todo, fresh):
                    known[t] = float(p)
                    self._read[(question, t)] = float(p)
                while len(self._read) > self._read_capacity:
                    self._read.popitem(last=False)
        return np.array([known[t] for t in texts], dtype=np.float64)

    @staticmethod
    def sentences(chunks: Sequence[Chunk]) -> list[Sentence]:
        """Every sentence of the passages, once (overlapping chunks repeat sentences)."""
        # a chunk that continues the previous chunk of its document (both in context) starts
        # under that one's last heading and inside its table, so rows keep their column names
        segmented: dict[int, list[tuple[str | None, str, str, int]]] = {}
        ends: dict[tuple[str, int], ReadingState] = {}
        for i, chunk in sorted(enumerate(chunks), key=lambda p: (p[1].doc_id, p[1].chunk_index)):
            start = ends.get((chunk.doc_id, chunk.chunk_index - 1)) or opened_table(chunk)
            segmented[i], ends[(chunk.doc_id, chunk.chunk_index)] = segment_chunk(chunk.text, start)
        seen: set[str] = set()
        out: list[Sentence] = []
        for i, chunk in enumerate(chunks):
            for heading, kind, text, block in segmented[i]:
                key = " ".join(text.lower().split())
                if key not in seen:
                    seen.add(key)
                    out.append(Sentence(text, heading, i + 1, chunk.chunk_id, len(out), kind, i * 10_000 + block))
        return out

    def score(self, question: str, sentences: list[Sentence]) -> list[ScoredSentence]:
        words = content_words(question)
        qtype = question_type(question)
        dense = self._dense_in_context(question, sentences)
        return [ScoredSentence(s, float(d), lexical_overlap(words, s.text, s.heading),
                               carries_answer_type(s.text, qtype, s.kind))
                for s, d in zip(sentences, dense)]

    def chunk_evidence(self, question: str, chunks: Sequence[Chunk]) -> list[float]:
        """Per chunk: its best sentence's normalized score times the coverage of the
        question's content words by all ``chunks`` together (see the module docstring). A sentence
        that names a sibling of a term of the question instead of it (``answerability.conflicts``:
        full-time for part-time, Tier 1 for Tier 4, two particles for three) is no evidence."""
        if not chunks:
            return []
        words = topic_words(question)
        seen: set[str] = set()
        for chunk in chunks:
            seen |= set(content_words(chunk.text))
        coverage = (sum(1 for w in words if w in seen) / len(words) if words else 1.0) ** COVERAGE_POWER
        from backend.core.question_terms import compound_terms, conflicts

        scored = self.score(question, self.sentences(chunks))
        terms = compound_terms(question)
        best: dict[str, float] = {}
        for s in scored:
            if terms and conflicts(terms, s.sentence.text):  # "Tier 1" is no evidence for a Tier 4 question
                continue
            best[s.sentence.chunk_id] = max(best.get(s.sentence.chunk_id, 0.0), s.score)
        return [round(best.get(c.chunk_id, 0.0) / SCORE_SCALE * coverage, 6) for c in chunks]

    def _dense_in_context(self, question: str, sentences: list[Sentence]) -> np.ndarray:
        """Cosine of the question with each sentence's vector moved towards its heading's
        (``v + HEADING_MIX x h``, normalized) when the heading shares a content word with
        the question: under "Pool cars" a sentence that never says "pool car" still scores as
        the answer to a pool-car question. Only such headings are embedded
        (one batch with the sentences, cached), so the extra cost stays small."""
        if self._embedder is None or not sentences:
            return np.zeros(len(sentences), dtype=np.float32)
        q = self._vectors([question], query=True)[0]
        asked = set(cached_content_words(question))
        headings = sorted({s.heading for s in sentences if s.heading and asked & set(cached_content_words(s.heading))})
        both = self._vectors([s.text for s in sentences] + headings, query=False)  # one batch
        vecs = both[:len(sentences)]
        if headings:
            hvecs = dict(zip(headings, both[len(sentences):]))
            none = np.zeros(vecs.shape[1], dtype=np.float32)
            mix = np.vstack([hvecs.get(s.heading, none) if s.heading else none for s in sentences])
            vecs = vecs + HEADING_MIX * mix
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return np.asarray(vecs @ q, dtype=np.float32)

    def phrase_similarities(self, phrase: str, texts: Sequence[str]) -> list[float]:
        """Cosine of ``phrase`` with each text, all embedded as documents (symmetric, cached);
        zeros without an embedder. Follow-ups use it to find the phrase a constraint replaces."""
        if self._embedder is None or not texts:
            return [0.0] * len(texts)
        vecs = self._vectors([phrase, *texts], query=False)
        return [float(v) for v in vecs[1:] @ vecs[0]]

    def _dense(self, question: str, sentences: list[str]) -> np.ndarray:
        """Cosine of each sentence with the question; 0 without an embedder (then only
        the lexical and answer-type terms rank, so a remote embedder is never called)."""
        if self._embedder is None:
            return np.zeros(len(sentences), dtype=np.float32)
        q = self._vectors([question], query=True)[0]
        return np.asarray(self._vectors(sentences, query=False) @ q, dtype=np.float32)

    def _vectors(self, texts: list[str], *, query: bool) -> np.ndarray:
        if self._embedder is None:  # pragma: no cover - guarded by _dense
            raise RuntimeError("no embedder")
        keys = [("q:" if query else "d:") + t for t in texts]
        known = self._cache.get_many(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in known))
        if missing:
            raw = [k[2:] for k in missing]
            vecs = self._embedder.embed_queries(raw) if query else self._embedder.embed_documents(raw)
            norms = np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            fresh = dict(zip(missing, np.asarray(vecs / norms, dtype=np.float32)))
            self._cache.put_many(fresh)
            known.update(fresh)
        return np.vstack([known[k] for k in keys])


@runtime_checkable
class QuotingChatModel(ChatModel, Protocol):
    """A chat model that quotes with a sentence scorer (the extractive answerer): the runtime gives
    that scorer the answer reader and the chat service judges with it, so the decision and the
    answer read the same probabilities from one sentence-vector cache."""

    scorer: SentenceScorer


def quoting_scorer(model: ChatModel) -> SentenceScorer | None:
    """``model``'s sentence scorer when it is a ``QuotingChatModel``, else None."""
    scorer = model.scorer if isinstance(model, QuotingChatModel) else None
    return scorer if isinstance(scorer, SentenceScorer) else None


def attach_evidence(candidates: Sequence[Candidate], question: str, scorer: SentenceScorer,
                    settings: RetrievalSettings) -> list[Candidate]:
    """Candidates with ``evidence`` set on those that may become context (type not excluded,
    similarity >= ``min_similarity_for_hybrid``), scored together; the others keep None."""
    from dataclasses import replace

    gates = settings.hybrid
    usable = [c for c in candidates
              if c.chunk.chunk_type not in gates.exclude_chunk_types_from_llm and c.similarity >= gates.min_similarity_for_hybrid]
    scores = dict(zip((c.chunk.chunk_id for c in usable), scorer.chunk_evidence(question, [c.chunk for c in usable])))
    return [replace(c, evidence=scores[c.chunk.chunk_id]) if c.chunk.chunk_id in scores else c for c in candidates]
