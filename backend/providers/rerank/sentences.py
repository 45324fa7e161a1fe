"""``Reranker`` with no extra model: the embedding model re-scores each candidate.

A chunk's vector averages everything in it, so one sentence that answers the query
is diluted by the rest. Here each candidate scores
``(1 - w) x cos(query, chunk) + w x max over its sentences of cos(query, sentence)``
(``w`` = ``retrieval.rerank.sentence_weight``). It costs one embedding of each
candidate's sentences per search; vectors are cached by text across searches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np

from backend.core.sentence_segments import split_sentences
from backend.core.ports import Embedder

_MIN_SENTENCE_CHARS = 20


class SentenceReranker:
    def __init__(self, embedder: Embedder, *, sentence_weight: float = 0.5, cache_size: int = 50_000) -> None:
        self._embedder = embedder
        self._weight = sentence_weight
        self.name = f"sentences:{embedder.model_id}"
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._capacity = cache_size
        self._lock = threading.Lock()

    def _vectors(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            fresh = np.asarray(self._embedder.embed_documents(todo), dtype=np.float32)
            fresh /= np.maximum(np.linalg.norm(fresh, axis=1, keepdims=True), 1e-12)
            with self._lock:
                for text, vec in zip(todo, fresh):
                    self._cache[text] = vec
                    known[text] = vec
                while len(self._cache) > self._capacity:
                    self._cache.popitem(last=False)
        return np.stack([known[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        q = np.asarray(self._embedder.embed_queries([query])[0], dtype=np.float32)
        q /= max(float(np.linalg.norm(q)), 1e-12)
        pieces = [[s for s in split_sentences(t) if len(s) >= _MIN_SENTENCE_CHARS] or [t] for t in texts]
        flat = list(texts) + [s for group in pieces for s in group]
        sims = self._vectors(flat) @ q
        whole, rest = sims[: len(texts)], sims[len(texts):]
        out, start = [], 0
        for i, group in enumerate(pieces):
            best = float(rest[start:start + len(group)].max())
            start += len(group)
            out.append((1 - self._weight) * float(whole[i]) + self._weight * best)
        return out
