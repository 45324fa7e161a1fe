"""Query analysis for the lexical side: stop words and pseudo-relevance feedback.

Pure functions: words in, words (or a new order) out. Applied to the query only, so
the stores' full-text indexes (FTS5 ``porter unicode61``, Oracle Text) stay as they are
and a change never re-indexes a version. Why stop words: FTS5 and Oracle Text have no
stop list in the query, so the OR query of a long question also matches every "what",
"are" and "the". Why feedback (RM3-style): the best lexical hits of a long question
share its topic's vocabulary, which the question itself often lacks.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

from backend.common.config import LexicalSettings

_WORD = re.compile(r"\w+")

#: The Glasgow Information Retrieval Group's English stop list as scikit-learn ships it
#: (``ENGLISH_STOP_WORDS``, 318 words; BSD-licensed), copied so no import is needed at run time.
ENGLISH_STOP_WORDS = frozenset("""
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone anything
    anyway anywhere are around as at back be became because become becomes becoming been before
    beforehand behind being below beside besides between beyond bill both bottom but by call can
    cannot cant co con could couldnt cry de describe detail do done down due during each eg
    eight either eleven else elsewhere empty enough etc even ever every everyone everything
    everywhere except few fifteen fifty fill find fire first five for former formerly forty
    found four from front full further get give go had has hasnt have he hence her here
    hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in
    inc indeed interest into is it its itself keep last latter latterly least less ltd made many
    may me meanwhile might mill mine more moreover most mostly move much must my myself name
    namely neither never nevertheless next nine no nobody none noone nor not nothing now nowhere
    of off often on once one only onto or other others otherwise our ours ourselves out over own
    part per perhaps please put rather re same see seem seemed seeming seems serious several she
    should show side since sincere six sixty so some somehow someone something sometime
    sometimes somewhere still such system take ten than that the their them themselves then
    thence there thereafter thereby therefore therein thereupon these they thick thin third this
    those though three through throughout thru thus to together too top toward towards twelve
    twenty two un under until up upon us very via was we well were what whatever when whence
    whenever where whereafter whereas whereby wherein whereupon wherever whether which while
    whither who whoever whole whom whose why will with within without would yet you your yours
    yourself yourselves
""".split())


def words(text: str) -> list[str]:
    """Lowercase word tokens, as the stores tokenise a query."""
    return _WORD.findall(text.lower())


def stop_words(settings: LexicalSettings) -> frozenset[str]:
    base = ENGLISH_STOP_WORDS if settings.stop_words == "english" else frozenset()
    return base | frozenset(settings.extra_stop_words)


def query_words(text: str, settings: LexicalSettings) -> list[str]:
    """The query's words without stop words, first occurrence order, no repeats. A query made
    only of stop words keeps them all (an empty lexical query would find nothing)."""
    every = list(dict.fromkeys(words(text)))
    stop = stop_words(settings)
    kept = [w for w in every if w not in stop]
    return kept or every


def lexical_terms(text: str, settings: LexicalSettings) -> list[str]:
    """The words the lexical search is sent: ``query_words``, or with ``query_term_frequency``
    every occurrence of them in query order, so BM25 weighs a word the question repeats as
    often as it repeats it (the store's full-text query keeps repeats)."""
    kept = query_words(text, settings)
    if not settings.query_term_frequency:
        return kept
    wanted = set(kept)
    return [w for w in words(text) if w in wanted]


def expansion_terms(query: Sequence[str], feedback: Sequence[str], pool: Sequence[str], n: int,
                    stop: frozenset[str] = ENGLISH_STOP_WORDS) -> list[str]:
    """The ``n`` best new terms from the ``feedback`` texts (the first lexical hits): each text
    votes for its words by relative frequency, weighted by an idf estimated over the ``pool``
    of all lexical candidates, ``log((|pool| + 1) / df)``; stop words, numbers, words of fewer
    than 3 letters and the query's own words are never added. Ties keep first-seen order."""
    if not feedback or n <= 0:
        return []
    votes = [[w for w in words(text) if w not in stop and len(w) > 2 and not w.isdigit()] for text in feedback]
    candidates = {w for terms in votes for w in terms}
    df: Counter[str] = Counter()
    for text in pool:  # document frequencies of the candidate terms only
        df.update(candidates.intersection(words(text)))
    size = len(pool)
    own = set(query)
    weight: dict[str, float] = {}
    for terms in votes:
        if not terms:
            continue
        for term, count in Counter(terms).items():
            idf = math.log((size + 1) / max(df.get(term, 0), 1))
            weight[term] = weight.get(term, 0.0) + count / len(terms) * idf / len(feedback)
    ranked = sorted(weight, key=lambda t: -weight[t])
    return [t for t in ranked if t not in own][:n]


def _minmax(pairs: Sequence[tuple[str, float]]) -> dict[str, float]:
    if not pairs:
        return {}
    low = min(s for _, s in pairs)
    high = max(s for _, s in pairs)
    return {c: (s - low) / (high - low) if high > low else 1.0 for c, s in pairs}


def combine_feedback(first: Sequence[tuple[str, float]], expanded: Sequence[tuple[str, float]],
                     weight: float) -> list[tuple[str, float]]:
    """``(1 - weight) x first + weight x expanded`` over the union of both result lists, each
    side min-max normalised over its own candidates (a side that missed an id gives it 0).
    Best first; equal scores keep first appearance (first list, then the expanded one)."""
    a, b = _minmax(first), _minmax(expanded)
    order = list(dict.fromkeys([c for c, _ in first] + [c for c, _ in expanded]))
    scores = {c: (1 - weight) * a.get(c, 0.0) + weight * b.get(c, 0.0) for c in order}
    position = {c: i for i, c in enumerate(order)}
    return sorted(scores.items(), key=lambda item: (-item[1], position[item[0]]))
