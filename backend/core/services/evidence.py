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
  [0, 1]) times the *coverage*: the share of the question's content words found
  anywhere in the chunks scored together. A look-alike question ("How many weeks of
  leave does a grandparent get?") finds a fluent sentence but not its key word.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from backend.core.ports import Embedder
from backend.core.types import Chunk

#: score = dense + LEXICAL_WEIGHT * lexical + ANSWER_TYPE_WEIGHT * answer_type (see the module docstring)
LEXICAL_WEIGHT = 0.3
ANSWER_TYPE_WEIGHT = 0.1
HEADING_WEIGHT = 0.5
#: scores are divided by this to lie in [0, 1]
SCORE_SCALE = 1.0 + LEXICAL_WEIGHT + ANSWER_TYPE_WEIGHT
#: the answerer adds PASSAGE_WEIGHT / n for a sentence of passage [n] (retrieval rank as a prior)
PASSAGE_WEIGHT = 0.1
#: a sentence starting like this continues the one before it ("They are shredded on site.")
ANAPHORA = re.compile(r"^(They|It|This|These|That|Those|Such|Its|Their|There|He|She)\b")
#: a supporting sentence must score at least this share of the lead's score
SUPPORT_RATIO = 0.7
#: ... and bring at least this many content words the lead lacks
SUPPORT_MIN_NEW_WORDS = 2

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"\w+")
_FIGURE_MARK = re.compile(r"\[FIGURE:[^\]]*\]")
_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022\u2013]|\d{1,2}[.)]|[a-z][.)])\s+")
_MD_HEADING = re.compile(r"^\s*#{1,6}\s+")
_CLOSING = re.compile(r"[.!?:;,]\s*$")
_ENDED = re.compile(r"[.!?:;)\"'\]]\s*$")
_STOPWORDS = frozenset(
    "a an and are as at be been by can could do does did for from had has have how i if in into is it its may me "
    "might must my no not of on or our shall should so than that the their them then there these they this those "
    "to up was we were what when where which while who whom whose why will with would you your get gets got "
    "allowed need needs much many long often far quickly large big happen happens after before between over "
    "until each every per used take taken mean means show shows contain contains apply applies part held stay "
    "there any some also other".split()
)
_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday weekday weekdays weekend weekends".split()
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty "
                 "hundred thousand once twice half quarter daily weekly monthly yearly annually first second third "
                 "fourth fifth immediately").split()
_ROLE_WORDS = ("manager team officer coordinator desk department head lead contact owner service board committee "
               "director engineer administrator commander hotline reception security helpdesk").split()
_PLACE_WORDS = "floor room office building street point desk entrance reception portal site garage".split()
_QUESTION_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("number", re.compile(r"\bhow (many|much|long|often|far|large|big|high|old|quickly|soon|heavy|fast)\b|"
                          r"\bwhat (is|are) the (minimum|maximum|max|min|limit|number|amount|cost|price|percentage|"
                          r"rate|weight|size|length|value|distance|deadline|notice period|budget|allowance|per diem)\b|"
                          r"\bwhat (percentage|share|number|amount)\b|\bwithin how\b|\bhow much time\b")),
    ("date", re.compile(r"^(until |by |from |since )?when\b|\bwhat (date|time|day|month|year|hours?)\b|\bwhich "
                        r"(date|day|days|month|months|year|time|hours?)\b|\bwhen\b")),
    ("name", re.compile(r"\bwho(m|se)?\b|\bwhat is the (name|number|phone|e-?mail|address)\b")),
    ("location", re.compile(r"\bwhere\b")),
    ("option", re.compile(r"\bwhich\b|\bwhat (kind|type|types|sort|class|level|levels|tool|system|form)\b")),
)


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
    #: ``para``, ``item`` (of a list) or ``row`` (of a table)
    kind: str = "para"


# --- segmentation ------------------------------------------------------------------
def _is_table_row(line: str) -> bool:
    return line.count("|") >= 1 and len([c for c in line.split("|") if c.strip()]) >= 2


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_heading(line: str, prev_blank: bool, next_line: str | None) -> bool:
    """A title or section heading: marked with ``#``, or a short line with no closing
    punctuation that starts with a capital and is followed by a new block."""
    if _MD_HEADING.match(line):
        return True
    words = _WORD.findall(line)
    if not words or len(words) > 12 or len(line) > 90 or _CLOSING.search(line) or _LIST_MARKER.match(line):
        return False
    if line.count(": ") > 1 or "\u00b7" in line:  # "Owner: People Team · Policy number: HR-101" is a fact line
        return False
    if not (line[0].isupper() or line[0].isdigit()):
        return False
    if next_line is None or not next_line.strip():
        return True
    nxt = next_line.strip()
    return prev_blank or nxt[0].isupper() or bool(_LIST_MARKER.match(nxt)) or _is_table_row(nxt)


def _units(text: str) -> list[tuple[str | None, str, str]]:
    """``(heading, kind, text)`` per block of a chunk: kind is ``para``, ``item`` or ``row``."""
    lines = [ln.rstrip() for ln in _FIGURE_MARK.sub(" ", text).splitlines()]
    units: list[tuple[str | None, str, str]] = []
    heading: str | None = None
    header_cells: list[str] | None = None
    buffer: list[str] = []
    kind = "para"

    def flush() -> None:
        nonlocal buffer
        if buffer:
            units.append((heading, kind, " ".join(" ".join(buffer).split())))
        buffer = []

    prev_blank = True
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            flush()
            prev_blank = True
            continue
        nxt = next((ln for ln in lines[i + 1:]), None)
        if _is_table_row(line):
            flush()
            cells = _cells(line)
            if header_cells is None or len(cells) != len(header_cells):
                header_cells = cells  # the first row of a table names its columns
            else:
                pairs = [f"{h}: {c.rstrip('.')}" if h else c.rstrip(".") for h, c in zip(header_cells, cells) if c]
                units.append((heading, "row", "; ".join(pairs) + "."))
            prev_blank = False
            continue
        header_cells = None
        if _is_heading(line, prev_blank, nxt):
            flush()
            heading = " ".join(_MD_HEADING.sub("", line).split())
        elif _LIST_MARKER.match(line):
            flush()
            kind = "item"
            buffer = [_LIST_MARKER.sub("", line)]
        else:
            starts_lower = line[0].islower()
            # a PDF wraps lines: a line continues the paragraph above unless that one ended a
            # sentence; a list item is continued only by a line starting in lower case
            continues = bool(buffer) and (starts_lower or (kind == "para" and not _CLOSING.search(buffer[-1])))
            if not continues:
                flush()
                kind = "para"
            buffer.append(line)
        prev_blank = False
    flush()
    return units


def segment(text: str) -> list[tuple[str | None, str]]:
    """``(heading, sentence)`` pairs of a passage: headings are context, list markers
    dropped, table rows kept whole, tiny fragments (< 3 words) skipped."""
    return [(heading, sentence) for heading, _, sentence in segment_kinds(text)]


def segment_kinds(text: str) -> list[tuple[str | None, str, str]]:
    """``(heading, kind, sentence)``: :func:`segment` with the kind of block each
    sentence came from (``para``, ``item`` of a list, ``row`` of a table)."""
    out: list[tuple[str | None, str, str]] = []
    units = _units(text)
    flat = " ".join(_FIGURE_MARK.sub(" ", text).split())
    for n, (heading, kind, body) in enumerate(units):
        parts = [body] if kind == "row" else _SENTENCE_END.split(body)
        if n == len(units) - 1 and kind != "row" and not _ENDED.search(body) and flat.endswith(body[-40:]):
            parts = parts[:-1]  # the chunk was cut mid-sentence; the next chunk repeats it whole (overlap)
        out.extend((heading, kind, s.strip()) for s in parts if len(_WORD.findall(s)) >= 3)
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage (see :func:`segment`), without their headings."""
    return [s for _, s in segment(text)]


# --- scoring -------------------------------------------------------------------------
#: irregular forms a suffix stemmer cannot join to their base
_IRREGULAR = {"lost": "lose", "paid": "pay", "bought": "buy", "kept": "keep", "held": "hold", "given": "give",
              "sent": "send", "spent": "spend", "made": "make", "chosen": "choose", "written": "write", "won": "win",
              "left": "leave", "taught": "teach", "brought": "bring", "went": "go", "gone": "go", "met": "meet"}


def _stem(word: str) -> str:
    """A crude, consistent stemmer: booking/booked/books -> book, badge/badges -> badg, lost -> los."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith(("ed", "es")) and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def content_words(text: str) -> list[str]:
    """Lower-cased, crudely stemmed words that carry meaning (stopwords dropped), in order."""
    words = (_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)
    return list(dict.fromkeys(words))


def question_type(question: str) -> str | None:
    """What the question asks for: number, date, name, location, option (or None)."""
    q = " ".join(question.lower().split())
    for name, pattern in _QUESTION_TYPES:
        if pattern.search(q):
            return name
    return None


def _has_capitalised(words: list[str]) -> bool:
    return any(w[:1].isupper() for w in words[1:])


def carries_answer_type(sentence: str, qtype: str | None) -> bool:
    """Whether the sentence carries what a question of type ``qtype`` asks for."""
    if qtype is None:
        return False
    low = sentence.lower()
    words = _WORD.findall(sentence)
    lows = set(_WORD.findall(low))
    has_digit = any(ch.isdigit() for ch in sentence)
    if qtype == "number":
        return has_digit or bool(lows & set(_NUMBER_WORDS))
    if qtype == "date":
        return bool(lows & set(_MONTHS + _DAYS)) or bool(re.search(r"\b\d{1,2}[:.]\d{2}\b|\b(19|20)\d{2}\b", low)) \
            or bool(re.search(r"\b\d+\s*(working\s+)?(days?|weeks?|months?|years?|hours?)\b", low))
    if qtype == "name":
        return _has_capitalised(words) or bool(lows & set(_ROLE_WORDS)) or has_digit or "@" in sentence
    if qtype == "location":
        return _has_capitalised(words) or bool(lows & set(_PLACE_WORDS))
    return _has_capitalised(words) or has_digit  # option
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
    key = (getattr(embedder, "model_id", "") or f"anonymous-{id(embedder)}", capacity)
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
    in_sentence = set(content_words(sentence))
    in_heading = set(content_words(heading)) if heading else set()
    found = sum(1.0 if w in in_sentence else HEADING_WEIGHT if w in in_heading else 0.0 for w in question_words)
    return found / len(question_words)




class SentenceScorer:
    """Scores context sentences for a question with the embedder (cosine; sentence
    vectors cached in an LRU) or, without one, by words and answer type alone."""

    def __init__(self, embedder: Embedder | None = None, cache_size: int = 20_000) -> None:
        self._embedder = embedder
        self._cache = _shared_cache(embedder, cache_size)

    @staticmethod
    def sentences(chunks: Sequence[Chunk]) -> list[Sentence]:
        """Every sentence of the passages, once (overlapping chunks repeat sentences)."""
        seen: set[str] = set()
        out: list[Sentence] = []
        for i, chunk in enumerate(chunks, start=1):
            for heading, kind, text in segment_kinds(chunk.text):
                key = " ".join(text.lower().split())
                if key not in seen:
                    seen.add(key)
                    out.append(Sentence(text, heading, i, chunk.chunk_id, len(out), kind))
        return out

    def score(self, question: str, sentences: list[Sentence]) -> list[ScoredSentence]:
        words = content_words(question)
        qtype = question_type(question)
        dense = self._dense(question, [s.text for s in sentences])
        return [ScoredSentence(s, float(d), lexical_overlap(words, s.text, s.heading),
                               carries_answer_type(s.text, qtype))
                for s, d in zip(sentences, dense)]

    def chunk_evidence(self, question: str, chunks: Sequence[Chunk]) -> list[float]:
        """Per chunk: its best sentence's normalized score times the coverage of the
        question's content words by all ``chunks`` together (see the module docstring)."""
        if not chunks:
            return []
        words = content_words(question)
        seen: set[str] = set()
        for chunk in chunks:
            seen |= set(content_words(chunk.text))
        coverage = sum(1 for w in words if w in seen) / len(words) if words else 1.0
        scored = self.score(question, self.sentences(chunks))
        best: dict[str, float] = {}
        for s in scored:
            best[s.sentence.chunk_id] = max(best.get(s.sentence.chunk_id, 0.0), s.score)
        return [round(best.get(c.chunk_id, 0.0) / SCORE_SCALE * coverage, 6) for c in chunks]

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


def attach_evidence(candidates: Sequence[Any], question: str, scorer: SentenceScorer, settings: Any) -> list[Any]:
    """Candidates with ``evidence`` set on those that may become context (type not excluded,
    similarity >= ``min_similarity_for_hybrid``), scored together; the others keep None.
    ``candidates`` are ``retrieval_service.Candidate``; ``settings`` is ``RetrievalSettings``."""
    from dataclasses import replace

    gates = settings.hybrid
    usable = [c for c in candidates
              if c.chunk.chunk_type not in gates.exclude_chunk_types_from_llm and c.similarity >= gates.min_similarity_for_hybrid]
    scores = dict(zip((c.chunk.chunk_id for c in usable), scorer.chunk_evidence(question, [c.chunk for c in usable])))
    return [replace(c, evidence=scores[c.chunk.chunk_id]) if c.chunk.chunk_id in scores else c for c in candidates]
