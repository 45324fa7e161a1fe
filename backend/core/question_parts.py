"""The questions a question asks (pure): "Within how many days are claims submitted, and how often is
the generator tested?" asks two.

The answer reader judges one (question, sentence) pair at a time, and no single sentence answers
both halves of a two-part question, so each half is read on its own and a sentence scores what it
scores for the half it answers best. Only a coordination of two questions is split: ``and`` (or a
comma, or ``also``) followed by a question word or an inverted auxiliary. "Pens and paper" and
"full-time and part-time staff" stay one question.
"""

from __future__ import annotations

import re

_STARTS = ("how|what|which|who|whom|whose|when|where|why|is|are|was|were|do|does|did|can|could|may|"
           "must|should|will|would|has|have")
_SPLIT = re.compile(rf"\s*(?:[,;]\s*(?:and\s+(?:also\s+)?)?|\s+and\s+(?:also\s+)?)(?=(?:{_STARTS})\b)", re.IGNORECASE)
#: a part shorter than this many words is no question of its own ("and how?")
_MIN_WORDS = 3


def question_parts(question: str) -> tuple[str, ...]:
    """The parts of a question that coordinates two or more questions, each ending in ``?``; the
    question alone (one part) otherwise."""
    text = " ".join(question.split())
    pieces = [p.strip(" ,;?") for p in _SPLIT.split(text)]
    if len(pieces) < 2 or any(len(p.split()) < _MIN_WORDS for p in pieces):
        return (question,)
    return tuple(p[:1].upper() + p[1:] + "?" for p in pieces)
