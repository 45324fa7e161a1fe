"""Adding one record's counts to another's, field by field: the ingest report takes the counts
of its stages (enrichment, embedding, a prepare-ahead report) and an engine sums its batchers'."""

from __future__ import annotations

from typing import Iterable, Mapping


def add_counts(into: object, source: object, names: Mapping[str, str] | Iterable[str]) -> None:
    """``into.<a> += source.<b>`` for each pair of ``names`` (``{a: b}``), or for each field named
    alike on both (an iterable of names). Lists are extended in place, as ``+=`` does."""
    pairs = names.items() if isinstance(names, Mapping) else ((name, name) for name in names)
    for mine, theirs in pairs:
        total = getattr(into, mine)
        total += getattr(source, theirs)
        setattr(into, mine, total)
