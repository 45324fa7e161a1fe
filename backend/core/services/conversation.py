"""Follow-up questions made standalone, and the pieces of a conversation the chat service keeps.

A follow-up such as "and for part-time staff?" means nothing to retrieval on its own.
With a configured LLM the LLM rewrites it from the conversation (``condense_with_llm``);
without one, ``condense_offline`` applies this documented rule to the previous
(already standalone) question:

1. **Connective follow-up**: the question starts with "and", "but", "also", "or",
   "what about", "how about" or "what if" -> the previous question without its final
   punctuation, a comma, and the rest of the follow-up:
   "How many days of annual leave do employees get?" + "and for part-time staff?"
   -> "How many days of annual leave do employees get, for part-time staff?"
2. **Elliptical follow-up**: at most ``MAX_ELLIPTICAL_TOKENS`` words and a pronoun that
   points back ("it", "they", "that", "there", ...) -> the follow-up with the previous
   question's topic words in parentheses:
   "Who approves it?" after "How do I request annual leave?"
   -> "Who approves it (request annual leave)?"
3. Anything else is already standalone and is left as it is.

Conversations are stored under ``conversation_key`` (a SHA-256 of the client's id),
so no client-chosen text becomes a stored key.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal, Sequence

import structlog

from backend.common.errors import ProviderError
from backend.core.ports import ChatModel
from backend.core.types import ChatRequest

log = structlog.get_logger(__name__)

CONNECTIVE = re.compile(r"^\s*(?:and\s+what\s+about|and\s+how\s+about|what\s+about|how\s+about|what\s+if|and|but|also|or)"
                        r"\b[\s,]*", re.IGNORECASE)
BACK_REFERENCE = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|there|he|she|his|her|one|ones|same)\b",
                            re.IGNORECASE)
MAX_ELLIPTICAL_TOKENS = 8
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


@dataclass(frozen=True)
class Condensed:
    """The question retrieval will use, and how it came to be."""

    query: str
    by: CondensedBy
    rule: str | None = None


def conversation_key(conversation_id: str) -> str:
    """The stored key of a client's conversation id."""
    return hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def topic_words(question: str) -> str:
    """The previous question's words that carry its topic, in order, in their own spelling."""
    seen: dict[str, str] = {}
    for word in _tokens(question):
        if word.lower() not in _FUNCTION_WORDS and not word.isdigit():
            seen.setdefault(word.lower(), word)
    return " ".join(seen.values())


def condense_offline(question: str, previous: str | None) -> Condensed:
    """The offline rule of the module docstring; pure."""
    question = " ".join(question.split())
    if not previous or not previous.strip():
        return Condensed(question, "none")
    previous = " ".join(previous.split())
    lead = CONNECTIVE.match(question)
    if lead and lead.end() < len(question):
        rest = question[lead.end():].rstrip(" ?!.")
        if rest:
            return Condensed(f"{previous.rstrip(' ?!.')}, {rest}?", "rule", "connective")
    if len(_tokens(question)) <= MAX_ELLIPTICAL_TOKENS and BACK_REFERENCE.search(question):
        topic = topic_words(previous)
        if topic:
            end = question[-1] if question[-1] in "?!." else "?"
            return Condensed(f"{question.rstrip(' ?!.')} ({topic}){end}", "rule", "elliptical")
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


def condense(question: str, history: Sequence[str], llm: ChatModel | None) -> Condensed:
    """A standalone question from the conversation's previous standalone questions."""
    if not history:
        return Condensed(" ".join(question.split()), "none")
    if llm is not None:
        return condense_with_llm(llm, question, history)
    return condense_offline(question, history[-1])


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
