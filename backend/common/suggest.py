"""``did you mean``: the nearest known names to a misspelt one, for error messages.

One helper for every place that refuses a name it does not know (a search strategy, a
config key, a domain), so the suggestions read the same everywhere.
"""

from __future__ import annotations

import difflib
from typing import Iterable


def close_names(value: str, known: Iterable[str], *, limit: int = 3) -> list[str]:
    """Known names close to ``value`` (case-insensitive), best first."""
    names = list(known)
    by_lower = {name.lower(): name for name in names}
    matches = difflib.get_close_matches(value.lower(), list(by_lower), n=limit, cutoff=0.6)
    return [by_lower[m] for m in matches]


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``) to append to a message, else ``""``."""
    names = close_names(value, known)
    if not names:
        return ""
    return "; did you mean " + " or ".join(repr(n) for n in names) + "?"
