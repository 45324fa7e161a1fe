"""An offline answerer that quotes the most relevant sentences of the context.

It lets the default profile run with no LLM at all. Sentences of the numbered
context passages are ranked by cosine similarity to the question with the real
embedder (or by word overlap when none is given), the best ``max_sentences`` are
kept in passage order, and each carries the marker of its passage (``[1]`` is the
first passage, which is also the first citation). Sentence vectors are cached, so
a chunk seen before costs nothing to rank again.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np

from backend.core.ports import Embedder
from backend.core.types import ChatRequest

NO_ANSWER = "The knowledge base has no passage that answers this question."
PARTIAL_NOTE = "The knowledge base only partly covers this question; what it says:"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"\w+")
_FIGURE_MARK = re.compile(r"\[FIGURE:[^\]]*\]")
_STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it may of on or the to what when where which who why "
    "with you your".split()
)


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage; figure placeholders are dropped, tiny fragments skipped."""
    flat = " ".join(_FIGURE_MARK.sub(" ", text).split())
    return [s.strip() for s in _SENTENCE_END.split(flat) if len(_WORD.findall(s)) >= 3]


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


class ExtractiveChatModel:
    """``ChatModel`` that composes answers from context sentences, with citation markers."""

    name = "extractive"

    def __init__(self, embedder: Embedder | None = None, max_sentences: int = 4, cache_size: int = 20_000) -> None:
        self._embedder = embedder
        self._max_sentences = max_sentences
        self._cache = _VectorCache(cache_size)

    def generate(self, request: ChatRequest) -> str:
        if request.mode == "fallback" or not request.context:
            return NO_ANSWER
        sentences = [(i, s) for i, chunk in enumerate(request.context, start=1) for s in split_sentences(chunk.text)]
        if not sentences:
            return ""
        scores = self._scores(request.question, [s for _, s in sentences])
        best = sorted(np.argsort(-scores, kind="stable")[: self._max_sentences])
        body = " ".join(f"{sentences[j][1]} [{sentences[j][0]}]" for j in best)
        return f"{PARTIAL_NOTE} {body}" if request.mode == "hybrid" else body

    def _scores(self, question: str, sentences: list[str]) -> np.ndarray:
        if self._embedder is None:
            return np.array([_overlap(question, s) for s in sentences], dtype=np.float32)
        q = self._vectors([question], query=True)[0]
        return self._vectors(sentences, query=False) @ q

    def _vectors(self, texts: list[str], *, query: bool) -> np.ndarray:
        if self._embedder is None:  # pragma: no cover - guarded by _scores
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


def _overlap(question: str, sentence: str) -> float:
    q = {w for w in _WORD.findall(question.lower()) if w not in _STOPWORDS}
    s = {w for w in _WORD.findall(sentence.lower()) if w not in _STOPWORDS}
    return len(q & s) / (len(q) or 1)


class DisabledChatModel:
    """``ChatModel`` for provider ``none``: always blank, so the chat service answers
    with its fixed honest message instead of an LLM."""

    name = "none"

    def generate(self, request: ChatRequest) -> str:
        return ""
