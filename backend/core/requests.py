"""The checks a request gets once, where it enters: strategy names, ``top_k`` and text length.

A request is checked at its edge (the HTTP body or query models, a CLI command) into a
typed object, and the services trust that object: ``SearchRequest`` checks what needs no
config in its constructor (``top_k`` at least 1, a known strategy), and ``RequestLimits``
holds the configured limits (``retrieval.max_top_k``, ``server.max_question_chars``) the
edge checks against. Each kind of error has one class and so one status
(``common/errors.py``): a value outside its range or its choices is ``FieldOutOfRange``
(422), text over its length ``RequestTooLarge`` (413).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from backend.common.config import SearchStrategy, Settings
from backend.common.errors import FieldOutOfRange, RequestTooLarge
from backend.common.suggest import did_you_mean

#: the search strategies, in the order the docs list them (``retrieval.strategy``'s choices)
STRATEGIES: tuple[str, ...] = get_args(SearchStrategy)

#: names people reach for that are not strategies, and the strategy they mean
_STRATEGY_SYNONYMS = {"hybrid": "fusion", "rrf": "fusion", "bm25": "lexical", "keyword": "lexical",
                      "fulltext": "lexical", "vector": "dense", "semantic": "dense", "hyde_dense": "hyde",
                      "summaries": "hierarchical", "tree": "hierarchical"}


def strategy_hint(name: str) -> str:
    """What to append to a refusal of strategy ``name``: the strategy meant, when one is close."""
    meant = _STRATEGY_SYNONYMS.get(name.strip().lower())
    if meant is not None:
        return f"; did you mean {meant!r}?"
    return did_you_mean(name, STRATEGIES)


def check_strategy(name: str) -> str:
    """``name`` if it is a search strategy, else ``FieldOutOfRange`` listing them (and the one meant)."""
    if name not in STRATEGIES:
        raise FieldOutOfRange(f"strategy must be one of {', '.join(STRATEGIES)}, got {name!r}{strategy_hint(name)}",
                              field="strategy", allowed=list(STRATEGIES))
    return name


def check_min_top_k(top_k: int) -> int:
    if top_k < 1:
        raise FieldOutOfRange(f"top_k must be at least 1, got {top_k}", field="top_k", limit=1)
    return top_k


@dataclass(frozen=True)
class RequestLimits:
    """The configured limits of a request, checked once where the request enters."""

    max_question_chars: int
    max_top_k: int

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestLimits:
        return cls(max_question_chars=settings.server.max_question_chars, max_top_k=settings.retrieval.max_top_k)

    def top_k(self, top_k: int | None) -> int | None:
        """``top_k`` if it is None (the configured default applies) or within 1..``max_top_k``."""
        if top_k is not None and not 1 <= top_k <= self.max_top_k:
            raise FieldOutOfRange(f"top_k must be between 1 and {self.max_top_k}, got {top_k}",
                                  field="top_k", limit=self.max_top_k)
        return top_k

    def text(self, value: str | None, field: str = "question") -> str | None:
        """``value`` unless it is longer than ``server.max_question_chars`` (413)."""
        if value is not None and len(value) > self.max_question_chars:
            raise RequestTooLarge(f"{field} has {len(value)} characters; server.max_question_chars is "
                                  f"{self.max_question_chars}", field=field, limit=self.max_question_chars)
        return value
