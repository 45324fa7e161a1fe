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
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from backend.core.ports import Embedder
from backend.core.types import Chunk

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
#: a line ending like this continues on the next line; it is never a heading
_OPEN_END = re.compile(r"(,|\b(or|and|to|of|the|a|an|with|for|by|in|on|at))\s*$")
_ENDED = re.compile(r"[.!?:;)\"'\]]\s*$")
_STOPWORDS = frozenset(
    "a an and are as at be been by can could do does did for from had has have how i if in into is it its may me "
    "might must my no not of on or our shall should so than that the their them then there these they this those "
    "to up was we were what when where which while who whom whose why will with would you your get gets got "
    "go goes going went gone come comes put puts "
    "allowed need needs much many long often far quickly large big happen happens after before between over "
    "until each every per used take taken mean means show shows contain contains apply applies held stay "
    "there any some also other rather during toward towards own about via within above below".split()
)
#: words that name the dimension a question asks about ("minimum length", "how far in advance"): the text
#: answers them with a value ("at least 14 characters"), so their absence says nothing about coverage
FRAME_WORDS = frozenset(
    "minimum maximum min max least most length longest shortest distance range share heavy duration amount "
    "size total advance".split()
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
    ("duration", re.compile(r"\bhow (long|often|quickly|soon|fast|frequently)\b|\bhow much time\b|\bwithin how\b|"
                            r"\bhow far (in advance|ahead)\b")),
    ("list", re.compile(r"^(what|which) are the\b|^which \w+( \w+)? (does|do|did) .* (contain|include|have|list)\b|"
                        r"^what does .* (contain|include)\b")),
    ("number", re.compile(r"\bhow (many|much|far|large|big|high|old|heavy)\b|"
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
    #: ``para``, ``item`` (of a list), ``row`` (of a table) or ``meta`` (a document's owner/date line)
    kind: str = "para"
    #: the block (paragraph, list item, table row) it came from: sentences of one item belong together
    unit: int = -1


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
    if _OPEN_END.search(line):  # "Call the hotline +31 20 555 0111 (24/7), or" goes on below
        return False
    if not (line[0].isupper() or line[0].isdigit()):
        return False
    if next_line is None or not next_line.strip():
        return True
    nxt = next_line.strip()
    return prev_blank or nxt[0].isupper() or bool(_LIST_MARKER.match(nxt)) or _is_table_row(nxt)


def _looks_like_header(cells: list[str]) -> bool:
    """A table's first row names its columns: short cells, no figures, no sentences. A
    chunk that starts in the middle of a table starts with a data row instead."""
    filled = [c for c in cells if c]
    return bool(filled) and all(len(_WORD.findall(c)) <= 6 and not any(ch.isdigit() for ch in c)
                                and not _CLOSING.search(c) for c in filled)


def _is_meta(line: str) -> bool:
    """A document's fact line of several ``Label: value`` fields ("Section FE-02 - Owner:
    Field Engineering - Last reviewed: 2026-01-27"): it names the document, it answers
    nothing but questions about the document itself."""
    return line.count(": ") >= 2 and ("\u00b7" in line or line.count(" - ") >= 2)


#: what a chunk's reading left open for the next chunk of the same document: the heading
#: and the column names of a table that goes on
_State = Tuple[Optional[str], Optional[Tuple[str, ...]]]


def _units(text: str, state: _State = (None, None)) -> tuple[list[tuple[str | None, str, str]], _State]:
    """``(heading, kind, text)`` per block of a chunk (kind ``para``, ``item``, ``row`` or
    ``meta``), and the state the next chunk of the document starts from."""
    lines = [ln.rstrip() for ln in _FIGURE_MARK.sub(" ", text).splitlines()]
    units: list[tuple[str | None, str, str]] = []
    heading, header_cells = state
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
            if (header_cells is None or len(cells) != len(header_cells)) and _looks_like_header(cells):
                header_cells = tuple(cells)  # the first row of a table names its columns
            else:
                names = header_cells if header_cells is not None and len(cells) == len(header_cells) else ("",) * len(cells)
                pairs = [f"{h}: {c.rstrip('.')}" if h else c.rstrip(".") for h, c in zip(names, cells) if c]
                units.append((heading, "row", "; ".join(pairs) + "."))
            prev_blank = False
            continue
        header_cells = None
        if _is_meta(line):
            flush()
            units.append((heading, "meta", " ".join(line.split())))
        elif _is_heading(line, prev_blank, nxt):
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
    return units, (heading, header_cells)


def segment(text: str) -> list[tuple[str | None, str]]:
    """``(heading, sentence)`` pairs of a passage: headings are context, list markers
    dropped, table rows kept whole, tiny fragments (< 3 words) skipped."""
    return [(heading, sentence) for heading, _, sentence in segment_kinds(text)]


def segment_kinds(text: str) -> list[tuple[str | None, str, str]]:
    """``(heading, kind, sentence)``: :func:`segment` with the kind of block each
    sentence came from (``para``, ``item`` of a list, ``row`` of a table)."""
    return [(heading, kind, sentence) for heading, kind, sentence, _ in _segment(text)[0]]


@lru_cache(maxsize=4096)
def _segment(text: str, state: _State = (None, None)) -> tuple[list[tuple[str | None, str, str, int]], _State]:
    """``(heading, kind, sentence, block number)`` of a chunk read from ``state``, and the
    state the next chunk of the same document starts from. Cached: every question reads
    the same few hundred chunks again (callers must not change the list)."""
    out: list[tuple[str | None, str, str, int]] = []
    units, end = _units(text, state)
    flat = " ".join(_FIGURE_MARK.sub(" ", text).split())
    for n, (heading, kind, body) in enumerate(units):
        parts = [body] if kind in ("row", "meta") else _SENTENCE_END.split(body)
        if n == len(units) - 1 and kind not in ("row", "meta") and not _ENDED.search(body) and flat.endswith(body[-40:]):
            parts = parts[:-1]  # the chunk was cut mid-sentence; the next chunk repeats it whole (overlap)
        out.extend((heading, kind, s.strip(), n) for s in parts if len(_WORD.findall(s)) >= 3)
    return out, end


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage (see :func:`segment`), without their headings."""
    return [s for _, s in segment(text)]


# --- scoring -------------------------------------------------------------------------
#: irregular forms a suffix stemmer cannot join to their base
_IRREGULAR = {"daily": "day", "fully": "full", "lost": "lose", "paid": "pay", "bought": "buy", "kept": "keep", "held": "hold", "given": "give",
              "sent": "send", "spent": "spend", "made": "make", "chosen": "choose", "written": "write", "won": "win",
              "left": "leave", "taught": "teach", "brought": "bring", "went": "go", "gone": "go", "met": "meet",
              "max": "maximum", "min": "minimum",
              # common irregular verbs and plurals a question and a policy may use in different forms
              "worn": "wear", "wore": "wear", "told": "tell", "said": "say", "knew": "know", "known": "know",
              "began": "begin", "begun": "begin", "broke": "break", "broken": "break", "chose": "choose",
              "wrote": "write", "spoke": "speak", "spoken": "speak", "forgot": "forget", "forgotten": "forget",
              "drove": "drive", "driven": "drive", "rode": "ride", "ridden": "ride", "eaten": "eat",
              "flew": "fly", "flown": "fly", "grew": "grow", "grown": "grow", "threw": "throw", "thrown": "throw",
              "drew": "draw", "drawn": "draw", "sold": "sell", "built": "build", "caught": "catch",
              "heard": "hear", "stood": "stand", "understood": "understand", "slept": "sleep", "sought": "seek",
              "thought": "think", "fought": "fight", "hidden": "hide", "froze": "freeze", "frozen": "freeze",
              "stole": "steal", "stolen": "steal", "shook": "shake", "shaken": "shake", "woke": "wake",
              "woken": "wake", "tore": "tear", "torn": "tear", "forgave": "forgive", "forgiven": "forgive",
              "sang": "sing", "sung": "sing", "drank": "drink", "drunk": "drink", "rang": "ring", "rung": "ring",
              "struck": "strike", "dealt": "deal", "bent": "bend", "swept": "sweep", "ran": "run",
              "children": "child", "women": "woman", "men": "man", "feet": "foot", "teeth": "tooth"}


def _stem(word: str) -> str:
    """A crude, consistent stemmer: booking/booked/books -> book, badge/badges -> badg, lost -> los."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ly") and len(word) > 5:  # yearly -> year, fully -> full, monthly -> month
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith(("ed", "es")) and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


#: "May" the month (capitalised inside a sentence, or next to a day number), not the verb
_MAY_MONTH = re.compile(r"(?<=[\w,] )May\b|\bMay(?= \d)")


def content_words(text: str) -> list[str]:
    """Lower-cased, crudely stemmed words that carry meaning (stopwords dropped), in order."""
    return list(_content_words(text))


@lru_cache(maxsize=50_000)
def _content_words(text: str) -> tuple[str, ...]:
    """Cached: the same context sentences are scored for question after question."""
    text = _MAY_MONTH.sub("maymonth", text)
    words = (_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS and (len(w) > 1 or w.isdigit()))
    return tuple(dict.fromkeys(words))


_FRAME_STEMS = frozenset(_stem(w) for w in FRAME_WORDS)


def topic_words(question: str) -> list[str]:
    """The question's content words without its frame words (see ``FRAME_WORDS``): what
    the context must mention for the question to be covered."""
    return [w for w in content_words(question) if w not in _FRAME_STEMS]


def question_type(question: str) -> str | None:
    """What the question asks for: duration, list, number, date, name, location, option (or None)."""
    q = " ".join(question.lower().split())
    for name, pattern in _QUESTION_TYPES:
        if pattern.search(q):
            return name
    return None


def _has_capitalised(words: list[str]) -> bool:
    return any(w[:1].isupper() for w in words[1:])


_DIGIT = re.compile(r"\d")
_NUMBER_SET, _DATE_SET = frozenset(_NUMBER_WORDS), frozenset(_MONTHS + _DAYS)
_ROLE_SET, _PLACE_SET = frozenset(_ROLE_WORDS), frozenset(_PLACE_WORDS)
#: a document or policy code ("SEC-310", "LEG-501", "ISO 27001"): digits that are no quantity
_CODE = re.compile(r"\b[A-Z][A-Za-z]*[- ]?\d+[A-Za-z0-9]*\b|\b[A-Z]+\d+\b")
_TIME_UNIT = r"(seconds?|minutes?|hours?|(working |calendar |business )?days?|weeks?|months?|years?|h|min)"
_DURATION = re.compile(r"\b(\d+([.,]\d+)?|" + "|".join(_NUMBER_WORDS[:16]) + r"|a|an)[\s-]+" + _TIME_UNIT + r"\b|"
                       r"\b(daily|weekly|monthly|yearly|annually|immediately|once|twice|every|at once|same day)\b|"
                       r"\b\d{1,2}[:.]\d{2}\b")
#: an enumeration in one sentence: "the kit: a power supply, two SFP+ modules and a console cable"
_ENUMERATION = re.compile(r":\s*[^,;]+([,;][^,;]+){2,}")


def carries_answer_type(sentence: str, qtype: str | None, kind: str = "para") -> bool:
    """Whether the sentence carries what a question of type ``qtype`` asks for. A
    document's fact line (kind ``meta``) never does: its dates and codes answer no
    question about the content."""
    if qtype is None or kind == "meta":
        return False
    low = sentence.lower()
    words = _WORD.findall(sentence)
    lows = set(_WORD.findall(low))
    has_digit = bool(_DIGIT.search(sentence))
    if qtype == "duration":
        return bool(_DURATION.search(_CODE.sub(" ", sentence).lower()))
    if qtype == "list":
        return kind in ("row", "item") or bool(_ENUMERATION.search(sentence))
    if qtype == "number":
        return bool(_DIGIT.search(_CODE.sub(" ", sentence))) or bool(lows & _NUMBER_SET)
    if qtype == "date":
        return bool(lows & _DATE_SET) or bool(re.search(r"\b\d{1,2}[:.]\d{2}\b|\b(19|20)\d{2}\b", low)) \
            or bool(re.search(r"\b\d+\s*(working\s+)?(days?|weeks?|months?|years?|hours?)\b", low))
    if qtype == "name":
        return _has_capitalised(words) or bool(lows & _ROLE_SET) or has_digit or "@" in sentence
    if qtype == "location":
        return _has_capitalised(words) or bool(lows & _PLACE_SET)
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
    in_sentence = set(_content_words(sentence))
    in_heading = set(_content_words(heading)) if heading else set()
    found = sum(1.0 if w in in_sentence else HEADING_WEIGHT if w in in_heading else 0.0 for w in question_words)
    return found / len(question_words)




#: weight of the heading's vector added to a sentence's before the cosine (see ``_dense_in_context``)
HEADING_MIX = 0.7


class SentenceScorer:
    """Scores context sentences for a question with the embedder (cosine; sentence
    vectors cached in an LRU) or, without one, by words and answer type alone."""

    def __init__(self, embedder: Embedder | None = None, cache_size: int = 20_000) -> None:
        self._embedder = embedder
        self._cache = _shared_cache(embedder, cache_size)

    @staticmethod
    def sentences(chunks: Sequence[Chunk]) -> list[Sentence]:
        """Every sentence of the passages, once (overlapping chunks repeat sentences)."""
        # a chunk that continues the previous chunk of its document (both in context) starts
        # under that one's last heading and inside its table, so rows keep their column names
        segmented: dict[int, list[tuple[str | None, str, str, int]]] = {}
        ends: dict[tuple[str, int], _State] = {}
        for i, chunk in sorted(enumerate(chunks), key=lambda p: (p[1].doc_id, p[1].chunk_index)):
            start = ends.get((chunk.doc_id, chunk.chunk_index - 1), (None, None))
            segmented[i], ends[(chunk.doc_id, chunk.chunk_index)] = _segment(chunk.text, start)
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
        question's content words by all ``chunks`` together (see the module docstring)."""
        if not chunks:
            return []
        words = topic_words(question)
        seen: set[str] = set()
        for chunk in chunks:
            seen |= set(content_words(chunk.text))
        coverage = (sum(1 for w in words if w in seen) / len(words) if words else 1.0) ** COVERAGE_POWER
        scored = self.score(question, self.sentences(chunks))
        best: dict[str, float] = {}
        for s in scored:
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
        asked = set(_content_words(question))
        headings = sorted({s.heading for s in sentences if s.heading and asked & set(_content_words(s.heading))})
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
