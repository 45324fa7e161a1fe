"""Follow-up questions made standalone, and the pieces of a conversation the chat service keeps.

A follow-up such as "and for part-time staff?" means nothing to retrieval on its own.
With a configured LLM the LLM rewrites it from the conversation (``condense_with_llm``);
without one, ``condense_offline`` applies this documented rule to the previous
(already standalone) question:

1. **Connective follow-up**: the question starts with "and", "but", "also", "or",
   "what about", "how about", "same for" or "what if".

   a. When the rest is a new question ("and who approves it?") it is read on its own,
      with rule 2.
   b. Otherwise the rest is a new *constraint*, and it replaces the phrase of the
      previous question it stands for (:func:`substitute`): "How many days of annual
      leave do full-time employees get?" + "and for part-time staff?" -> "How many days
      of annual leave do part-time staff get?". The phrase replaced is the run of one to
      three content words of the previous question whose meaning is closest to the new
      constraint (cosine of the local model's vectors, at least ``SUBSTITUTE_MIN``).
      A singular "a"/"an" before the replaced phrase agrees with the new one ("when an
      employee resigns" + "and for managers?" -> "when managers resigns", not "an managers").
      A constraint naming a colour or a steady/blinking signal replaces the phrase of the previous
      question made of such values, with or without a model ("and blinking red?" after "What does a
      steady amber status LED mean?" -> "What does a blinking red status LED mean?").
   c. With no such phrase (or no model) the rest is asked about the previous question's topic,
      less the phrase the rest stands for when one is at least ``ATTRIBUTE_MIN`` close (kept,
      it would fetch the first answer's sentence again): "and the max altitude?" after "What is
      the operating temperature range of the appliance?" -> "the max altitude (operating appliance)?".
2. **Elliptical follow-up**: at most ``MAX_ELLIPTICAL_TOKENS`` words and either a pronoun that
   points back ("it", "they", "that", "there", ...) or no subject of its own (a question with
   at most ``MAX_BARE_CONTENT_WORDS`` content words: "who do I tell?") -> the follow-up with
   the previous question's topic words in parentheses:
   "Who approves it?" after "How do I request annual leave?"
   -> "Who approves it (request annual leave)?"
3. Anything else is already standalone and is left as it is.

A connective follow-up's new constraint is kept with the rewrite (``Condensed.constraint``). The
answer must meet it (``constraint_met`` at least ``SUBSTITUTE_MIN``, the bar the rewrite itself
used): an answer whose judged sentence does not is the previous question's answer again, so the
chat service falls back instead (``answer_mode.downgrade_on_unmet_constraint``; issue 42).

Conversations are stored under ``conversation_key`` (a SHA-256 of the client's id),
so no client-chosen text becomes a stored key.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import structlog

from backend.common.errors import ProviderError
from backend.core.ports import ChatModel
from backend.core.types import ChatRequest

log = structlog.get_logger(__name__)

CONNECTIVE = re.compile(r"^\s*(?:and\s+what\s+about|and\s+how\s+about|what\s+about|how\s+about|what\s+if|"
                        r"(?:and\s+)?(?:the\s+)?same\s+for|and|but|also|or)\b[\s,]*", re.IGNORECASE)
#: the rest of a connective follow-up that asks a question of its own ("and who approves it?")
NEW_QUESTION = re.compile(r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
                          r"may|must|should|will|would|has|have)\b", re.IGNORECASE)
#: words a constraint phrase starts with that the replaced phrase keeps from the previous question
_LEAD_PREPOSITIONS = re.compile(r"^(?:for|in|at|on|with|by|to|from|about|of|during|under|over|the|a|an)\s+",
                                re.IGNORECASE)
#: the least cosine between the new constraint and the phrase it replaces
SUBSTITUTE_MIN = 0.45
MAX_SPAN_WORDS = 3
#: the least cosine for a phrase to count as the attribute a new one replaces (dropped from the topic)
ATTRIBUTE_MIN = 0.3
#: a phrase this much less close than the closest still wins when it is longer
SPAN_SLACK = 0.05
#: a constraint is a short phrase ("part-time staff"); a longer rest ("the max weight I can lift alone") is appended
MAX_CONSTRAINT_WORDS = 4
_PERSONAL = re.compile(r"\b(i|we|you|my|our|your)\b", re.IGNORECASE)
BACK_REFERENCE = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|there|he|she|his|her|one|ones|same)\b",
                            re.IGNORECASE)
MAX_ELLIPTICAL_TOKENS = 12
#: a question with no more content words than this, and no pronoun, still points back ("who do I tell?")
MAX_BARE_CONTENT_WORDS = 1
_PRONOUNS = frozenset("me us him them myself someone anyone anything something".split())
#: previous questions the LLM sees when it rewrites a follow-up
LLM_HISTORY_TURNS = 4
_WORD = re.compile(r"[\w'-]+")
_FUNCTION_WORDS = frozenset(
    "a an and are as at be been by can could do does did for from had has have how i if in into is it its may me "
    "might must my no not of on or our shall should so than that the their them then there these they this those "
    "to up was we were what when where which while who whom whose why will with would you your get gets got "
    "about much many long often any some also other".split())
CONDENSE_PROMPT = (
    "Rewrite the user's last question as one standalone question that can be understood without the "
    "conversation. Keep its meaning and language, do not answer it, and reply with the question only."
)

CondensedBy = Literal["none", "rule", "llm"]
#: cosine of a phrase with each of several texts (the local model's, see ``SentenceScorer.phrase_similarities``)
Similarity = Callable[[str, Sequence[str]], Sequence[float]]


@dataclass(frozen=True)
class Condensed:
    """The question retrieval will use, and how it came to be."""

    query: str
    by: CondensedBy
    rule: str | None = None
    #: the new constraint a connective follow-up put into the previous question ("part-time staff"):
    #: the answer must meet it (``constraint_met``), or it would answer the previous question
    constraint: str | None = None


def conversation_key(conversation_id: str) -> str:
    """The stored key of a client's conversation id."""
    return hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def topic_words(question: str) -> str:
    """The previous question's words that carry its topic, in order, in their own spelling. A
    number is kept where it names the word before it ("depot 19", "tier 3", "week 29": without it
    the follow-up asks about every depot), dropped after a function word ("is 5 enough?").
    (Digits alone were dropped since the first offline rule: "depot 19" became "depot".)"""
    seen: dict[str, str] = {}
    prev, fresh = "", False  # the content word just before (as written), and whether it was new
    for word in _tokens(question):
        key = word.lower()
        if word.isdigit():
            if prev:
                if fresh:  # "depot 19" stands in the place "depot" took
                    seen.pop(prev.lower())
                seen.setdefault(f"{prev.lower()} {key}", f"{prev} {word}")
            prev, fresh = "", False
        elif key in _FUNCTION_WORDS:
            prev, fresh = "", False
        else:
            prev, fresh = word, key not in seen
            seen.setdefault(key, word)
    return " ".join(seen.values())


def spans(question: str) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` of every run of one to ``MAX_SPAN_WORDS`` consecutive content
    words of ``question`` (what a substitution may replace)."""
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(question)]
    out = []
    for i in range(len(words)):
        for j in range(i, min(i + MAX_SPAN_WORDS, len(words))):
            run = words[i:j + 1]
            if any(w.lower() in _FUNCTION_WORDS for _, _, w in run):
                break
            out.append((run[0][0], run[-1][1], question[run[0][0]:run[-1][1]]))
    return out


def _constraint_phrase(constraint: str) -> str:
    phrase = _LEAD_PREPOSITIONS.sub("", constraint.strip()).strip()
    while _LEAD_PREPOSITIONS.match(phrase):
        phrase = _LEAD_PREPOSITIONS.sub("", phrase).strip()
    return re.sub(r"(?<=\w) ones?$", "", phrase, flags=re.IGNORECASE)  # "the green one" stands for "green"


def closest_span(previous: str, constraint: str, similarity: Similarity | None) -> tuple[int, int, float] | None:
    """``(start, end, cosine)`` of the phrase of ``previous`` closest in meaning to ``constraint``
    (of those nearly as close, the longest: "and the helmet?" stands for "safety shoes", not
    "safety"; a phrase of colours or signals for a constraint naming one, at cosine 1.0); None for no
    model, no content word, or a rest too long or personal to be a constraint."""
    phrase = _constraint_phrase(constraint)
    candidates = spans(previous)
    if not phrase or not candidates or len(_tokens(phrase)) > MAX_CONSTRAINT_WORDS or _PERSONAL.search(phrase):
        return None
    values = _attribute_spans(candidates, phrase)
    if values:  # "and blinking red?" after "What does a steady amber LED mean?" replaces "steady amber"
        start, end, _ = max(values, key=lambda c: c[1] - c[0])
        return start, end, 1.0
    if similarity is None:
        return None
    scores = similarity(phrase, [text for _, _, text in candidates])
    top = max(scores)
    best = max((i for i in range(len(candidates)) if scores[i] >= top - SPAN_SLACK),
               key=lambda i: (candidates[i][1] - candidates[i][0], scores[i]))
    return candidates[best][0], candidates[best][1], float(top)


def _attribute_spans(candidates: list[tuple[int, int, str]], phrase: str) -> list[tuple[int, int, str]]:
    """The spans made only of values of the attributes ``phrase`` names a value of (colours, steady
    or blinking: ``answerability.attribute_values``)."""
    from backend.core.question_terms import attribute_values

    attributes = {v.split(":")[0] for v in attribute_values(phrase.lower())}
    if not attributes:
        return []
    out = []
    for start, end, text in candidates:
        words = _tokens(text.lower())
        named = [attribute_values(w) for w in words]
        if all(named) and {v.split(":")[0] for n in named for v in n} <= attributes:
            out.append((start, end, text))
    return out


def substitute(previous: str, constraint: str, similarity: Similarity | None) -> str | None:
    """``previous`` with the phrase closest in meaning to ``constraint`` replaced by it,
    or None when no phrase reaches ``SUBSTITUTE_MIN`` (or there is no model)."""
    found = closest_span(previous, constraint, similarity)
    if found is None or found[2] < SUBSTITUTE_MIN:
        return None
    start, end, _ = found
    phrase = _constraint_phrase(constraint)
    return _agree_article(previous[:start], phrase) + phrase + previous[end:]


_ARTICLE_BEFORE = re.compile(r"\b(a|an)\s+$", re.IGNORECASE)


def _agree_article(head: str, phrase: str) -> str:
    """``head`` (the text before a replaced phrase) with its trailing "a"/"an" made to fit
    ``phrase``: dropped before a plural ("an employee" -> "managers", not "an managers"),
    "a"/"an" by the phrase's first letter otherwise ("a vendor" -> "an auditor")."""
    match = _ARTICLE_BEFORE.search(head)
    if not match:
        return head
    last = _tokens(phrase)[-1] if _tokens(phrase) else phrase
    if last.lower().endswith("s") and not last.lower().endswith("ss") and not last.isupper():
        return head[:match.start()]
    article = "an" if phrase[:1].lower() in "aeiou" else "a"
    if match.group(1)[0].isupper():
        article = article.capitalize()
    return head[:match.start()] + article + " "


def without_attribute(previous: str, constraint: str, similarity: Similarity | None) -> str:
    """``previous`` less the phrase ``constraint`` stands for, when one is close enough
    (``ATTRIBUTE_MIN``): "and the max altitude?" after "What is the operating temperature
    range of the appliance?" is about the appliance, and keeping "operating temperature range"
    would fetch the first answer's sentence again. Keeps at least one content word."""
    found = closest_span(previous, constraint, similarity)
    if found is None or found[2] < ATTRIBUTE_MIN:
        return previous
    rest = previous[:found[0]] + previous[found[1]:]
    return rest if topic_words(rest) else previous


_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?$")


def constraint_met(constraint: str, sentence: str, similarity: Similarity | None) -> float | None:
    """How well ``sentence`` meets a follow-up's new ``constraint``, with the semantic matching
    the rewrite used (``closest_span``'s phrase cosines): 1.0 when it holds every content word of
    the constraint, 0.0 when it lacks one of its numbers (a number is never a paraphrase: "tier 3"
    is not met by "Tier 1"), else the best cosine of the constraint with a phrase of the sentence.
    None when it cannot be judged (no model, no content word)."""
    words = [w.lower() for w in _tokens(_constraint_phrase(constraint)) if w.lower() not in _FUNCTION_WORDS]
    if not words:
        return None
    have = {w.lower() for w in _tokens(sentence)}
    if all(w in have for w in words):
        return 1.0
    if any(_NUMBER.match(w) and w not in have for w in words):
        return 0.0
    phrases = [text for _, _, text in spans(sentence)]
    if similarity is None or not phrases:
        return None
    return float(max(similarity(_constraint_phrase(constraint), phrases)))


def is_bare(question: str) -> bool:
    """A question with at most ``MAX_BARE_CONTENT_WORDS`` content words of its own ("who do I
    tell?", "how do I book?") names no subject, so it is about the previous one; a question
    that names its own ("Where is the Lisbon office?") is a new topic and is left alone."""
    words = [w for w in _tokens(question.replace("’", "'"))
             if re.sub(r"'(?:s|re|ll|d|ve|t)$", "", w.lower()) not in _FUNCTION_WORDS | _PRONOUNS]
    return bool(NEW_QUESTION.match(question.strip())) and len(words) <= MAX_BARE_CONTENT_WORDS


def condense_offline(question: str, previous: str | None, similarity: Similarity | None = None) -> Condensed:
    """The offline rule of the module docstring; pure but for ``similarity`` (phrase
    cosines from the local model, cached)."""
    question = " ".join(question.split())
    if not previous or not previous.strip():
        return Condensed(question, "none")
    previous = " ".join(previous.split())
    lead = CONNECTIVE.match(question)
    if lead and lead.end() < len(question):
        rest = question[lead.end():].rstrip(" ?!.")
        if rest and NEW_QUESTION.match(rest):
            question = rest[0].upper() + rest[1:] + "?"
        elif rest:
            replaced = substitute(previous, rest, similarity)
            constraint = _constraint_phrase(rest) or None
            if replaced is not None:
                return Condensed(replaced, "rule", "substitution", constraint)
            topic = topic_words(without_attribute(previous, rest, similarity))
            return Condensed(f"{rest} ({topic})?" if topic else f"{rest}?", "rule", "connective", constraint)
    if len(_tokens(question)) <= MAX_ELLIPTICAL_TOKENS and (BACK_REFERENCE.search(question) or is_bare(question)):
        topic = topic_words(previous)
        if topic:
            end = question[-1] if question[-1] in "?!." else "?"
            return Condensed(f"{question.rstrip(' ?!.')} ({topic}){end}", "rule", "elliptical")
    if lead and NEW_QUESTION.match(question):  # "and who approves the request?" read on its own
        return Condensed(question, "rule", "connective")
    return Condensed(question, "none")


def condense_with_llm(model: ChatModel, question: str, history: Sequence[str]) -> Condensed:
    """The LLM's standalone rewrite of ``question`` given the previous questions (oldest first);
    the offline rule when the LLM fails or answers blank."""
    recent = list(history)[-LLM_HISTORY_TURNS:]
    conversation = "\n".join(f"User: {q}" for q in recent)
    prompt = f"Conversation so far:\n{conversation}\n\nLast question: {question}\n\nStandalone question:"
    try:
        text = model.generate(ChatRequest("fallback", CONDENSE_PROMPT, prompt, ()))
    except ProviderError as exc:
        log.warning("chat.condense_failed", provider=model.name, error=type(exc).__name__)
        return condense_offline(question, recent[-1] if recent else None)
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return condense_offline(question, recent[-1] if recent else None)
    return Condensed(" ".join(lines[0].split()), "llm")


def condense(question: str, history: Sequence[str], llm: ChatModel | None,
             similarity: Similarity | None = None) -> Condensed:
    """A standalone question from the conversation's previous standalone questions."""
    if not history:
        return Condensed(" ".join(question.split()), "none")
    if llm is not None:
        return condense_with_llm(llm, question, history)
    return condense_offline(question, history[-1], similarity)


_PIECE = re.compile(r"(?<=[.!?\]])\s+(?!\[)")


def stream_pieces(text: str) -> list[str]:
    """An answer cut after each sentence (after its ``[n]`` marker when it has one), spaces kept,
    so the pieces join back into exactly ``text``."""
    pieces: list[str] = []
    start = 0
    for match in _PIECE.finditer(text):
        pieces.append(text[start:match.end()])
        start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces
